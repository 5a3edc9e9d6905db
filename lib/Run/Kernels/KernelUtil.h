//===- Run/Kernels/KernelUtil.h - Helpers shared by the kernels -*- C++ -*-===//
//
// Argument access, Scalars, PyTorch's type promotion (result_type with its
// dim / zero-dim / wrapped-number priorities), dtype dispatch, strided
// broadcast iteration, strided views for data movement, and reduction
// layouts. Kernels throw exir::Error with a plain message; the
// registry prefixes the kernel name (Run/Kernel.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Kernel.h"
#include "Support/Error.h"

#include <array>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace exir::run::kern {

[[noreturn]] inline void fail(const std::string &message) { throw Error(message); }

std::string sizesText(const std::vector<int64_t> &sizes);
std::string dtypeText(ScalarType t); // "torch.float32"

/// `sizes` with one -1 inferred so that the product is `numel` (view semantics).
std::vector<int64_t> inferSizes(std::vector<int64_t> sizes, int64_t numel);

/// `dim` in [-rank, rank) -> [0, rank). A rank-0 tensor accepts dims 0 and -1.
int64_t wrapDim(int64_t dim, int64_t rank);

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

/// A Scalar argument (Int, Double or Bool) with the kind it was given as.
struct Scalar {
  enum class Kind { Bool, Int, Double } kind = Kind::Int;
  bool b = false;
  int64_t i = 0;
  double d = 0;

  static Scalar of(const Value &value);
  static Scalar ofDouble(double v) { Scalar s; s.kind = Kind::Double; s.d = v; return s; }
  static Scalar ofInt(int64_t v) { Scalar s; s.kind = Kind::Int; s.i = v; return s; }
  bool isFloating() const { return kind == Kind::Double; }
  bool isBool() const { return kind == Kind::Bool; }
  /// The dtype a wrapped number takes part in promotion with (float -> default Float).
  ScalarType wrappedType() const {
    return kind == Kind::Double ? ScalarType::Float : kind == Kind::Int ? ScalarType::Long : ScalarType::Bool;
  }
  template <typename C> C as() const {
    switch (kind) {
    case Kind::Bool: return static_cast<C>(b);
    case Kind::Int: return static_cast<C>(i);
    case Kind::Double: return static_cast<C>(d);
    }
    return C();
  }
};

//===----------------------------------------------------------------------===//
// Type promotion
//===----------------------------------------------------------------------===//

/// c10::promoteTypes for the real dtypes.
ScalarType promoteTypes(ScalarType a, ScalarType b);
/// c10::canCast: no floating -> integral, no non-bool -> bool.
bool canCast(ScalarType from, ScalarType to);
void checkCanCast(ScalarType from, ScalarType to, const char *what = "out");

/// at::result_type over tensors and wrapped-number Scalars.
class ResultType {
public:
  ResultType &add(const Tensor &t);
  ResultType &add(const Scalar &s);
  ScalarType get() const;

private:
  ScalarType dimResult_ = ScalarType::Undefined, zeroResult_ = ScalarType::Undefined,
             wrappedResult_ = ScalarType::Undefined;
};

/// The computation dtype of a float op (exp, sigmoid, true division): integral -> Float.
inline ScalarType floatOpType(ScalarType t) { return isFloatingType(t) ? t : ScalarType::Float; }

//===----------------------------------------------------------------------===//
// 16-bit floats
//===----------------------------------------------------------------------===//

uint16_t floatToHalfBits(float f);      // IEEE binary16, round to nearest even
float halfBitsToFloat(uint16_t bits);
uint16_t floatToBFloat16Bits(float f);  // upper half of a float, round to nearest even
inline float bfloat16BitsToFloat(uint16_t bits) {
  uint32_t x = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
}

/// Storage types for float16 / bfloat16 elements; kernels compute them in
/// float (as PyTorch's CPU kernels do) and round once when storing. One
/// template over the two encodings keeps them distinct types for dispatch.
template <uint16_t (*Encode)(float), float (*Decode)(uint16_t)> struct Float16Storage {
  uint16_t bits = 0;
  Float16Storage() = default;
  template <typename T>
    requires std::is_convertible_v<T, float>
  Float16Storage(T v) : bits(Encode(float(v))) {}
  operator float() const { return Decode(bits); }
};
using Half = Float16Storage<floatToHalfBits, halfBitsToFloat>;
using BFloat16 = Float16Storage<floatToBFloat16Bits, bfloat16BitsToFloat>;

