//===- Emit/ConstantLayout.cpp - A constant's bytes as the runtime reads them -===//
#include "Emit/ConstantLayout.h"

#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <numeric>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace exir::emit {

std::vector<uint8_t> emittedDimOrder(const std::vector<uint8_t> &graphDimOrder) {
  std::vector<uint8_t> contiguous(graphDimOrder.size());
  std::iota(contiguous.begin(), contiguous.end(), uint8_t(0));
  // Channels-last (0, 2, 3, 1) and its 3-d form (0, 2, 3, 4, 1).
  bool channelsLast = graphDimOrder.size() >= 4 && graphDimOrder.size() <= 5 && graphDimOrder[0] == 0 &&
                      graphDimOrder.back() == 1;
  for (size_t i = 1; channelsLast && i + 1 < graphDimOrder.size(); ++i) channelsLast = graphDimOrder[i] == i + 1;
  return channelsLast ? graphDimOrder : contiguous;
}

namespace {

/// Transposes one tile of at most kTile x kTile elements of `elem` bytes,
/// from `rows` rows of `in` (row stride `inRow` elements) into `cols` rows of
/// `out` (row stride `outRow`).
using TileFn = void (*)(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow,
                        size_t elem);

/// Scalar, from element (r0, c0) on: along a destination row, so stores are
/// sequential. The SIMD kernels finish their edges with it.
template <size_t E>
void tileRest(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t elem,
              size_t r0, size_t c0) {
  size_t e = E ? E : elem;
  // The columns left of c0 for the rows below r0, then every row from c0 on.
  for (size_t c = 0; c < c0; ++c)
    for (size_t r = r0; r < rows; ++r) std::memcpy(out + (c * outRow + r) * e, in + (r * inRow + c) * e, e);
  for (size_t c = c0; c < cols; ++c)
    for (size_t r = 0; r < rows; ++r) std::memcpy(out + (c * outRow + r) * e, in + (r * inRow + c) * e, e);
}

/// `E` (0: `elem`) fixes the element size so the copies inline.
template <size_t E>
void tileScalar(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t elem) {
  tileRest<E>(in, out, rows, cols, inRow, outRow, elem, 0, 0);
}

#if defined(__x86_64__)
// Register blocks move whole rows with integer unpacks: bit-exact, no float
// semantics (a signalling NaN comes out as it went in). Each kernel covers
// the largest multiple of its block and leaves the edges to tileRest.

/// 4-byte elements, 4x4 blocks (SSE2, every x86-64 CPU has it).
void tile4Sse2(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t) {
  size_t rEnd = rows / 4 * 4, cEnd = cols / 4 * 4;
  for (size_t r0 = 0; r0 < rEnd; r0 += 4) {
    const char *s = in + r0 * inRow * 4;
    for (size_t c = 0; c < cEnd; c += 4) {
      __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + c * 4));
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + (inRow + c) * 4));
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + (2 * inRow + c) * 4));
      __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + (3 * inRow + c) * 4));
      __m128i ab0 = _mm_unpacklo_epi32(a, b), ab1 = _mm_unpackhi_epi32(a, b);
      __m128i xy0 = _mm_unpacklo_epi32(x, y), xy1 = _mm_unpackhi_epi32(x, y);
      char *d = out + (c * outRow + r0) * 4;
      _mm_storeu_si128(reinterpret_cast<__m128i *>(d), _mm_unpacklo_epi64(ab0, xy0));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(d + outRow * 4), _mm_unpackhi_epi64(ab0, xy0));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(d + 2 * outRow * 4), _mm_unpacklo_epi64(ab1, xy1));
      _mm_storeu_si128(reinterpret_cast<__m128i *>(d + 3 * outRow * 4), _mm_unpackhi_epi64(ab1, xy1));
    }
  }
  tileRest<4>(in, out, rows, cols, inRow, outRow, 4, rEnd, cEnd);
}

