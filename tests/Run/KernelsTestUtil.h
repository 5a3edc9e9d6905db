//===- tests/Run/KernelsTestUtil.h - Calling kernels from tests -*- C++ -*-===//
//
// Builds tensors from literal values and calls registered kernels with the
// KernelCall layout: the arguments, then the return slot (the out Value again
// for single-out ops).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Kernel.h"
#include "Run/Kernels/KernelUtil.h"

#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <limits>
#include <vector>

namespace exir::run::test {

template <typename T>
Value tensorValue(ScalarType dtype, std::vector<int64_t> sizes, const std::vector<T> &values) {
  Tensor t = Tensor::make(dtype, std::move(sizes));
  REQUIRE(size_t(t.numel()) == values.size());
  kern::switchDtype(dtype, [&]<typename E>() {
    for (size_t i = 0; i < values.size(); ++i) t.ptr<E>()[i] = static_cast<E>(values[i]);
  });
  return Value::of(std::move(t));
}

inline Value floats(std::vector<int64_t> sizes, const std::vector<double> &values) {
  return tensorValue(ScalarType::Float, std::move(sizes), values);
}
inline Value longs(std::vector<int64_t> sizes, const std::vector<int64_t> &values) {
  return tensorValue(ScalarType::Long, std::move(sizes), values);
}
inline Value bools(std::vector<int64_t> sizes, const std::vector<int> &values) {
  return tensorValue(ScalarType::Bool, std::move(sizes), values);
}
/// An empty out tensor of `dtype` that kernels resize.
inline Value outOf(ScalarType dtype = ScalarType::Float) { return Value::of(Tensor::make(dtype, {0})); }

/// Scalar arguments.
inline Value i64(int64_t v) { return Value::of(v); }
inline Value f64(double v) { return Value::of(v); }
inline Value flag(bool b) { return Value::of(b); }
using Sizes = std::vector<int64_t>;
using Doubles = std::vector<double>;
using Longs = std::vector<int64_t>;
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
/// A float32 tensor holding start, start + 1, ... in row-major order.
inline Value iota(std::vector<int64_t> sizes, double start = 0) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + double(i);
  return floats(std::move(sizes), v);
}
/// A Tensor?[] argument; nullptr entries are None.
inline Value optionalTensors(std::vector<Value *> values) {
  Value::OptionalTensorList list;
  for (Value *v : values) list.push_back(v ? &v->toTensor() : nullptr);
  Value x;
  x.v = std::make_pair(std::move(list), 0);
  return x;
}
inline Value intList(std::vector<int64_t> v) { Value x; x.v = std::move(v); return x; }
inline Value str(std::string s) { Value x; x.v = std::move(s); return x; }
inline Value tensorList(std::vector<Value *> values) {
  Value::TensorList list;
  for (Value *v : values) list.push_back(&v->toTensor());
  Value x; x.v = std::move(list); return x;
}

/// Calls kernel `name` with `args` followed by `ret` (the return slot).
inline void call(const std::string &name, std::vector<Value *> args, Value *ret) {
  const KernelFn *fn = KernelRegistry::global().find(name);
  INFO(name);
  REQUIRE(fn);
  args.push_back(ret);
  (*fn)(std::span<Value *>(args));
}
/// Single-out ops: the last argument is `out` and the return slot is out again.
inline void callOut(const std::string &name, std::vector<Value *> args) {
  Value *out = args.back();
  call(name, std::move(args), out);
}

template <typename T = double> std::vector<T> valuesOf(const Value &v) {
  return kern::toVector<T>(v.toTensor());
}
inline const std::vector<int64_t> &sizesOf(const Value &v) { return v.toTensor().sizes; }

/// Element-wise comparison with a relative + absolute tolerance.
inline void checkClose(const std::vector<double> &actual, const std::vector<double> &expected, double tol = 1e-6) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i])) CHECK(std::isnan(actual[i]));
    else CHECK(actual[i] == Approx(expected[i]).epsilon(tol).margin(tol));
  }
}

} // namespace exir::run::test
