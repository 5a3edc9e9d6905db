//===- Run/Npy.h - NumPy .npy files without numpy ---------------*- C++ -*-===//
//
// The format numpy users read: magic "\x93NUMPY", version, a Python dict
// header ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }) padded
// to 64 bytes, then the raw C-order little-endian data. Versions 1.0 (16-bit
// header length), 2.0 and 3.0 (32-bit) are read; 1.0 is written (2.0 when the
// header needs more than 64 KiB). dtypes: f2 f4 f8 i1 i2 i4 i8 u1 b1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Run/Value.h"

#include <string>

namespace exir::run {

/// Parses .npy bytes into a fresh contiguous tensor. Throws exir::Error for a
/// bad magic, an unsupported dtype, big-endian data, Fortran order or a short body.
Tensor parseNpy(const std::string &bytes);
Tensor readNpyFile(const std::string &path);

/// The .npy bytes of `t` (its logical C-order contents, whatever its dim order).
std::string encodeNpy(const Tensor &t);
void writeNpyFile(const std::string &path, const Tensor &t);

/// numpy's descr for a dtype ("<f4"), or "" when .npy has none.
std::string npyDescr(ScalarType t);

} // namespace exir::run