//===----------------------------------------------------------------------===//
// Dtype dispatch
//===----------------------------------------------------------------------===//

/// Calls f.template operator()<T>() with the C++ type stored for dtype `t`.
template <typename F> decltype(auto) switchDtype(ScalarType t, F &&f) {
  switch (t) {
  case ScalarType::Byte: return f.template operator()<uint8_t>();
  case ScalarType::Char: return f.template operator()<int8_t>();
  case ScalarType::Short: return f.template operator()<int16_t>();
  case ScalarType::Int: return f.template operator()<int32_t>();
  case ScalarType::Long: return f.template operator()<int64_t>();
  case ScalarType::Float: return f.template operator()<float>();
  case ScalarType::Double: return f.template operator()<double>();
  case ScalarType::Bool: return f.template operator()<bool>();
  case ScalarType::Half: return f.template operator()<Half>();
  case ScalarType::BFloat16: return f.template operator()<BFloat16>();
  default: fail("dtype " + dtypeText(t) + " is not supported by the reference kernels");
  }
}

/// Calls f.template operator()<C>() with the type PyTorch computes dtype `t`
/// in: float for float32 (and float16 / bfloat16), double for float64, int64
/// for integers and bool (results are cast back to the out dtype, which wraps
/// like PyTorch's).
template <typename F> decltype(auto) switchCompute(ScalarType t, F &&f) {
  switch (t) {
  case ScalarType::Float: case ScalarType::Half: case ScalarType::BFloat16: return f.template operator()<float>();
  case ScalarType::Double: return f.template operator()<double>();
  case ScalarType::Byte: case ScalarType::Char: case ScalarType::Short: case ScalarType::Int:
  case ScalarType::Long: case ScalarType::Bool:
    return f.template operator()<int64_t>();
  default: fail("dtype " + dtypeText(t) + " is not supported by the reference kernels");
  }
}

template <typename C> using LoadFn = C (*)(const uint8_t *);
template <typename C> using StoreFn = void (*)(uint8_t *, C);

/// Reads an element of dtype `t` as C.
template <typename C> LoadFn<C> loaderFor(ScalarType t) {
  return switchDtype(t, []<typename T>() -> LoadFn<C> {
    return [](const uint8_t *p) { return static_cast<C>(*reinterpret_cast<const T *>(p)); };
  });
}
/// Writes a C as an element of dtype `t`.
template <typename C> StoreFn<C> storerFor(ScalarType t) {
  return switchDtype(t, []<typename T>() -> StoreFn<C> {
    return [](uint8_t *p, C v) { *reinterpret_cast<T *>(p) = static_cast<T>(v); };
  });
}

/// Element `i` (in storage order) of a tensor read as C.
template <typename C> std::vector<C> toVector(const Tensor &t);

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

/// tensors_have_same_dim_order: all contiguous, or all channels-last (tensors of
/// rank < 2 have one dim order and agree with either).
void checkSameDimOrder(std::initializer_list<const Tensor *> tensors);
/// Refuses non-contiguous dim orders for kernels that index contiguous memory.
void checkContiguous(std::initializer_list<const Tensor *> tensors);
void checkDtype(const Tensor &t, ScalarType expected, const char *what);
void checkSameDtype(const Tensor &a, const Tensor &b, const char *whatA, const char *whatB);
void checkFloating(const Tensor &t, const char *what);

//===----------------------------------------------------------------------===//
// Broadcast iteration
//===----------------------------------------------------------------------===//

std::vector<int64_t> broadcastShape(const std::vector<int64_t> &a, const std::vector<int64_t> &b);

/// A tensor's data and byte strides, aligned to an iteration shape (0 where broadcast).
struct Operand {
  uint8_t *data = nullptr;
  std::vector<int64_t> byteStrides;
};
Operand operandFor(const Tensor &t, const std::vector<int64_t> &shape);

