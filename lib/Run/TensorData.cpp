//===- Run/TensorData.cpp - Reading and writing tensor elements -----------===//
#include "Run/TensorData.h"
#include "Support/Error.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace exir::run {

std::vector<size_t> logicalByteOffsets(const Tensor &t) {
  int64_t n = t.numel();
  std::vector<size_t> offsets(size_t(std::max<int64_t>(n, 0)));
  std::vector<int64_t> strides = t.strides();
  size_t elem = elementSize(t.dtype);
  std::vector<int64_t> index(t.sizes.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < index.size(); ++d) off += index[d] * strides[d];
    offsets[size_t(i)] = size_t(off) * elem;
    for (size_t d = index.size(); d-- > 0;) {
      if (++index[d] < t.sizes[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

double halfToDouble(uint16_t h) {
  int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(double(mant | 0x400), exp - 25);
  return sign ? -v : v;
}

uint16_t doubleToHalf(double d) {
  float f = float(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  int exp = int((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (((x >> 23) & 0xFF) == 0xFF) return uint16_t(sign | 0x7C00 | (mant ? 0x200 : 0));
  if (exp >= 31) return uint16_t(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    uint32_t shift = uint32_t(14 - exp);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = uint32_t(sign) | (uint32_t(exp) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half; // carries into the exponent correctly
  return uint16_t(half);
}

namespace {

double loadElement(ScalarType dtype, const uint8_t *p) {
  switch (dtype) {
  case ScalarType::Float: { float v; std::memcpy(&v, p, 4); return v; }
  case ScalarType::Double: { double v; std::memcpy(&v, p, 8); return v; }
  case ScalarType::Half: { uint16_t v; std::memcpy(&v, p, 2); return halfToDouble(v); }
  case ScalarType::Long: { int64_t v; std::memcpy(&v, p, 8); return double(v); }
  case ScalarType::Int: { int32_t v; std::memcpy(&v, p, 4); return v; }
  case ScalarType::Short: { int16_t v; std::memcpy(&v, p, 2); return v; }
  case ScalarType::Char: case ScalarType::QInt8: return double(int8_t(*p));
  case ScalarType::Byte: case ScalarType::QUInt8: return *p;
  case ScalarType::Bool: return *p ? 1 : 0;
  case ScalarType::QInt32: { int32_t v; std::memcpy(&v, p, 4); return v; }
  default: throw Error(std::string("tensors of dtype ") + shortName(dtype) + " cannot be read element-wise");
  }
}

void storeElement(ScalarType dtype, uint8_t *p, double d) {
  switch (dtype) {
  case ScalarType::Float: { float v = float(d); std::memcpy(p, &v, 4); return; }
  case ScalarType::Double: std::memcpy(p, &d, 8); return;
  case ScalarType::Half: { uint16_t v = doubleToHalf(d); std::memcpy(p, &v, 2); return; }
  case ScalarType::Long: { int64_t v = int64_t(d); std::memcpy(p, &v, 8); return; }
  case ScalarType::Int: case ScalarType::QInt32: { int32_t v = int32_t(d); std::memcpy(p, &v, 4); return; }
  case ScalarType::Short: { int16_t v = int16_t(d); std::memcpy(p, &v, 2); return; }
  case ScalarType::Char: case ScalarType::QInt8: *p = uint8_t(int8_t(d)); return;
  case ScalarType::Byte: case ScalarType::QUInt8: *p = uint8_t(d); return;
  case ScalarType::Bool: *p = d != 0; return;
  default: throw Error(std::string("tensors of dtype ") + shortName(dtype) + " cannot be written element-wise");
  }
}

/// Calls fn(i, byteOffset) for every logical element i; contiguous tensors
/// skip the offset table (a 512 MiB output must not cost 1 GiB of offsets).
template <typename Fn> void forEachElement(const Tensor &t, Fn &&fn) {
  size_t n = size_t(std::max<int64_t>(t.numel(), 0)), elem = elementSize(t.dtype);
  if (t.isContiguous()) {
    for (size_t i = 0; i < n; ++i) fn(i, i * elem);
    return;
  }
  std::vector<size_t> offsets = logicalByteOffsets(t);
  for (size_t i = 0; i < n; ++i) fn(i, offsets[i]);
}

} // namespace

std::vector<double> toDoubles(const Tensor &t) {
  std::vector<double> out(size_t(std::max<int64_t>(t.numel(), 0)));
  forEachElement(t, [&](size_t i, size_t off) { out[i] = loadElement(t.dtype, t.data + off); });
  return out;
}

void fillFromDoubles(Tensor &t, const std::vector<double> &values) {
  if (size_t(std::max<int64_t>(t.numel(), 0)) != values.size())
    throw InternalError("fillFromDoubles: " + std::to_string(values.size()) + " values for " +
                        std::to_string(t.numel()) + " elements");
  forEachElement(t, [&](size_t i, size_t off) { storeElement(t.dtype, t.data + off, values[i]); });
}

Tensor contiguousCopy(const Tensor &t) {
  Tensor out = Tensor::make(t.dtype, t.sizes);
  if (t.isContiguous()) {
    if (out.nbytes()) std::memcpy(out.data, t.data, out.nbytes());
    return out;
  }
  size_t elem = elementSize(t.dtype);
  forEachElement(t, [&](size_t i, size_t off) { std::memcpy(out.data + i * elem, t.data + off, elem); });
  return out;
}

void copyElements(Tensor &dst, const Tensor &src) {
  if (dst.isContiguous() && src.isContiguous()) {
    if (src.nbytes()) std::memcpy(dst.data, src.data, src.nbytes());
    return;
  }
  std::vector<size_t> to = logicalByteOffsets(dst);
  size_t elem = elementSize(src.dtype);
  forEachElement(src, [&](size_t i, size_t off) { std::memcpy(dst.data + to[i], src.data + off, elem); });
}

} // namespace exir::run
