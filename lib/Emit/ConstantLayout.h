//===- Emit/ConstantLayout.h - A constant's bytes as the runtime reads them -*- C++ -*-===//
//
// A constant in the IR is a view into a storage (sizes, strides, storage
// offset, and a DataRef to the storage bytes): tied weights share one storage,
// a slice starts at an offset, a transposed or strided view is not dense. The
// runtime reads exactly numel x element size bytes, densely in the tensor's
// dim order, so the emitter hands it a slice of the storage when the view is
// dense and a gathered copy when it is not.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"
#include "IR/IR.h"

#include <cstdint>
#include <string>
#include <vector>

namespace exir::emit {

/// The dim order a constant is emitted in: `graphDimOrder` when the runtime's
/// kernels take it (contiguous or channels-last), else contiguous.
std::vector<uint8_t> emittedDimOrder(const std::vector<uint8_t> &graphDimOrder);

/// Transposes a `rows` x `cols` matrix of `elem`-byte elements:
/// out[c * outRowStride + r] = in[r * inRowStride + c] (strides in elements).
/// Cache-blocked, with 4x4 register blocks for 4-byte elements; any `elem`
/// works. The source and the destination must not overlap.
void transpose2d(const void *in, void *out, size_t rows, size_t cols, size_t inRowStride, size_t outRowStride,
                 size_t elem);

/// The bytes of `c` laid out densely in `dimOrder`. A dense view is a range of
/// the storage (the whole DataRef, CRC-checked while streaming, when it covers
/// it exactly); any other view is gathered in memory from the storage. `what`
/// names the constant in errors ("constant 'w'"). Throws exir::Error when the
/// view reads past the referenced bytes.
pte::BlobSource denseConstantBytes(const ConstantTensor &c, const std::vector<uint8_t> &dimOrder,
                                   const std::string &what);

} // namespace exir::emit
