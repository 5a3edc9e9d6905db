//===- Pte/DistinctBlobs.cpp - Blobs deduplicated by their bytes ---------===//
#include "Pte/DistinctBlobs.h"

#include "Support/Hash.h"

namespace exir::pte {

namespace {

/// A small blob (up to 12 KiB) is its own sample; a large one is sampled at
/// its start, middle and end, 256 bytes each: enough to tell weights apart
/// (equal samples only cost a SHA-256 of both), and a gathered (transposed)
/// blob's sample reads one storage row per element, so 4 KiB parts touched
/// 3,072 scattered rows of each weight.
constexpr uint64_t kSmallBlob = 12288;
constexpr uint64_t kSamplePart = 256;

bool isSmall(const BlobSource &blob) { return blob.size() <= kSmallBlob; }

/// SHA-256 of the sample: equal bytes give equal keys, and a small blob's key is its digest.
std::string sampleKey(const BlobSource &blob) {
  uint64_t size = blob.size();
  if (isSmall(blob)) return sha256Hex(blob.readPart(0, size));
  return sha256Hex(blob.readPart(0, kSamplePart) + blob.readPart(size / 2 - kSamplePart / 2, kSamplePart) +
                   blob.readPart(size - kSamplePart, kSamplePart));
}

} // namespace

const std::string &DistinctBlobs::digest(size_t index) {
  if (digests_[index].empty()) digests_[index] = blobs_[index].sha256Hex();
  return digests_[index];
}

size_t DistinctBlobs::append(const BlobSource &blob, SizeGroup &group, std::string blobDigest) {
  size_t index = blobs_.size();
  group.members.push_back(index);
  if (blob.isFile()) fileRanges_.emplace(std::make_tuple(blob.path(), blob.offset(), blob.size()), index);
  blobs_.push_back(blob);
  digests_.push_back(std::move(blobDigest));
  return index;
}

size_t DistinctBlobs::add(const BlobSource &blob) {
  if (blob.isFile()) {
    auto range = fileRanges_.find(std::make_tuple(blob.path(), blob.offset(), blob.size()));
    if (range != fileRanges_.end()) return range->second;
  }
  SizeGroup &group = bySize_[blob.size()];
  if (group.members.empty()) return append(blob, group, {});
  if (blob.size() == 0) return group.members.front();
  // Every earlier blob of this size goes into the sample index once.
  for (; group.sampled < group.members.size(); ++group.sampled) {
    size_t member = group.members[group.sampled];
    std::string key = sampleKey(blobs_[member]);
    if (isSmall(blob)) digests_[member] = key;
    group.bySample[std::move(key)].push_back(member);
  }
  std::string sample = sampleKey(blob);
  auto candidates = group.bySample.find(sample);
  if (candidates == group.bySample.end()) {
    size_t index = append(blob, group, isSmall(blob) ? sample : std::string());
    group.bySample[std::move(sample)].push_back(index);
    ++group.sampled;
    return index;
  }
  // Earlier blobs with this sample have pairwise different bytes: at most one matches.
  if (isSmall(blob)) return candidates->second.front(); // the sample key is the digest
  std::string blobDigest = blob.sha256Hex();
  for (size_t index : candidates->second)
    if (digest(index) == blobDigest) return index;
  size_t index = append(blob, group, std::move(blobDigest));
  candidates->second.push_back(index);
  ++group.sampled;
  return index;
}

} // namespace exir::pte
