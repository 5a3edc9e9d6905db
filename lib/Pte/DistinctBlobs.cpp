//===- Pte/DistinctBlobs.cpp - Blobs deduplicated by their bytes ---------===//
#include "Pte/DistinctBlobs.h"

namespace exir::pte {

const std::string &DistinctBlobs::digest(size_t index) {
  if (digests_[index].empty()) digests_[index] = blobs_[index].sha256Hex();
  return digests_[index];
}

size_t DistinctBlobs::add(const BlobSource &blob) {
  std::vector<size_t> &sameSize = bySize_[blob.size()];
  std::string blobDigest;
  for (size_t index : sameSize) {
    const BlobSource &other = blobs_[index];
    if (blob.size() == 0) return index;
    if (blob.isFile() && other.isFile() && blob.path() == other.path() && blob.offset() == other.offset())
      return index;
    if (blobDigest.empty()) blobDigest = blob.sha256Hex();
    if (digest(index) == blobDigest) return index;
  }
  sameSize.push_back(blobs_.size());
  blobs_.push_back(blob);
  digests_.push_back(blobDigest);
  return blobs_.size() - 1;
}

} // namespace exir::pte
