//===- Pte/DistinctBlobs.h - Blobs deduplicated by their bytes --*- C++ -*-===//
//
// Both containers (.pte segments and .ptd segments) store each distinct byte
// string once; keys or constants with the same bytes share a segment.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace exir::pte {

/// Blobs deduplicated by their bytes, in first-seen order. Identical file
/// ranges match without reading; SHA-256 is computed only for a blob whose size
/// equals an earlier one's, so distinct multi-gigabyte weights are not hashed.
class DistinctBlobs {
public:
  /// Index of an earlier blob with the same bytes, or of `blob`, appended.
  size_t add(const BlobSource &blob);
  size_t size() const { return blobs_.size(); }
  const std::vector<BlobSource> &blobs() const { return blobs_; }

private:
  const std::string &digest(size_t index);

  std::vector<BlobSource> blobs_;
  std::vector<std::string> digests_; // lazily computed, "" until needed
  std::unordered_map<uint64_t, std::vector<size_t>> bySize_;
};

} // namespace exir::pte
