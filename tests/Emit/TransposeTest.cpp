//===- tests/Emit/TransposeTest.cpp - the 2-D transpose kernel -------------===//
// transpose2d against a naive element loop: every element width the emitter
// meets (and an odd one), sizes that are not multiples of the 4x4 register
// blocks or the 64x64 tiles, and row strides wider than the rows.
#include "Emit/ConstantLayout.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

using namespace exir::emit;

namespace {
std::vector<unsigned char> naive(const std::vector<unsigned char> &in, size_t rows, size_t cols, size_t inRow,
                                 size_t outRow, size_t elem) {
  std::vector<unsigned char> out(cols * outRow * elem, 0xAB);
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) std::memcpy(&out[(c * outRow + r) * elem], &in[(r * inRow + c) * elem], elem);
  return out;
}
} // namespace

TEST_CASE("transpose2d matches a naive loop", "[transpose]") {
  size_t elem = GENERATE(1, 2, 3, 4, 8);
  size_t rows = GENERATE(1, 3, 4, 5, 63, 64, 65, 130);
  size_t cols = GENERATE(1, 2, 4, 7, 64, 67, 129);
  size_t inPad = GENERATE(0, 5);
  size_t outPad = GENERATE(0, 3);
  size_t inRow = cols + inPad, outRow = rows + outPad;
  std::mt19937 rng(unsigned(elem * 131 + rows * 7 + cols));
  std::vector<unsigned char> in(rows * inRow * elem);
  for (auto &b : in) b = static_cast<unsigned char>(rng());
  std::vector<unsigned char> out(cols * outRow * elem, 0xAB);
  transpose2d(in.data(), out.data(), rows, cols, inRow, outRow, elem);
  // The padding between destination rows is left alone.
  CHECK(out == naive(in, rows, cols, inRow, outRow, elem));
}

TEST_CASE("transpose2d of a 4-byte NaN keeps its bits", "[transpose]") {
  // A signalling NaN payload must come out as it went in (no float moves).
  std::vector<uint32_t> in(16, 0x7F800001u), out(16, 0);
  in[5] = 0xFFC00123u;
  transpose2d(in.data(), out.data(), 4, 4, 4, 4, 4);
  CHECK(out[5 % 4 * 4 + 5 / 4] == 0xFFC00123u);
  CHECK(out[0] == 0x7F800001u);
}

TEST_CASE("every transpose kernel matches the scalar one on odd shapes and alignments", "[transpose]") {
  // The SIMD kernels (chosen at run time) cover whole register blocks and
  // leave the edges to the scalar code: sizes around the blocks (4, 8, 16)
  // and the 64x64 tiles, strides wider than the rows, and buffers not aligned
  // even to their element size. A kernel this CPU lacks is skipped.
  auto kernel = GENERATE(TransposeKernel::Sse2, TransposeKernel::Avx2);
  if (!transposeKernelAvailable(kernel)) return;
  size_t elem = GENERATE(1, 2, 4, 8);
  size_t rows = GENERATE(1, 7, 8, 9, 15, 16, 17, 64, 65, 200);
  size_t cols = GENERATE(1, 3, 8, 15, 16, 17, 33, 64, 71, 130);
  size_t inPad = GENERATE(0, 1);
  size_t misalign = GENERATE(0, 1, 3);
  size_t inRow = cols + inPad * 9, outRow = rows + inPad * 5;
  std::mt19937 rng(unsigned(elem * 1009 + rows * 31 + cols * 7 + misalign));
  std::vector<unsigned char> inStore(rows * inRow * elem + misalign);
  for (auto &b : inStore) b = static_cast<unsigned char>(rng());
  const unsigned char *in = inStore.data() + misalign;
  std::vector<unsigned char> want(cols * outRow * elem + misalign, 0xAB), got = want;
  transpose2dWith(TransposeKernel::Scalar, in, want.data() + misalign, rows, cols, inRow, outRow, elem);
  transpose2dWith(kernel, in, got.data() + misalign, rows, cols, inRow, outRow, elem);
  REQUIRE(got == want);
}

TEST_CASE("the scalar transpose kernel matches a naive loop", "[transpose]") {
  size_t elem = GENERATE(2, 4);
  size_t rows = GENERATE(5, 64, 67), cols = GENERATE(9, 64, 70);
  std::mt19937 rng(unsigned(elem + rows * 3 + cols));
  std::vector<unsigned char> in(rows * cols * elem);
  for (auto &b : in) b = static_cast<unsigned char>(rng());
  std::vector<unsigned char> out(cols * rows * elem, 0xAB);
  transpose2dWith(TransposeKernel::Scalar, in.data(), out.data(), rows, cols, cols, rows, elem);
  CHECK(out == naive(in, rows, cols, cols, rows, elem));
}
