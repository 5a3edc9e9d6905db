//===- Support/Strings.h - Small string helpers -----------------*- C++ -*-===//
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace exir {

/// The fields of `s` between `sep`s, empty ones included ("a,,b," -> "a",
/// "", "b", ""): a caller that counts fields sees every separator.
inline std::vector<std::string> splitFields(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    size_t at = s.find(sep, start);
    out.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

} // namespace exir
