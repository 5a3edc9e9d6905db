//===- Run/Inputs.h - Method inputs from files, literals or a seed -*- C++ -*-===//
//
// exir-run's --input K=SPEC: SPEC is a .npy file, a .bin file of raw
// little-endian elements (shape from --sizes or the method), or a literal:
//   [[1, 2], [3, 4]]   a tensor; the nesting gives the shape
//   2.5 / 7 / true     a scalar input, or a tensor input filled with the value
// Inputs not given are drawn from a seeded generator, identically for every
// file run with the same seed and the same input shapes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Interpreter.h"
#include "Run/Value.h"

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace exir::run {

/// Parses a literal for `info` (sizes: the shape a filled tensor gets).
Value parseInputLiteral(const std::string &text, const InputInfo &info, const std::vector<int64_t> &sizes);

/// One --input value: SPEC as above. `sizes` is the shape to use for .bin and
/// filled literals (the method's shape, or --sizes).
Value loadInput(const std::string &spec, const InputInfo &info, const std::vector<int64_t> &sizes);

/// A random input of `info`'s dtype and `sizes`: floats uniform in [-1, 1),
/// integers in [0, 4), bools fair coins; scalar inputs keep their sample value.
Value randomInput(const InputInfo &info, const std::vector<int64_t> &sizes, std::mt19937_64 &rng);

/// Parses "d0,d1,..." (an empty string is a 0-dim shape).
std::vector<int64_t> parseSizes(const std::string &text);

} // namespace exir::run
