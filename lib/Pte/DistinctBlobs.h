//===- Pte/DistinctBlobs.h - Blobs deduplicated by their bytes --*- C++ -*-===//
//
// Both containers (.pte segments and .ptd segments) store each distinct byte
// string once; keys or constants with the same bytes share a segment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace exir::pte {

/// Blobs deduplicated by their bytes, in first-seen order. Identical file
/// ranges match without reading. A blob is compared only with earlier blobs of
/// its size, and among those only with the ones whose sample (a few KiB at the
/// start, middle and end) hashes the same; a small blob is its own sample and
/// its bytes decide, a large one's SHA-256 does. So distinct weights are read
/// once, when they are copied, not hashed first. Each add() costs O(1)
/// lookups, whatever the number of equal-size blobs.
class DistinctBlobs {
public:
  /// Room for about `n` blobs: growing the lists of 100k constants by
  /// doubling touched twice their memory, all of it fresh pages.
  void reserve(size_t n);
  /// Index of an earlier blob with the same bytes, or of `blob`, appended.
  size_t add(const BlobSource &blob);
  size_t size() const { return blobs_.size(); }
  const std::vector<BlobSource> &blobs() const { return blobs_; }
  /// The distinct blobs, moved out: no add() may follow.
  std::vector<BlobSource> take() { return std::move(blobs_); }

private:
  static constexpr size_t kNone = SIZE_MAX;
  /// The blobs of one size: sampled lazily, once a second blob of that size comes.
  struct SizeGroup {
    std::vector<size_t> members;
    size_t sampled = 0; // members[0, sampled) are in bySample_
  };
  /// An open-addressing table of three words -> an index (no node per entry:
  /// 100k small constants made 200k nodes to allocate and free).
  class FlatTable {
  public:
    /// The value slot of the key, `kNone` when it was not there.
    size_t &at(uint64_t a, uint64_t b, uint64_t c);
    /// Room for `n` entries without a rehash.
    void reserve(size_t n);
    const size_t *find(uint64_t a, uint64_t b, uint64_t c) const;

  private:
    struct Slot {
      uint64_t a, b, c;
      size_t value = kNone; // kNone: free
    };
    size_t probe(uint64_t a, uint64_t b, uint64_t c) const;
    std::vector<Slot> slots_;
    size_t size_ = 0;
  };
  const std::string &digest(size_t index);
  void index(size_t member, uint64_t sample);
  size_t append(const BlobSource &blob, SizeGroup &group);
  uint32_t pathId(const std::string &path);

  std::vector<BlobSource> blobs_;
  std::vector<std::string> digests_; // SHA-256 of large blobs, lazily computed, "" until needed
  std::vector<size_t> sameSample_;   // the previous member of the same size and sample, or kNone
  std::unordered_map<uint64_t, SizeGroup> bySize_;
  FlatTable bySample_;   // (size, sample hash) -> the last member with them; sameSample_ chains the others
  FlatTable fileRanges_; // (path id, offset, size) -> index
  std::unordered_map<std::string, uint32_t> paths_;
  const std::string *lastPath_ = nullptr; // most blobs of a program share one file
  uint32_t lastPathId_ = 0;
};

} // namespace exir::pte
