//===- Run/Compare.h - Comparing and printing run results --------*- C++ -*-===//
#pragma once

#include "Run/Value.h"

#include <optional>
#include <string>

namespace exir::run {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-5;
  /// atol is multiplied by max(1, max |expected|) (a scale-free absolute bound).
  bool scaleAtol = false;
};

/// Compares as numpy.allclose does (|a - e| <= atol + rtol * |e|; NaN equals
/// NaN). Returns nullopt when `actual` matches, else one line: "max abs error
/// X, max rel error Y, first differing index I (got A, expected B)", or what
/// differs in dtype, shape or kind.
std::optional<std::string> compareValues(const Value &actual, const Value &expected, const Tolerance &tol);

/// "f32[2, 2] [[1, 2], [3, 4]]"; long tensors show their first and last elements.
std::string formatValue(const Value &v, size_t maxElements = 64);

} // namespace exir::run
