//===- Serde/Safetensors.h - Weights from a .safetensors file -*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON ({"name": {"dtype": "F32", "shape": [3, 3], "data_offsets": [b, e]},
// "__metadata__": {...}}), then raw little-endian tensor data; offsets are
// relative to the end of the header. Tensors become DataRefs into the file
// (never copied), each stamped with the file size and the CRC-32 of its range
// (read once here) so exir-emit can notice a replaced file.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <string>

namespace exir {

/// Contiguous tensors of `path`, by name. Throws exir::Error naming the file
/// and the JSON pointer of a malformed entry.
OrderedMap<ConstantTensor> readSafetensors(const std::string &path);

/// The safetensors dtype name ("F32", "BF16", "BOOL", ...) for `t`, or "" if none.
const char *safetensorsDtypeName(ScalarType t);

} // namespace exir