/// 2-byte elements, 8x8 blocks (SSE2).
void tile2Sse2(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t) {
  size_t rEnd = rows / 8 * 8, cEnd = cols / 8 * 8;
  for (size_t r0 = 0; r0 < rEnd; r0 += 8) {
    const char *s = in + r0 * inRow * 2;
    for (size_t c = 0; c < cEnd; c += 8) {
      __m128i v[8];
      for (size_t k = 0; k < 8; ++k)
        v[k] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + (k * inRow + c) * 2));
      __m128i t0 = _mm_unpacklo_epi16(v[0], v[1]), t1 = _mm_unpackhi_epi16(v[0], v[1]);
      __m128i t2 = _mm_unpacklo_epi16(v[2], v[3]), t3 = _mm_unpackhi_epi16(v[2], v[3]);
      __m128i t4 = _mm_unpacklo_epi16(v[4], v[5]), t5 = _mm_unpackhi_epi16(v[4], v[5]);
      __m128i t6 = _mm_unpacklo_epi16(v[6], v[7]), t7 = _mm_unpackhi_epi16(v[6], v[7]);
      __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
      __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
      __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
      __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
      __m128i o[8] = {_mm_unpacklo_epi64(u0, u4), _mm_unpackhi_epi64(u0, u4), _mm_unpacklo_epi64(u1, u5),
                      _mm_unpackhi_epi64(u1, u5), _mm_unpacklo_epi64(u2, u6), _mm_unpackhi_epi64(u2, u6),
                      _mm_unpacklo_epi64(u3, u7), _mm_unpackhi_epi64(u3, u7)};
      char *d = out + (c * outRow + r0) * 2;
      for (size_t k = 0; k < 8; ++k) _mm_storeu_si128(reinterpret_cast<__m128i *>(d + k * outRow * 2), o[k]);
    }
  }
  tileRest<2>(in, out, rows, cols, inRow, outRow, 2, rEnd, cEnd);
}

/// 4-byte elements, 8x8 blocks (AVX2): twice the SSE2 kernel's work per
/// instruction; a fifth of exir-emit's time on folded fp32 weights was the
/// transpose.
__attribute__((target("avx2"))) void tile4Avx2(const char *in, char *out, size_t rows, size_t cols,
                                               size_t inRow, size_t outRow, size_t) {
  size_t rEnd = rows / 8 * 8, cEnd = cols / 8 * 8;
  for (size_t r0 = 0; r0 < rEnd; r0 += 8) {
    const char *s = in + r0 * inRow * 4;
    for (size_t c = 0; c < cEnd; c += 8) {
      __m256i v[8];
      for (size_t k = 0; k < 8; ++k)
        v[k] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(s + (k * inRow + c) * 4));
      // Within each 128-bit lane: 4x4 transposes of rows 0-3 and 4-7.
      __m256i t0 = _mm256_unpacklo_epi32(v[0], v[1]), t1 = _mm256_unpackhi_epi32(v[0], v[1]);
      __m256i t2 = _mm256_unpacklo_epi32(v[2], v[3]), t3 = _mm256_unpackhi_epi32(v[2], v[3]);
      __m256i t4 = _mm256_unpacklo_epi32(v[4], v[5]), t5 = _mm256_unpackhi_epi32(v[4], v[5]);
      __m256i t6 = _mm256_unpacklo_epi32(v[6], v[7]), t7 = _mm256_unpackhi_epi32(v[6], v[7]);
      __m256i u0 = _mm256_unpacklo_epi64(t0, t2), u1 = _mm256_unpackhi_epi64(t0, t2);
      __m256i u2 = _mm256_unpacklo_epi64(t1, t3), u3 = _mm256_unpackhi_epi64(t1, t3);
      __m256i u4 = _mm256_unpacklo_epi64(t4, t6), u5 = _mm256_unpackhi_epi64(t4, t6);
      __m256i u6 = _mm256_unpacklo_epi64(t5, t7), u7 = _mm256_unpackhi_epi64(t5, t7);
      // Low lanes hold columns 0-3, high lanes columns 4-7.
      __m256i o[8] = {_mm256_permute2x128_si256(u0, u4, 0x20), _mm256_permute2x128_si256(u1, u5, 0x20),
                      _mm256_permute2x128_si256(u2, u6, 0x20), _mm256_permute2x128_si256(u3, u7, 0x20),
                      _mm256_permute2x128_si256(u0, u4, 0x31), _mm256_permute2x128_si256(u1, u5, 0x31),
                      _mm256_permute2x128_si256(u2, u6, 0x31), _mm256_permute2x128_si256(u3, u7, 0x31)};
      char *d = out + (c * outRow + r0) * 4;
      for (size_t k = 0; k < 8; ++k) _mm256_storeu_si256(reinterpret_cast<__m256i *>(d + k * outRow * 4), o[k]);
    }
  }
  tileRest<4>(in, out, rows, cols, inRow, outRow, 4, rEnd, cEnd);
}

#endif

/// The tile kernel of `kernel` for `elem`-byte elements; the scalar one where
/// it has none for that width.
TileFn tileKernel(TransposeKernel kernel, size_t elem) {
  switch (elem) {
#if defined(__x86_64__)
  case 2:
    // No AVX2 kernel: an 8x16 one (the SSE2 transpose in both lanes) ran at
    // two thirds of the SSE2 kernel's speed on a 1024x1024 fp16 weight.
    return kernel == TransposeKernel::Scalar ? tileScalar<2> : tile2Sse2;
  case 4:
    if (kernel == TransposeKernel::Avx2) return tile4Avx2;
    if (kernel == TransposeKernel::Sse2) return tile4Sse2;
    return tileScalar<4>;
#else
  case 2: return tileScalar<2>;
  case 4: return tileScalar<4>;
#endif
  case 1: return tileScalar<1>;
  case 8: return tileScalar<8>;
  default: return tileScalar<0>;
  }
}

