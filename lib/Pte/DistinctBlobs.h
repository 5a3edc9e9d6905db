//===- Pte/DistinctBlobs.h - Blobs deduplicated by their bytes --*- C++ -*-===//
//
// Both containers (.pte segments and .ptd segments) store each distinct byte
// string once; keys or constants with the same bytes share a segment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace exir::pte {

/// Blobs deduplicated by their bytes, in first-seen order. Identical file
/// ranges match without reading. A blob is compared only with earlier blobs of
/// its size, and among those only with the ones whose sample (a few KiB at the
/// start, middle and end) is the same; SHA-256 decides between those. So
/// distinct weights are read once, when they are copied, not hashed first.
/// Each add() costs O(1) lookups, whatever the number of equal-size blobs.
class DistinctBlobs {
public:
  /// Index of an earlier blob with the same bytes, or of `blob`, appended.
  size_t add(const BlobSource &blob);
  size_t size() const { return blobs_.size(); }
  const std::vector<BlobSource> &blobs() const { return blobs_; }

private:
  /// The blobs of one size: sampled lazily, once a second blob of that size comes.
  struct SizeGroup {
    std::vector<size_t> members;
    size_t sampled = 0; // members[0, sampled) are in bySample
    std::unordered_map<std::string, std::vector<size_t>> bySample;
  };
  const std::string &digest(size_t index);
  size_t append(const BlobSource &blob, SizeGroup &group, std::string digest);

  std::vector<BlobSource> blobs_;
  std::vector<std::string> digests_; // lazily computed, "" until needed
  std::unordered_map<uint64_t, SizeGroup> bySize_;
  std::map<std::tuple<std::string, uint64_t, uint64_t>, size_t> fileRanges_; // (path, offset, size)
};

} // namespace exir::pte
