//===- Run/Value.cpp - Runtime values for exir-run ------------------------===//
//
// Tensor sizes, strides and the runtime's resize_tensor rule; Value accessors
// that name both the expected and the actual kind when they do not match.
//
//===----------------------------------------------------------------------===//

#include "Run/Value.h"

#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include <numeric>

namespace exir::run {

namespace {
std::string sizesText(const std::vector<int64_t> &sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

std::vector<uint8_t> contiguousOrder(size_t rank) {
  std::vector<uint8_t> order(rank);
  std::iota(order.begin(), order.end(), uint8_t(0));
  return order;
}
} // namespace

int64_t Tensor::numel() const {
  std::optional<int64_t> n = checkedProduct(sizes);
  if (!n) throw Error("a tensor of sizes " + sizesText(sizes) + " has more elements than fit in 64 bits");
  return *n;
}

std::vector<int64_t> Tensor::strides() const {
  std::vector<int64_t> result(sizes.size(), 1);
  if (dimOrder.size() != sizes.size()) { // no dim order recorded: contiguous
    for (int64_t i = dim() - 2; i >= 0; --i) result[i] = result[i + 1] * std::max<int64_t>(sizes[i + 1], 1);
    return result;
  }
  // The last dim in dim order is the innermost; walk outwards.
  int64_t stride = 1;
  for (size_t k = dimOrder.size(); k-- > 0;) {
    result[dimOrder[k]] = stride;
    stride *= std::max<int64_t>(sizes[dimOrder[k]], 1);
  }
  return result;
}

bool Tensor::isContiguous() const {
  for (size_t i = 0; i < dimOrder.size(); ++i)
    if (dimOrder[i] != i) return false;
  return true;
}

void Tensor::resize(const std::vector<int64_t> &newSizes) {
  for (int64_t s : newSizes)
    if (s < 0) throw Error("cannot resize a tensor to negative size " + sizesText(newSizes));
  if (newSizes.size() != sizes.size() || dimOrder.size() != newSizes.size())
    dimOrder = contiguousOrder(newSizes.size());
  size_t needed = elementSize(dtype);
  for (int64_t s : newSizes) needed *= size_t(s);
  if (needed > capacity) {
    if (!growable)
      throw Error("cannot resize tensor from " + sizesText(sizes) + " to " + sizesText(newSizes) +
                  ": needs " + std::to_string(needed) + " bytes, its planned capacity is " +
                  std::to_string(capacity));
    // Keep the old bytes: a resize that grows an owned tensor preserves its prefix.
    auto bytes = std::make_shared<std::vector<uint8_t>>(needed, 0);
    if (data && capacity) std::copy(data, data + capacity, bytes->begin());
    owned = std::move(bytes);
    data = owned->data();
    capacity = needed;
  }
  sizes = newSizes;
}

Tensor Tensor::make(ScalarType dtype, std::vector<int64_t> sizes) {
  Tensor t;
  t.dtype = dtype;
  t.dimOrder = contiguousOrder(sizes.size());
  t.sizes = std::move(sizes);
  t.owned = std::make_shared<std::vector<uint8_t>>(t.nbytes(), 0);
  t.data = t.owned->data();
  t.capacity = t.owned->size();
  t.growable = true;
  return t;
}

const char *Value::kindName() const {
  static const char *const names[] = {"None",   "Int",        "Double",     "Bool",
                                      "String", "Tensor",     "IntList",    "DoubleList",
                                      "BoolList", "TensorList", "OptionalTensorList"};
  return names[v.index()];
}

namespace {
[[noreturn]] void mismatch(const Value &value, const char *expected) {
  throw Error(std::string("expected ") + expected + " argument, got " + value.kindName());
}
} // namespace

int64_t Value::toInt() const {
  if (auto *i = std::get_if<int64_t>(&v)) return *i;
  mismatch(*this, "Int");
}

double Value::toDouble() const {
  if (auto *d = std::get_if<double>(&v)) return *d;
  if (auto *i = std::get_if<int64_t>(&v)) return double(*i);
  mismatch(*this, "Double");
}

bool Value::toBool() const {
  if (auto *b = std::get_if<bool>(&v)) return *b;
  mismatch(*this, "Bool");
}

Tensor &Value::toTensor() const {
  if (auto *t = std::get_if<std::shared_ptr<Tensor>>(&v); t && *t) return **t;
  mismatch(*this, "Tensor");
}

const std::vector<int64_t> &Value::toIntList() const {
  if (auto *l = std::get_if<std::vector<int64_t>>(&v)) return *l;
  mismatch(*this, "IntList");
}

const std::vector<double> &Value::toDoubleList() const {
  if (auto *l = std::get_if<std::vector<double>>(&v)) return *l;
  mismatch(*this, "DoubleList");
}

const std::vector<bool> &Value::toBoolList() const {
  if (auto *l = std::get_if<std::vector<bool>>(&v)) return *l;
  mismatch(*this, "BoolList");
}

const Value::TensorList &Value::toTensorList() const {
  if (auto *l = std::get_if<TensorList>(&v)) return *l;
  mismatch(*this, "TensorList");
}

const Value::OptionalTensorList &Value::toOptionalTensorList() const {
  if (auto *l = std::get_if<std::pair<OptionalTensorList, int>>(&v)) return l->first;
  mismatch(*this, "OptionalTensorList");
}

Tensor *Value::toOptionalTensor() const {
  if (isNone()) return nullptr;
  return &toTensor();
}

} // namespace exir::run