/// Calls f(std::array<uint8_t *, N>) once per element of `shape`, with each
/// operand's element pointer.
template <size_t N, typename F>
void forEachElement(const std::vector<int64_t> &shape, const std::array<Operand, N> &ops, F &&f) {
  for (int64_t s : shape)
    if (s == 0) return;
  std::array<uint8_t *, N> ptr;
  for (size_t k = 0; k < N; ++k) ptr[k] = ops[k].data;
  const int64_t rank = int64_t(shape.size());
  if (rank == 0) {
    f(ptr);
    return;
  }
  std::vector<int64_t> index(rank, 0);
  const int64_t inner = shape[rank - 1];
  std::array<int64_t, N> innerStride;
  for (size_t k = 0; k < N; ++k) innerStride[k] = ops[k].byteStrides[rank - 1];
  for (;;) {
    for (int64_t j = 0; j < inner; ++j) {
      f(ptr);
      for (size_t k = 0; k < N; ++k) ptr[k] += innerStride[k];
    }
    for (size_t k = 0; k < N; ++k) ptr[k] -= innerStride[k] * inner;
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < shape[d]) {
        for (size_t k = 0; k < N; ++k) ptr[k] += ops[k].byteStrides[d];
        break;
      }
      for (size_t k = 0; k < N; ++k) ptr[k] -= ops[k].byteStrides[d] * (shape[d] - 1);
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// out[i] = f(ins[0][i], ...) over the broadcast shape of the inputs: inputs
/// are read as C, f's result (type R) is cast to out's dtype. Resizes out.
template <typename C, typename R, size_t N, typename F>
void mapElementwise(Tensor &out, const std::array<const Tensor *, N> &ins, F &&f) {
  std::vector<int64_t> shape = ins[0]->sizes;
  for (size_t k = 1; k < N; ++k) shape = broadcastShape(shape, ins[k]->sizes);
  out.resize(shape);
  for (const Tensor *in : ins) checkSameDimOrder({in, &out});
  std::array<LoadFn<C>, N> load;
  std::array<Operand, N + 1> ops;
  ops[0] = operandFor(out, shape);
  for (size_t k = 0; k < N; ++k) {
    load[k] = loaderFor<C>(ins[k]->dtype);
    ops[k + 1] = operandFor(*ins[k], shape);
  }
  StoreFn<R> store = storerFor<R>(out.dtype);
  forEachElement(shape, ops, [&](const std::array<uint8_t *, N + 1> &p) {
    std::array<C, N> v;
    for (size_t k = 0; k < N; ++k) v[k] = load[k](p[k + 1]);
    store(p[0], std::apply(f, v));
  });
}

/// A 0-dim tensor of dtype `t` holding `s` (a Scalar operand of an elementwise op).
Tensor scalarTensor(const Scalar &s, ScalarType t);

/// `other` of a binary op: a Tensor argument, or a Scalar made a 0-dim tensor.
struct Other {
  const Tensor *tensor = nullptr;
  std::optional<Scalar> scalar;
  Tensor holder;

  Other(std::span<Value *> args, size_t i) {
    if (args[i]->isTensor()) tensor = &args[i]->toTensor();
    else scalar = Scalar::of(*args[i]);
  }
  void addTo(ResultType &rt) const {
    if (tensor) rt.add(*tensor);
    else rt.add(*scalar);
  }
  /// The operand, once the computation dtype is known.
  const Tensor &as(ScalarType compute) {
    if (tensor) return *tensor;
    holder = scalarTensor(*scalar, compute);
    return holder;
  }
};

inline ScalarType resultType(const Tensor &a, const Other &b) {
  ResultType rt;
  rt.add(a);
  b.addTo(rt);
  return rt.get();
}

/// Copies `src` into `dst` (same sizes, any dim orders and dtypes).
void copyInto(Tensor &dst, const Tensor &src);

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

inline Tensor &tensorArg(std::span<Value *> args, size_t i) { return args[i]->toTensor(); }
inline int64_t intArg(std::span<Value *> args, size_t i) { return args[i]->toInt(); }
inline bool boolArg(std::span<Value *> args, size_t i) { return args[i]->toBool(); }
inline Scalar scalarArg(std::span<Value *> args, size_t i) { return Scalar::of(*args[i]); }
inline std::optional<Scalar> optScalarArg(std::span<Value *> args, size_t i) {
  if (args[i]->isNone()) return std::nullopt;
  return Scalar::of(*args[i]);
}
inline std::optional<int64_t> optIntArg(std::span<Value *> args, size_t i) {
  if (args[i]->isNone()) return std::nullopt;
  return args[i]->toInt();
}
/// An `int[]?` / `int[]` argument; None gives an empty list and `present` false.
std::vector<int64_t> intListArg(std::span<Value *> args, size_t i, bool *present = nullptr);
std::optional<std::string> optStringArg(std::span<Value *> args, size_t i);
/// A `Tensor?[]` argument; a plain TensorList (no None entries) is accepted too.
Value::OptionalTensorList optionalTensorListArg(std::span<Value *> args, size_t i);

//===----------------------------------------------------------------------===//
// Reading and writing whole tensors
//===----------------------------------------------------------------------===//

/// The elements of `t` in logical (row-major) order, read as C.
template <typename C> std::vector<C> toVector(const Tensor &t) {
  std::vector<C> result;
  result.reserve(size_t(t.numel()));
  LoadFn<C> load = loaderFor<C>(t.dtype);
  forEachElement(t.sizes, std::array<Operand, 1>{operandFor(t, t.sizes)},
                 [&](const std::array<uint8_t *, 1> &p) { result.push_back(load(p[0])); });
  return result;
}

/// Writes `values` (logical order) into out, cast to out's dtype.
template <typename C> void writeValues(Tensor &out, const std::vector<C> &values) {
  StoreFn<C> store = storerFor<C>(out.dtype);
  size_t i = 0;
  forEachElement(out.sizes, std::array<Operand, 1>{operandFor(out, out.sizes)},
                 [&](const std::array<uint8_t *, 1> &p) { store(p[0], values[i++]); });
}

//===----------------------------------------------------------------------===//
// Strided views (for data movement kernels)
//===----------------------------------------------------------------------===//

/// A strided window on a tensor's bytes, in logical dim order.
struct View {
  uint8_t *data = nullptr;
  std::vector<int64_t> sizes;
  std::vector<int64_t> byteStrides;
  ScalarType dtype = ScalarType::Float;

  static View of(const Tensor &t);
  View permuted(const std::vector<int64_t> &perm) const;
  View sliced(int64_t dim, int64_t start, int64_t length, int64_t step = 1) const;
  View selected(int64_t dim, int64_t index) const;
  View unsqueezed(int64_t dim) const;
};

/// dst = src element by element (same sizes; dtypes may differ).
void copyView(const View &dst, const View &src);

/// The elements of a view in its (logical, row-major) order, read as C.
template <typename C> std::vector<C> viewValues(const View &v) {
  std::vector<C> result;
  int64_t n = 1;
  for (int64_t s : v.sizes) n *= s;
  result.reserve(size_t(n));
  LoadFn<C> load = loaderFor<C>(v.dtype);
  forEachElement(v.sizes, std::array<Operand, 1>{Operand{v.data, v.byteStrides}},
                 [&](const std::array<uint8_t *, 1> &p) { result.push_back(load(p[0])); });
  return result;
}
/// Writes `values` (the view's logical order) through the view, cast to its dtype.
template <typename C> void writeView(const View &v, const std::vector<C> &values) {
  StoreFn<C> store = storerFor<C>(v.dtype);
  size_t i = 0;
  forEachElement(v.sizes, std::array<Operand, 1>{Operand{v.data, v.byteStrides}},
                 [&](const std::array<uint8_t *, 1> &p) { store(p[0], values[i++]); });
}

/// Reducing `dims` of a tensor: the input viewed as [kept dims..., reduced
/// dims...] so that each output element is one contiguous run of `rowLength`.
struct Reduction {
  std::vector<int64_t> outSizes; // keepdim applied
  std::vector<int64_t> perm;     // kept dims, then reduced dims
  int64_t rows = 1, rowLength = 1;
};
/// Empty `dims` reduces every dim.
Reduction planReduction(const Tensor &self, const std::vector<int64_t> &dims, bool keepdim);
/// The input's values in the reduction's row order, read as C.
template <typename C> std::vector<C> reductionRows(const Tensor &self, const Reduction &r) {
  return viewValues<C>(View::of(self).permuted(r.perm));
}

/// Calls f(index) for every logical index of `sizes`, in row-major order.
template <typename F> void forEachIndex(const std::vector<int64_t> &sizes, F &&f) {
  for (int64_t s : sizes)
    if (s == 0) return;
  std::vector<int64_t> index(sizes.size(), 0);
  for (;;) {
    f(static_cast<const std::vector<int64_t> &>(index));
    int64_t d = int64_t(sizes.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

} // namespace exir::run::kern
