//===- Pte/DistinctBlobs.cpp - Blobs deduplicated by their bytes ---------===//
#include "Pte/DistinctBlobs.h"

#include "IR/StringHash.h"
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

/// The sample's bytes.
std::string sampleOf(const BlobSource &blob) {
  uint64_t size = blob.size();
  if (isSmall(blob)) return blob.readPart(0, size);
  return blob.readPart(0, kSamplePart) + blob.readPart(size / 2 - kSamplePart / 2, kSamplePart) +
         blob.readPart(size - kSamplePart, kSamplePart);
}

/// A fast hash of the sample: it only narrows the candidates (bytes or
/// SHA-256 decide), so collisions cost a compare, never a wrong match. A
/// SHA-256 per small constant was most of deduplicating 100k of them.
uint64_t sampleHash(const std::string &sample) { return hashString(sample); }

} // namespace

size_t DistinctBlobs::FileRangeHash::operator()(const FileRange &r) const {
  uint64_t words[3] = {r.path, r.offset, r.size};
  return size_t(hashString(std::string_view(reinterpret_cast<const char *>(words), sizeof words)));
}

uint32_t DistinctBlobs::pathId(const std::string &path) {
  if (lastPath_ && *lastPath_ == path) return lastPathId_;
  auto [it, inserted] = paths_.try_emplace(path, uint32_t(paths_.size()));
  lastPath_ = &it->first; // node-based map: the key stays put
  lastPathId_ = it->second;
  return it->second;
}

const std::string &DistinctBlobs::digest(size_t index) {
  if (digests_[index].empty()) digests_[index] = blobs_[index].sha256Hex();
  return digests_[index];
}

void DistinctBlobs::index(size_t member, uint64_t sample, SizeGroup &group) {
  auto [it, inserted] = group.bySample.try_emplace(sample, member);
  sameSample_[member] = inserted ? kNone : it->second;
  it->second = member;
}

size_t DistinctBlobs::append(const BlobSource &blob, SizeGroup &group) {
  size_t index = blobs_.size();
  group.members.push_back(index);
  if (blob.isFile()) fileRanges_.emplace(FileRange{pathId(blob.path()), blob.offset(), blob.size()}, index);
  blobs_.push_back(blob);
  digests_.emplace_back();
  sameSample_.push_back(kNone);
  return index;
}

size_t DistinctBlobs::add(const BlobSource &blob) {
  if (blob.isFile()) {
    auto range = fileRanges_.find(FileRange{pathId(blob.path()), blob.offset(), blob.size()});
    if (range != fileRanges_.end()) return range->second;
  }
  SizeGroup &group = bySize_[blob.size()];
  if (group.members.empty()) return append(blob, group);
  if (blob.size() == 0) return group.members.front();
  // Every earlier blob of this size goes into the sample index once.
  for (; group.sampled < group.members.size(); ++group.sampled) {
    size_t member = group.members[group.sampled];
    index(member, sampleHash(sampleOf(blobs_[member])), group);
  }
  std::string sample = sampleOf(blob);
  uint64_t hash = sampleHash(sample);
  auto candidates = group.bySample.find(hash);
  // Earlier blobs with this sample hash have pairwise different bytes: at most one matches.
  if (candidates != group.bySample.end()) {
    if (isSmall(blob)) {
      for (size_t member = candidates->second; member != kNone; member = sameSample_[member])
        if (blobs_[member].readPart(0, blob.size()) == sample) return member;
    } else {
      std::string blobDigest = blob.sha256Hex();
      for (size_t member = candidates->second; member != kNone; member = sameSample_[member])
        if (digest(member) == blobDigest) return member;
      size_t index = append(blob, group);
      digests_[index] = std::move(blobDigest);
      this->index(index, hash, group);
      ++group.sampled;
      return index;
    }
  }
  size_t index = append(blob, group);
  this->index(index, hash, group);
  ++group.sampled;
  return index;
}

} // namespace exir::pte
