//===- Support/CheckedMath.h - Overflow-checked size arithmetic -*- C++ -*-===//
//
// Every size, stride, offset and alignment computed from input data goes
// through these helpers, so a crafted size such as [2^62, 4] is refused with a
// message instead of wrapping around (signed overflow is undefined behaviour).
// The optional-returning forms let the caller name the offending tensor.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>

namespace exir {

/// a + b, or nullopt if the result does not fit in T.
template <typename T> std::optional<T> checkedAdd(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a * b, or nullopt if the result does not fit in T.
template <typename T> std::optional<T> checkedMul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// `value` rounded up to a multiple of `alignment` (> 0), or nullopt on overflow.
template <typename T> std::optional<T> checkedAlignUp(T value, T alignment) {
  static_assert(std::is_integral_v<T>);
  if (alignment <= 0) return std::nullopt;
  auto padded = checkedAdd<T>(value, alignment - 1);
  if (!padded) return std::nullopt;
  return *padded / alignment * alignment;
}

/// Product of `sizes` (each >= 0), or nullopt on a negative size or overflow.
template <typename Range> std::optional<int64_t> checkedProduct(const Range &sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0) return std::nullopt;
    auto next = checkedMul<int64_t>(n, s);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

/// True for 1, 2, 4, ...
constexpr bool isPowerOfTwo(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

/// The largest alignment a tool accepts (--alignment, --segment-alignment, an
/// artifact's alignment fields): 1 GiB.
constexpr uint64_t kMaxAlignment = uint64_t(1) << 30;

} // namespace exir