template <size_t E>
void transposeBlocked(TileFn tile, const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow,
                      size_t elem) {
  // 64 x 64 tiles, each transposed into a small contiguous buffer and then
  // copied out a destination row at a time: with a power-of-two row stride
  // (a 1024-wide weight) the tile's 64 destination rows would fall in the
  // same cache sets and evict each other's partly written lines.
  constexpr size_t kTile = 64;
  size_t e = E ? E : elem;
  alignas(64) static thread_local char tmp[kTile * kTile * 8];
  for (size_t r = 0; r < rows; r += kTile)
    for (size_t c = 0; c < cols; c += kTile) {
      size_t tr = std::min(kTile, rows - r), tc = std::min(kTile, cols - c);
      const char *src = in + (r * inRow + c) * e;
      char *dst = out + (c * outRow + r) * e;
      if (e > 8) {
        tile(src, dst, tr, tc, inRow, outRow, elem);
        continue;
      }
      tile(src, tmp, tr, tc, inRow, kTile, elem);
      if (E != 0 && tr == kTile) {
        // A whole tile row: a fixed-size copy the compiler inlines (a libc
        // memcpy call per 256-byte row cost as much as the transpose).
        for (size_t k = 0; k < tc; ++k) std::memcpy(dst + k * outRow * e, tmp + k * kTile * e, kTile * E);
      } else {
        for (size_t k = 0; k < tc; ++k) std::memcpy(dst + k * outRow * e, tmp + k * kTile * e, tr * e);
      }
    }
}

/// The whole reference; its CRC-32, when recorded, is checked as it streams.
pte::BlobSource wholeReference(const DataRef &ref, const std::string &what) {
  if (ref.inlineBytes) return pte::BlobSource::fromBytes(*ref.inlineBytes);
  pte::BlobSource blob = pte::BlobSource::fromFile(ref.file, ref.offset, ref.length);
  return ref.crc32 ? blob.withExpectedCrc32(*ref.crc32, what) : blob;
}


/// A strided view over a storage, to be laid out densely in `dimOrder`.
struct ViewLayout {
  std::vector<int64_t> sizes, strides;
  uint64_t offset = 0; // elements
  std::vector<uint8_t> dimOrder;
  uint64_t elem = 0;
};

/// One tile of the two innermost dims; a fixed element size lets memcpy inline.
template <size_t E>
void copyTile(const char *in, char *out, int64_t ni, int64_t nj, int64_t si, int64_t sj, int64_t outRow, size_t elem) {
  int64_t e = int64_t(E ? E : elem);
  for (int64_t j = 0; j < nj; ++j)
    for (int64_t i = 0; i < ni; ++i) std::memcpy(out + (j * outRow + i) * e, in + (i * si + j * sj) * e, size_t(e));
}

