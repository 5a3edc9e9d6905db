//===- Run/TensorData.h - Reading and writing tensor elements ---*- C++ -*-===//
//
// Element access by logical (C-order) index whatever the tensor's dim order,
// used by .npy I/O, input generation, comparison and printing. Kernels have
// their own typed loops; this is the slow generic path for tool edges.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Value.h"

#include <cstdint>
#include <vector>

namespace exir::run {

/// Byte offset of each logical (C-order) element in `t`'s storage.
std::vector<size_t> logicalByteOffsets(const Tensor &t);

/// Every element as a double, in logical order (bool -> 0/1, f16 converted).
std::vector<double> toDoubles(const Tensor &t);

/// A fresh contiguous owned copy with the same logical contents.
Tensor contiguousCopy(const Tensor &t);

/// Copies the logical contents of `src` into `dst` (same dtype and sizes).
void copyElements(Tensor &dst, const Tensor &src);

/// Writes `values` (logical order, converted to t's dtype) into `t`.
void fillFromDoubles(Tensor &t, const std::vector<double> &values);

double halfToDouble(uint16_t h);
uint16_t doubleToHalf(double d);

} // namespace exir::run
