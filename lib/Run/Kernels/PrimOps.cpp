//===- Run/Kernels/PrimOps.cpp - sym ops, executorch_prim ops, copy_ ------===//
//
// Ops without an out variant: the return slot (the last argument) is a
// placeholder the kernel overwrites. Scalar prim ops keep Python's int/float
// rules: int op int is int (floor division and modulo round toward -inf, as
// for the SymInts they were traced from), anything else is float.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernels/KernelUtil.h"

namespace exir::run::kern {
namespace {

void setResult(std::span<Value *> args, Value v) { *args.back() = std::move(v); }

bool isIntLike(const Value &v) { return v.isInt() || v.isBool(); }
int64_t asInt(const Value &v) { return v.isBool() ? int64_t(v.toBool()) : v.toInt(); }
double asDouble(const Value &v) {
  if (v.isBool()) return v.toBool();
  if (!v.isScalar()) fail(std::string("expected Scalar argument, got ") + v.kindName());
  return v.toDouble();
}

int64_t floorDivInt(int64_t a, int64_t b) {
  if (b == 0) fail("integer division by zero");
  int64_t q = a / b;
  if (a % b != 0 && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t floorModInt(int64_t a, int64_t b) { return a - floorDivInt(a, b) * b; }

/// A binary Scalar op: ints(a, b) when both are ints, else doubles(a, b).
template <typename I, typename D> void scalarBinary(std::span<Value *> args, I ints, D doubles) {
  const Value &a = *args[0], &b = *args[1];
  if (isIntLike(a) && isIntLike(b)) setResult(args, Value::of(int64_t(ints(asInt(a), asInt(b)))));
  else setResult(args, Value::of(double(doubles(asDouble(a), asDouble(b)))));
}

template <typename F> void scalarCompare(std::span<Value *> args, F f) {
  const Value &a = *args[0], &b = *args[1];
  bool result = isIntLike(a) && isIntLike(b) ? f(asInt(a), asInt(b)) : f(asDouble(a), asDouble(b));
  setResult(args, Value::of(result));
}

/// ceil/round/trunc.Scalar: ints pass through, floats round to an int.
template <typename F> void scalarToInt(std::span<Value *> args, F f) {
  const Value &a = *args[0];
  setResult(args, Value::of(isIntLike(a) ? asInt(a) : int64_t(f(asDouble(a)))));
}

void etCopyIndex(std::span<Value *> args) {
  Tensor &copyTo = tensorArg(args, 0);
  const Tensor &copyFrom = tensorArg(args, 1);
  int64_t index = intArg(args, 2);
  checkSameDtype(copyTo, copyFrom, "copy_to", "copy_from");
  checkContiguous({&copyTo, &copyFrom});
  if (index < 0) fail("index must not be negative, got " + std::to_string(index));
  // copy_to is [N, *copy_from.sizes]; it grows to index + 1 rows as the loop runs.
  std::vector<int64_t> sizes = copyFrom.sizes;
  sizes.insert(sizes.begin(), index + 1);
  if (copyTo.dim() == int64_t(sizes.size()) &&
      !std::equal(copyTo.sizes.begin() + 1, copyTo.sizes.end(), copyFrom.sizes.begin()))
    fail("copy_to sizes " + sizesText(copyTo.sizes) + " do not extend copy_from sizes " + sizesText(copyFrom.sizes));
  copyTo.resize(sizes);
  std::memcpy(copyTo.data + size_t(index) * copyFrom.nbytes(), copyFrom.data, copyFrom.nbytes());
}

void etView(std::span<Value *> args) {
  Tensor &self = tensorArg(args, 0);
  Tensor &out = tensorArg(args, 2);
  checkSameDtype(self, out, "self", "out");
  checkContiguous({&self});
  // out aliases self's bytes (the emitter leaves out unplanned for this).
  out.sizes = inferSizes(intListArg(args, 1), self.numel());
  out.dimOrder.resize(out.sizes.size());
  for (size_t i = 0; i < out.dimOrder.size(); ++i) out.dimOrder[i] = uint8_t(i);
  out.data = self.data;
  out.capacity = self.capacity;
  out.owned = self.owned;
  out.growable = false;
}

void copyInPlace(std::span<Value *> args) {
  Tensor &self = tensorArg(args, 0);
  const Tensor &src = tensorArg(args, 1);
  switchDtype(src.dtype, [&]<typename S>() {
    switchDtype(self.dtype, [&]<typename D>() {
      std::array<Operand, 2> ops{operandFor(self, self.sizes), operandFor(src, self.sizes)};
      forEachElement(self.sizes, ops, [](const std::array<uint8_t *, 2> &p) {
        *reinterpret_cast<D *>(p[0]) = static_cast<D>(*reinterpret_cast<const S *>(p[1]));
      });
    });
  });
  if (args.back() != args[0]) *args.back() = *args[0]; // the result is self
}

Value localScalar(const Tensor &t) {
  if (t.numel() != 1) fail("a tensor with " + std::to_string(t.numel()) + " elements has no scalar value");
  if (t.dtype == ScalarType::Bool) return Value::of(toVector<int64_t>(t)[0] != 0);
  if (isFloatingType(t.dtype)) return Value::of(toVector<double>(t)[0]);
  return Value::of(toVector<int64_t>(t)[0]);
}

KernelRegistration registration({
    {"aten::sym_size.int", [](auto args) {
       const Tensor &t = tensorArg(args, 0);
       setResult(args, Value::of(t.sizes[wrapDim(intArg(args, 1), t.dim())]));
     }},
    {"aten::sym_stride.int", [](auto args) {
       const Tensor &t = tensorArg(args, 0);
       setResult(args, Value::of(t.strides()[wrapDim(intArg(args, 1), t.dim())]));
     }},
    {"aten::sym_numel", [](auto args) { setResult(args, Value::of(tensorArg(args, 0).numel())); }},
    {"aten::sym_storage_offset", [](auto args) { setResult(args, Value::of(int64_t(0))); }},
    {"aten::_local_scalar_dense", [](auto args) { setResult(args, localScalar(tensorArg(args, 0))); }},
    {"aten::copy_", [](auto args) { copyInPlace(args); }},
    {"executorch_prim::et_copy_index.tensor", [](auto args) { etCopyIndex(args); }},
    {"executorch_prim::et_view.default", [](auto args) { etView(args); }},
    {"executorch_prim::add.Scalar",
     [](auto args) { scalarBinary(args, std::plus<int64_t>(), std::plus<double>()); }},
    {"executorch_prim::sub.Scalar",
     [](auto args) { scalarBinary(args, std::minus<int64_t>(), std::minus<double>()); }},
    {"executorch_prim::mul.Scalar",
     [](auto args) { scalarBinary(args, std::multiplies<int64_t>(), std::multiplies<double>()); }},
    {"executorch_prim::floordiv.Scalar",
     [](auto args) { scalarBinary(args, floorDivInt, [](double a, double b) { return std::floor(a / b); }); }},
    {"executorch_prim::floordiv.int",
     [](auto args) { setResult(args, Value::of(floorDivInt(intArg(args, 0), intArg(args, 1)))); }},
    {"executorch_prim::truediv.Scalar",
     [](auto args) { setResult(args, Value::of(asDouble(*args[0]) / asDouble(*args[1]))); }},
    {"executorch_prim::mod.Scalar", [](auto args) {
       scalarBinary(args, floorModInt, [](double a, double b) {
         double m = std::fmod(a, b);
         return m != 0 && ((m < 0) != (b < 0)) ? m + b : m;
       });
     }},
    {"executorch_prim::mod.int",
     [](auto args) { setResult(args, Value::of(floorModInt(intArg(args, 0), intArg(args, 1)))); }},
    {"executorch_prim::eq.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a == b; }); }},
    {"executorch_prim::ne.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a != b; }); }},
    {"executorch_prim::gt.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a > b; }); }},
    {"executorch_prim::lt.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a < b; }); }},
    {"executorch_prim::ge.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a >= b; }); }},
    {"executorch_prim::le.Scalar", [](auto args) { scalarCompare(args, [](auto a, auto b) { return a <= b; }); }},
    {"executorch_prim::neg.Scalar", [](auto args) {
       const Value &a = *args[0];
       setResult(args, isIntLike(a) ? Value::of(-asInt(a)) : Value::of(-asDouble(a)));
     }},
    {"executorch_prim::sym_float.Scalar", [](auto args) { setResult(args, Value::of(asDouble(*args[0]))); }},
    {"executorch_prim::ceil.Scalar", [](auto args) { scalarToInt(args, [](double x) { return std::ceil(x); }); }},
    // Python's round(): half to even.
    {"executorch_prim::round.Scalar", [](auto args) { scalarToInt(args, [](double x) { return std::nearbyint(x); }); }},
    {"executorch_prim::trunc.Scalar", [](auto args) { scalarToInt(args, [](double x) { return std::trunc(x); }); }},
    {"executorch_prim::sym_max.Scalar",
     [](auto args) { scalarBinary(args, [](int64_t a, int64_t b) { return std::max(a, b); },
                                  [](double a, double b) { return std::max(a, b); }); }},
    {"executorch_prim::sym_min.Scalar",
     [](auto args) { scalarBinary(args, [](int64_t a, int64_t b) { return std::min(a, b); },
                                  [](double a, double b) { return std::min(a, b); }); }},
});

} // namespace
} // namespace exir::run::kern