/// Feeds the view of `in` (the storage bytes) to `sink`, densely in its dim
/// order, in bands of a few MB. The two innermost dims of the order go tile by
/// tile, so a transposed weight (a folded permute_copy) reads and writes whole
/// cache lines.
void gather(const char *in, const ViewLayout &v, const std::function<void(std::string_view)> &sink) {
  size_t rank = v.sizes.size();
  int64_t elem = int64_t(v.elem);
  if (rank == 0) {
    sink(std::string_view(in + v.offset * v.elem, v.elem));
    return;
  }
  size_t di = v.dimOrder[rank - 1];
  int64_t ni = v.sizes[di], si = v.strides[di];
  int64_t nj = rank >= 2 ? v.sizes[v.dimOrder[rank - 2]] : 1, sj = rank >= 2 ? v.strides[v.dimOrder[rank - 2]] : 0;
  size_t outer = rank >= 2 ? rank - 2 : 0;
  std::vector<int64_t> index(outer, 0);
  constexpr int64_t kTile = 64;
  int64_t band = std::max<int64_t>(1, (int64_t(4) << 20) / std::max<int64_t>(1, ni * elem)); // rows per band
  // Reused, not zero-filled: 225 folded weights cleared 900 MB of bands that
  // were then overwritten.
  size_t bandBytes = size_t(std::min(band, nj) * ni * elem);
  thread_local std::unique_ptr<char[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < bandBytes) {
    buffer.reset();
    buffer.reset(new char[bandBytes]);
    capacity = bandBytes;
  }
  while (true) {
    uint64_t base = v.offset;
    for (size_t k = 0; k < outer; ++k) base += uint64_t(index[k] * v.strides[v.dimOrder[k]]);
    const char *plane = in + int64_t(base) * elem;
    for (int64_t j0 = 0; j0 < nj; j0 += band) {
      int64_t rows = std::min(band, nj - j0);
      char *dst = buffer.get();
      if (si == 1) {
        for (int64_t j = 0; j < rows; ++j)
          std::memcpy(dst + j * ni * elem, plane + (j0 + j) * sj * elem, size_t(ni * elem));
      } else if (sj == 1 && si > 0) {
        // A plain transpose (a folded permute of a linear's weight).
        transpose2d(plane + j0 * elem, dst, size_t(ni), size_t(rows), size_t(si), size_t(ni), size_t(elem));
      } else {
        for (int64_t jb = 0; jb < rows; jb += kTile)
          for (int64_t ib = 0; ib < ni; ib += kTile) {
            const char *src = plane + (ib * si + (j0 + jb) * sj) * elem;
            char *d = dst + (jb * ni + ib) * elem;
            int64_t ti = std::min(kTile, ni - ib), tj = std::min(kTile, rows - jb);
            switch (elem) {
            case 1: copyTile<1>(src, d, ti, tj, si, sj, ni, 1); break;
            case 2: copyTile<2>(src, d, ti, tj, si, sj, ni, 2); break;
            case 4: copyTile<4>(src, d, ti, tj, si, sj, ni, 4); break;
            case 8: copyTile<8>(src, d, ti, tj, si, sj, ni, 8); break;
            default: copyTile<0>(src, d, ti, tj, si, sj, ni, size_t(elem)); break;
            }
          }
      }
      sink(std::string_view(dst, size_t(rows * ni * elem)));
    }
    // Next index of the outer dims, the last of them fastest.
    size_t k = outer;
    while (k > 0 && ++index[k - 1] == v.sizes[v.dimOrder[k - 1]]) index[--k] = 0;
    if (k == 0) break;
  }
}

} // namespace

bool transposeKernelAvailable(TransposeKernel kernel) {
  switch (kernel) {
  case TransposeKernel::Scalar: return true;
#if defined(__x86_64__)
  case TransposeKernel::Sse2: return true;
  case TransposeKernel::Avx2: return __builtin_cpu_supports("avx2");
#else
  default: return false;
#endif
  }
  return false;
}

void transpose2dWith(TransposeKernel kernel, const void *in, void *out, size_t rows, size_t cols,
                     size_t inRowStride, size_t outRowStride, size_t elem) {
  if (!transposeKernelAvailable(kernel)) kernel = TransposeKernel::Scalar;
  TileFn tile = tileKernel(kernel, elem);
  auto *s = static_cast<const char *>(in);
  auto *d = static_cast<char *>(out);
  switch (elem) {
  case 1: transposeBlocked<1>(tile, s, d, rows, cols, inRowStride, outRowStride, 1); break;
  case 2: transposeBlocked<2>(tile, s, d, rows, cols, inRowStride, outRowStride, 2); break;
  case 4: transposeBlocked<4>(tile, s, d, rows, cols, inRowStride, outRowStride, 4); break;
  case 8: transposeBlocked<8>(tile, s, d, rows, cols, inRowStride, outRowStride, 8); break;
  default: transposeBlocked<0>(tile, s, d, rows, cols, inRowStride, outRowStride, elem); break;
  }
}

void transpose2d(const void *in, void *out, size_t rows, size_t cols, size_t inRowStride, size_t outRowStride,
                 size_t elem) {
  // The best kernel this CPU runs, chosen once.
  static const TransposeKernel best =
      transposeKernelAvailable(TransposeKernel::Avx2)   ? TransposeKernel::Avx2
      : transposeKernelAvailable(TransposeKernel::Sse2) ? TransposeKernel::Sse2
                                                        : TransposeKernel::Scalar;
  transpose2dWith(best, in, out, rows, cols, inRowStride, outRowStride, elem);
}

