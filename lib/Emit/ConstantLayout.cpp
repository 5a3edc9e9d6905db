//===- Emit/ConstantLayout.cpp - A constant's bytes as the runtime reads them -===//
#include "Emit/ConstantLayout.h"

#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include <numeric>

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

/// The whole reference; its CRC-32, when recorded, is checked as it streams.
pte::BlobSource wholeReference(const DataRef &ref, const std::string &what) {
  if (ref.inlineBytes) return pte::BlobSource::fromBytes(*ref.inlineBytes);
  pte::BlobSource blob = pte::BlobSource::fromFile(ref.file, ref.offset, ref.length);
  return ref.crc32 ? blob.withExpectedCrc32(*ref.crc32, what) : blob;
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
  // take): gather the elements in `dimOrder`. Reading the whole storage checks its CRC.
  std::string storage = wholeReference(c.data, what).bytes();
  std::string out;
  out.reserve(bytes);
  std::vector<int64_t> index(rank, 0);
  for (uint64_t n = 0; n < *count; ++n) {
    uint64_t element = uint64_t(c.storageOffset);
    for (size_t d = 0; d < rank; ++d) element += uint64_t(index[d] * strides[d]);
    out.append(storage, element * elem, elem);
    // Advance the innermost dim of `dimOrder` first.
    for (size_t k = rank; k-- > 0;) {
      size_t d = dimOrder[k];
      if (++index[d] < c.sizes[d]) break;
      index[d] = 0;
    }
  }
  return pte::BlobSource::fromBytes(std::move(out));
}

} // namespace exir::emit
