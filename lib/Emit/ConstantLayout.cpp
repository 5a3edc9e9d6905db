//===- Emit/ConstantLayout.cpp - A constant's bytes as the runtime reads them -===//
#include "Emit/ConstantLayout.h"

#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/Hash.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
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

/// One tile of transpose2d, at most kTile x kTile; `E` (0: `elem`) fixes the
/// element size so the copies inline.
template <size_t E>
void transposeTile(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t elem) {
  size_t e = E ? E : elem;
  size_t r0 = 0;
#if defined(__SSE2__)
  if constexpr (E == 4) {
    // 4x4 blocks in registers: four 16-byte loads, integer unpacks (bit-exact,
    // no float semantics), four 16-byte stores.
    for (; r0 + 4 <= rows; r0 += 4) {
      const char *s = in + r0 * inRow * 4;
      size_t c = 0;
      for (; c + 4 <= cols; c += 4) {
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
      for (; c < cols; ++c)
        for (size_t r = r0; r < r0 + 4; ++r) std::memcpy(out + (c * outRow + r) * 4, in + (r * inRow + c) * 4, 4);
    }
  }
#endif
  // Scalar: along a destination row, so stores are sequential.
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = r0; r < rows; ++r) std::memcpy(out + (c * outRow + r) * e, in + (r * inRow + c) * e, e);
}

template <size_t E>
void transposeBlocked(const char *in, char *out, size_t rows, size_t cols, size_t inRow, size_t outRow, size_t elem) {
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
        transposeTile<E>(src, dst, tr, tc, inRow, outRow, elem);
        continue;
      }
      transposeTile<E>(src, tmp, tr, tc, inRow, kTile, elem);
      for (size_t k = 0; k < tc; ++k) std::memcpy(dst + k * outRow * e, tmp + k * kTile * e, tr * e);
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
  std::string buffer(size_t(std::min(band, nj) * ni * elem), '\0');
  while (true) {
    uint64_t base = v.offset;
    for (size_t k = 0; k < outer; ++k) base += uint64_t(index[k] * v.strides[v.dimOrder[k]]);
    const char *plane = in + int64_t(base) * elem;
    for (int64_t j0 = 0; j0 < nj; j0 += band) {
      int64_t rows = std::min(band, nj - j0);
      char *dst = buffer.data();
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

void transpose2d(const void *in, void *out, size_t rows, size_t cols, size_t inRowStride, size_t outRowStride,
                 size_t elem) {
  auto *s = static_cast<const char *>(in);
  auto *d = static_cast<char *>(out);
  switch (elem) {
  case 1: transposeBlocked<1>(s, d, rows, cols, inRowStride, outRowStride, 1); break;
  case 2: transposeBlocked<2>(s, d, rows, cols, inRowStride, outRowStride, 2); break;
  case 4: transposeBlocked<4>(s, d, rows, cols, inRowStride, outRowStride, 4); break;
  case 8: transposeBlocked<8>(s, d, rows, cols, inRowStride, outRowStride, 8); break;
  default: transposeBlocked<0>(s, d, rows, cols, inRowStride, outRowStride, elem); break;
  }
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
  // a sample costs a few page faults instead of a pread per element: 3 samples
  // of 225 transposed weights made 691k system calls.
  struct stat st;
  uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t start = ref.offset / page * page, skip = ref.offset - start;
  void *map = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ref.length > 0 &&
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

/// Gathers `v` straight from a read-only mapping of the storage's file range,
/// its CRC-32 checked on the mapping: no copy of the storage into a buffer
/// (pread's copy was a sixth of exir-emit on a 2 GB model). False, having fed
/// nothing to `sink`, when the range cannot be mapped or does not check out:
/// the caller's streamed read then reports the error as it always has.
bool gatherMapped(const pte::BlobSource &storage, const DataRef &ref, const ViewLayout &v,
                  const std::function<void(std::string_view)> &sink) {
  if (!storage.isFile() || storage.size() == 0) return false;
  int fd = ::open(storage.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  uint64_t offset = storage.offset(), length = storage.size();
  // Mapping past the end of the file would fault (SIGBUS) instead of failing.
  // A range with holes (a sparse weights file) is left to the streamed read,
  // which skips them; mapped, each hole page would be allocated and zeroed.
  off_t hole = ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ? -1 : ::lseek(fd, off_t(offset), SEEK_HOLE);
  if (hole < 0 || offset + length > uint64_t(st.st_size) || uint64_t(hole) < offset + length) {
    ::close(fd);
    return false;
  }
  uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  uint64_t start = offset / page * page, skip = offset - start;
  // MAP_POPULATE maps the cached pages in one go instead of one fault per page.
  void *map = ::mmap(nullptr, size_t(skip + length), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, off_t(start));
  ::close(fd);
  if (map == MAP_FAILED) return false;
  const char *bytes = static_cast<const char *>(map) + skip;
  bool ok = !ref.crc32 || crc32Update(0, std::string_view(bytes, size_t(length))) == *ref.crc32;
  if (ok) {
    try {
      gather(bytes, v, sink);
    } catch (...) {
      ::munmap(map, size_t(skip + length));
      throw;
    }
  }
  ::munmap(map, size_t(skip + length));
  return ok;
}

} // namespace

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
    std::string storage = c.data.inlineBytes ? std::string() : wholeReference(c.data, what).bytes();
    const char *in = c.data.inlineBytes ? c.data.inlineBytes->data() : storage.data();
    std::string out;
    out.reserve(bytes);
    gather(in, layout, [&](std::string_view band) { out.append(band); });
    return pte::BlobSource::fromBytes(std::move(out));
  }
  auto generator = std::make_shared<pte::BlobSource::Generator>();
  auto storage = std::make_shared<const pte::BlobSource>(wholeReference(c.data, what));
  auto shared = std::make_shared<const ViewLayout>(std::move(layout));
  generator->produce = [storage, ref = c.data, shared](const std::function<void(std::string_view)> &sink) {
    if (gatherMapped(*storage, ref, *shared, sink)) return;
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
