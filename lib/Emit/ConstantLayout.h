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
/// Cache-blocked, with register-block kernels for 2- and 4-byte elements (the
/// best the CPU has, picked at run time); any `elem` works. The source and
/// the destination must not overlap.
void transpose2d(const void *in, void *out, size_t rows, size_t cols, size_t inRowStride, size_t outRowStride,
                 size_t elem);

/// The register-block kernels transpose2d chooses from. Scalar runs
/// everywhere; SSE2 on every x86-64 CPU; AVX2 where the CPU has it.
enum class TransposeKernel { Scalar, Sse2, Avx2 };
/// Whether this CPU (and build) runs `kernel`.
bool transposeKernelAvailable(TransposeKernel kernel);
/// transpose2d with a given kernel (the scalar one when `kernel` is not
/// available): the tests compare every kernel with the scalar one.
void transpose2dWith(TransposeKernel kernel, const void *in, void *out, size_t rows, size_t cols,
                     size_t inRowStride, size_t outRowStride, size_t elem);

/// How this thread last read the storage of a large non-dense view while
/// streaming it (tests: each way must give the same bytes, and a sparse
/// storage must not be read whole).
enum class StorageRead { None, Buffered, Mapped, Sparse, Whole };
StorageRead lastStorageRead();

/// The bytes of `c` laid out densely in `dimOrder`. A dense view is a range of
/// the storage (the whole DataRef, CRC-checked while streaming, when it covers
/// it exactly); any other view is gathered in memory from the storage. `what`
/// names the constant in errors ("constant 'w'"). Throws exir::Error when the
/// view reads past the referenced bytes.
pte::BlobSource denseConstantBytes(const ConstantTensor &c, const std::vector<uint8_t> &dimOrder,
                                   const std::string &what);

} // namespace exir::emit