namespace {

/// Storage element of dense element `n` of the view.
uint64_t storageElement(const ViewLayout &v, uint64_t n) {
  uint64_t element = v.offset;
  for (size_t k = v.sizes.size(); k-- > 0;) {
    size_t d = v.dimOrder[k];
    uint64_t size = uint64_t(v.sizes[d]);
    element += (n % size) * uint64_t(v.strides[d]);
    n /= size;
  }
  return element;
}

/// A sample's elements usually lie in consecutive rows of one storage (64
/// elements of a transposed weight: 256 KB apart at most for a 1024-wide row):
/// reading that span in one pread costs less than a pread per element (43,200
/// four-byte system calls on a 32-layer Llama; exir-emit 1.00 -> 0.91 s).
/// Appends elements [first, last) to `bytes`; false (nothing appended) when the
/// span is too wide, leaves the storage or cannot be read.
bool gatherFromSpan(int fd, const DataRef &ref, const ViewLayout &v, uint64_t first, uint64_t last,
                    std::string &bytes) {
  // Up to 16 KB per element: a system call costs about as much as copying that.
  const uint64_t maxSpanBytes = (last - first) * (uint64_t(16) << 10);
  uint64_t low = UINT64_MAX, high = 0;
  for (uint64_t n = first; n < last; ++n) {
    uint64_t at = storageElement(v, n) * v.elem;
    if (at + v.elem > ref.length) return false;
    low = std::min(low, at);
    high = std::max(high, at + v.elem);
  }
  if (low >= high || high - low > maxSpanBytes) return false;
  std::string span(size_t(high - low), '\0');
  if (readAt(fd, span.data(), span.size(), ref.offset + low) != span.size()) return false;
  for (uint64_t n = first; n < last; ++n)
    bytes.append(span.data() + (storageElement(v, n) * v.elem - low), v.elem);
  return true;
}

/// Bytes [offset, offset + length) of the gathered view, read element by
/// element from the storage file (DistinctBlobs samples a few KB of a blob;
/// gathering all of it for that would read the whole storage).
std::string gatherPart(const DataRef &ref, const ViewLayout &v, uint64_t offset, uint64_t length) {
  int fd = ::open(ref.file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error("cannot open file", ref.file);
  char element[16];
  uint64_t first = offset / v.elem, last = (offset + length + v.elem - 1) / v.elem;
  std::string bytes;
  bytes.reserve(size_t((last - first) * v.elem));
  // Mapped (only the touched pages fault in, 16 at a time with fault-around),
  // a long part costs a few page faults instead of a pread per element (4 KiB
  // samples of 225 transposed weights made 691k system calls). A few elements
  // (a DistinctBlobs sample part of 256 bytes: 64 fp32 elements, each in its
  // own row of a transposed weight) cost less as a pread each than as faults
  // on a mapping of the whole storage and its tear-down.
  struct stat st;
  uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t start = ref.offset / page * page, skip = ref.offset - start;
  constexpr uint64_t kPreadElements = 256;
  bool few = last - first <= kPreadElements && v.elem <= sizeof element;
  void *map = !few && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ref.length > 0 &&
                      ref.offset + ref.length <= uint64_t(st.st_size)
                  ? ::mmap(nullptr, size_t(skip + ref.length), PROT_READ, MAP_PRIVATE, fd, off_t(start))
                  : MAP_FAILED;
  if (map != MAP_FAILED) {
    const char *storage = static_cast<const char *>(map) + skip;
    bool inside = true;
    for (uint64_t n = first; n < last && inside; ++n) {
      uint64_t at = storageElement(v, n) * v.elem;
      inside = at + v.elem <= ref.length;
      if (inside) bytes.append(storage + at, v.elem);
    }
    ::munmap(map, size_t(skip + ref.length));
    if (inside) {
      ::close(fd);
      return bytes.substr(size_t(offset - first * v.elem), size_t(length));
    }
    bytes.clear(); // the pread loop below reports the element outside the file
  }
  if (few && gatherFromSpan(fd, ref, v, first, last, bytes)) {
    ::close(fd);
    return bytes.substr(size_t(offset - first * v.elem), size_t(length));
  }
  for (uint64_t n = first; n < last; ++n) {
    uint64_t at = ref.offset + storageElement(v, n) * v.elem;
    ssize_t got = v.elem <= sizeof element ? ::pread(fd, element, v.elem, off_t(at)) : -1;
    if (got != ssize_t(v.elem)) {
      ::close(fd);
      throw Error("cannot read " + std::to_string(v.elem) + " bytes at offset " + std::to_string(at), ref.file);
    }
    bytes.append(element, v.elem);
  }
  ::close(fd);
  return bytes.substr(size_t(offset - first * v.elem), size_t(length));
}

/// Storages up to this size are read into a buffer (gatherBuffered); larger
/// ones are mapped (gatherMapped), so the buffer, kept for the next storage,
/// never holds more than this.
constexpr uint64_t kBufferedMax = uint64_t(64) << 20;

/// One buffer per thread for every buffered storage: a fresh one per weight
/// would fault in (and zero) new pages for each of them. Mapped rather than
/// allocated, so release() gives the pages back at once (an allocator keeps
/// freed pages for a while: they would count in the peak RSS under a mapped
/// storage).
struct StorageBuffer {
  char *bytes = nullptr;
  uint64_t capacity = 0;
  ~StorageBuffer() { release(); }
  char *get(uint64_t size) {
    if (capacity < size) {
      release(); // not both at once
      void *map = ::mmap(nullptr, size_t(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (map == MAP_FAILED) return nullptr;
      ::madvise(map, size_t(size), MADV_HUGEPAGE); // fewer page faults; a hint only
      bytes = static_cast<char *>(map);
      capacity = size;
    }
    return bytes;
  }
  void release() {
    if (bytes) ::munmap(bytes, size_t(capacity));
    bytes = nullptr;
    capacity = 0;
  }
};
thread_local StorageBuffer storageBuffer;

/// The storage's file, opened once for whichever reader below serves it:
/// `fd` is -1 unless the storage is a non-empty range of a regular file that
/// holds all of it (mapping past the end of a file would fault with SIGBUS
/// instead of failing). `holes`: the range has some (a sparse weights file).
struct StorageFile {
  int fd = -1;
  bool holes = false;
  explicit StorageFile(const pte::BlobSource &storage) {
    if (!storage.isFile() || storage.size() == 0) return;
    fd = ::open(storage.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    uint64_t end = storage.offset() + storage.size();
    off_t hole = ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || end > uint64_t(st.st_size)
                     ? -1
                     : ::lseek(fd, off_t(storage.offset()), SEEK_HOLE);
    if (hole < 0) {
      ::close(fd);
      fd = -1;
      return;
    }
    holes = uint64_t(hole) < end;
  }
  StorageFile(const StorageFile &) = delete;
  StorageFile &operator=(const StorageFile &) = delete;
  ~StorageFile() {
    if (fd >= 0) ::close(fd);
  }
};

/// Reads the storage's file range into a reused buffer in pieces of a few
/// hundred KiB, checking each piece's CRC-32 while it is still in the cache
/// (over a mapping the CRC pass was the first, uncached read of every byte,
/// and the mapping's page-table set-up and tear-down cost more than the copy),
/// then gathers `v` from the buffer, which the cache mostly still holds. False,
/// having fed nothing to `sink`, when the range (one without holes, `fd` its
/// file) is larger than kBufferedMax, cannot be read or does not check out:
/// the caller then maps it or reports the error from its streamed read.
bool gatherBuffered(int fd, const pte::BlobSource &storage, const DataRef &ref, const ViewLayout &v,
                    const std::function<void(std::string_view)> &sink) {
  uint64_t offset = storage.offset(), length = storage.size();
  char *buffer = length > kBufferedMax ? nullptr : storageBuffer.get(length);
  if (!buffer) return false;
  constexpr uint64_t kPiece = uint64_t(256) << 10; // in L2 while its CRC is taken
  uint32_t crc = 0;
  bool ok = true;
  for (uint64_t at = 0; ok && at < length;) {
    size_t piece = size_t(std::min(kPiece, length - at));
    ok = readAt(fd, buffer + at, piece, offset + at) == piece;
    if (ok) crc = crc32Update(crc, std::string_view(buffer + at, piece));
    at += piece;
  }
  if (!ok || (ref.crc32 && crc != *ref.crc32)) return false;
  gather(buffer, v, sink);
  return true;
}

/// Unmaps on every way out (gather may throw from the sink).
struct Unmapper {
  void *at;
  size_t size;
  Unmapper(void *at, size_t size) : at(at), size(size) {}
  Unmapper(const Unmapper &) = delete;
  Unmapper &operator=(const Unmapper &) = delete;
  ~Unmapper() { ::munmap(at, size); }
};

/// Gathers `v` straight from a read-only mapping of the storage's file range,
/// its CRC-32 checked on the mapping: no copy of the storage into a buffer
/// (pread's copy was a sixth of exir-emit on a 2 GB model). False, having fed
/// nothing to `sink`, when the range cannot be mapped or does not check out:
/// the caller's streamed read then reports the error as it always has.
bool gatherMapped(int fd, const pte::BlobSource &storage, const DataRef &ref, const ViewLayout &v,
                  const std::function<void(std::string_view)> &sink) {
  uint64_t offset = storage.offset(), length = storage.size();
  // The mapping counts in the peak RSS: not on top of the buffer's 64 MB.
  storageBuffer.release();
  uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t start = offset / page * page, skip = offset - start;
  // MAP_POPULATE maps the cached pages in one go instead of one fault per page.
  void *map = ::mmap(nullptr, size_t(skip + length), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(start));
  if (map == MAP_FAILED) return false;
  Unmapper unmap{map, size_t(skip + length)};
  const char *bytes = static_cast<const char *>(map) + skip;
  bool ok = !ref.crc32 || crc32Update(0, std::string_view(bytes, size_t(length))) == *ref.crc32;
  if (ok) gather(bytes, v, sink);
  return ok;
}

/// Gathers `v` from a storage whose file range has holes (a sparse weights
/// file) without reading or backing the holes: the range gets an anonymous
/// mapping of its size, only its data extents are read into it, and the
/// untouched pages read as zeros (the kernel's zero page, which no RSS
/// counts). Read whole into a buffer instead, as the streamed fallback does,
/// a 32000 x 1024 output projection cost 131 MB on each thread that met one.
/// The CRC-32 is taken over the extents read and the holes between them.
/// False, having fed nothing to `sink`, when the range cannot be read this
/// way or does not check out (the streamed read then reports the error).
bool gatherSparse(int fd, const pte::BlobSource &storage, const DataRef &ref, const ViewLayout &v,
                  const std::function<void(std::string_view)> &sink) {
  const uint64_t offset = storage.offset(), length = storage.size(), end = offset + length;
  void *map = ::mmap(nullptr, size_t(length), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return false;
  Unmapper unmap{map, size_t(length)};
  // A hint only: holes then read as the huge zero page, a fault per 2 MiB instead of per 4 KiB.
  ::madvise(map, size_t(length), MADV_HUGEPAGE);
  char *bytes = static_cast<char *>(map);
  uint32_t crc = 0;
  bool ok = true;
  for (uint64_t at = offset; ok && at < end;) {
    // SEEK_DATA fails with ENXIO when only a hole is left before the end of the file.
    off_t data = ::lseek(fd, off_t(at), SEEK_DATA);
    if (data < 0 && errno != ENXIO) return false;
    uint64_t from = data < 0 ? end : std::min(end, uint64_t(data));
    crc = crc32UpdateZeros(crc, from - at);
    if (from == end) break;
    off_t hole = ::lseek(fd, data, SEEK_HOLE);
    uint64_t to = hole < 0 ? end : std::min(end, uint64_t(hole));
    ok = hole >= 0 && to > from && readAt(fd, bytes + (from - offset), size_t(to - from), from) == to - from;
    if (ok) crc = crc32Update(crc, std::string_view(bytes + (from - offset), size_t(to - from)));
    at = to;
  }
  ok = ok && (!ref.crc32 || crc == *ref.crc32);
  if (ok) gather(bytes, v, sink);
  return ok;
}

thread_local StorageRead lastRead = StorageRead::None;

/// Small gathered views are appended to shared chunks of a few MiB: one
/// allocation per chunk instead of a string and its shared owner per view
/// (50k folded 1 KiB weights took 64 MB in 1.25 KiB allocator bins, all
/// fresh pages). A chunk never grows past its reserved capacity, so the
/// views into it stay put while later ones are appended.
constexpr uint64_t kGatheredChunk = uint64_t(4) << 20;
thread_local std::shared_ptr<std::string> gatheredChunkPtr;

/// The chunk to append `bytes` (at most kGatheredChunk) to.
std::string &gatheredChunk(uint64_t bytes) {
  if (!gatheredChunkPtr || gatheredChunkPtr->capacity() - gatheredChunkPtr->size() < bytes) {
    gatheredChunkPtr = std::make_shared<std::string>();
    gatheredChunkPtr->reserve(size_t(kGatheredChunk));
  }
  return *gatheredChunkPtr;
}

std::shared_ptr<const std::string> gatheredChunkOwner() { return gatheredChunkPtr; }

} // namespace

StorageRead lastStorageRead() { return lastRead; }

pte::BlobSource denseConstantBytes(const ConstantTensor &c, const std::vector<uint8_t> &dimOrder,
                                   const std::string &what) {
  size_t rank = c.sizes.size();
  if (dimOrder.size() != rank) throw Error(what + ": dim order of rank " + std::to_string(dimOrder.size()) + " for a rank " + std::to_string(rank) + " tensor");
  uint64_t length = c.data.inlineBytes ? c.data.inlineBytes->size() : c.data.length;
  std::optional<uint64_t> count = c.numel();
  std::optional<uint64_t> needed = c.storageBytesNeeded();
  if (!count || !needed) throw Error(what + ": its sizes, strides and storage offset do not describe a valid view");
  if (*needed > length)
    throw Error(what + ": the view reads " + std::to_string(*needed) + " bytes of its storage but the data reference holds " +
                std::to_string(length));
  uint64_t elem = elementSize(c.dtype);
  // A broadcast view (stride 0) reads few storage bytes but may have a huge
  // element count: its dense size must fit too.
  std::optional<uint64_t> denseBytes = checkedMul<uint64_t>(*count, elem);
  if (!denseBytes || *denseBytes > uint64_t(INT64_MAX))
    throw Error(what + ": " + std::to_string(*count) + " elements of " + std::to_string(elem) +
                " bytes are more than 2^63-1 bytes");
  uint64_t bytes = *denseBytes;
  if (bytes == 0) return pte::BlobSource::fromBytes("");

  // Strides of the same sizes stored densely in `dimOrder` (innermost last).
  std::vector<int64_t> dense(rank, 0);
  int64_t running = 1;
  for (size_t k = rank; k-- > 0;) {
    dense[dimOrder[k]] = running;
    running *= c.sizes[dimOrder[k]];
  }
  std::vector<int64_t> strides = c.strides.empty() ? dense : c.strides;
  bool isDense = true;
  for (size_t d = 0; d < rank; ++d) isDense &= c.sizes[d] == 1 || strides[d] == dense[d];

  uint64_t start = uint64_t(c.storageOffset) * elem;
  if (isDense) {
    if (start == 0 && bytes == length) return wholeReference(c.data, what);
    if (c.data.inlineBytes) return pte::BlobSource::fromBytes(c.data.inlineBytes->substr(start, bytes));
    // A slice of the storage: the file size is checked by every tool, but the
    // range's CRC-32 covers the whole storage, so it cannot be checked here.
    return pte::BlobSource::fromFile(c.data.file, c.data.offset + start, bytes);
  }

  // Not dense (a strided slice, a broadcast, a permutation the runtime does not
  // take): gathered in `dimOrder`. Reading the whole storage checks its CRC.
  // From a file it is gathered when written, so the gathered constants of a
  // program (a folded transpose per linear) are never all in memory at once.
  ViewLayout layout{c.sizes, strides, uint64_t(c.storageOffset), dimOrder, elem};
  // Small views are gathered now: reading a small storage once is cheaper than
  // the element-wise reads of DistinctBlobs' samples (12,500 small weights).
  constexpr uint64_t kEagerBytes = uint64_t(1) << 20;
  if (c.data.inlineBytes || (length <= kEagerBytes && bytes <= kEagerBytes)) {
    if (bytes > kEagerBytes) { // a large inline view
      std::string out;
      out.reserve(bytes);
      gather(c.data.inlineBytes->data(), layout, [&](std::string_view band) { out.append(band); });
      return pte::BlobSource::fromBytes(std::move(out));
    }
    // The storage goes to a reused buffer (checked by its CRC-32 as it
    // streams), the view into the shared chunk of gathered bytes.
    thread_local std::string storage;
    const char *in = c.data.inlineBytes ? c.data.inlineBytes->data() : nullptr;
    if (!in) {
      storage.clear();
      wholeReference(c.data, what).forEachChunk([&](std::string_view chunk) { storage.append(chunk); });
      in = storage.data();
    }
    std::string &out = gatheredChunk(bytes);
    uint64_t at = out.size();
    gather(in, layout, [&](std::string_view band) { out.append(band); });
    return pte::BlobSource::fromBuffer(gatheredChunkOwner(), at, bytes);
  }
  auto generator = std::make_shared<pte::BlobSource::Generator>();
  auto storage = std::make_shared<const pte::BlobSource>(wholeReference(c.data, what));
  auto shared = std::make_shared<const ViewLayout>(std::move(layout));
  generator->produce = [storage, ref = c.data, shared](const std::function<void(std::string_view)> &sink) {
    // A range with holes is never mapped or read whole: each hole page would
    // be allocated and zeroed.
    if (StorageFile file(*storage); file.fd >= 0) {
      if (file.holes) {
        if (gatherSparse(file.fd, *storage, ref, *shared, sink)) return void(lastRead = StorageRead::Sparse);
      } else {
        if (gatherBuffered(file.fd, *storage, ref, *shared, sink)) return void(lastRead = StorageRead::Buffered);
        if (gatherMapped(file.fd, *storage, ref, *shared, sink)) return void(lastRead = StorageRead::Mapped);
      }
    }
    lastRead = StorageRead::Whole;
    // One buffer per thread for every storage: a fresh one per weight would
    // fault in (and zero) new pages for each of them.
    thread_local std::string all;
    all.clear();
    all.reserve(storage->size());
    storage->forEachChunk([&](std::string_view chunk) { all.append(chunk); });
    gather(all.data(), *shared, sink);
  };
  generator->part = [ref = c.data, shared](uint64_t offset, uint64_t length) {
    return gatherPart(ref, *shared, offset, length);
  };
  return pte::BlobSource::fromGenerator(bytes, std::move(generator));
}

} // namespace exir::emit
