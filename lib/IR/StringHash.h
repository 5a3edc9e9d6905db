//===- IR/StringHash.h - A fast hash for value names -----------*- C++ -*-===//
//
// Value names ("aten_permute_copy_default_1234") are hashed millions of times
// per stage; std::hash<std::string> walks them byte by byte (about 60 ns for
// an 18-character name here). This one is wyhash-style: whole words and a
// 64x64->128 multiply per word, the tail read as overlapping fixed-size loads
// (no byte loop, no memcpy call). Not seeded: the tools must be deterministic,
// and nothing here orders output by hash.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

namespace exir {

namespace string_hash_detail {
template <typename T> inline uint64_t load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline uint64_t mix(uint64_t x, uint64_t y) {
  __uint128_t r = __uint128_t(x) * y;
  return uint64_t(r) ^ uint64_t(r >> 64);
}
} // namespace string_hash_detail

inline uint64_t hashString(std::string_view s) {
  using namespace string_hash_detail;
  const char *p = s.data();
  size_t n = s.size();
  uint64_t a, b;
  if (n >= 8) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i + 8 < n; i += 8) h = mix(h ^ load<uint64_t>(p + i), 0xbf58476d1ce4e5b9ull);
    a = h;
    b = load<uint64_t>(p + n - 8);
  } else if (n >= 4) {
    a = load<uint32_t>(p);
    b = load<uint32_t>(p + n - 4) ^ (uint64_t(n) << 32);
  } else {
    a = n ? uint64_t(uint8_t(p[0])) << 16 | uint64_t(uint8_t(p[n / 2])) << 8 | uint8_t(p[n - 1]) : 0;
    b = n;
  }
  return mix(a ^ 0xa0761d6478bd642full, b ^ 0xe7037ed1a0b428dbull);
}

} // namespace exir
