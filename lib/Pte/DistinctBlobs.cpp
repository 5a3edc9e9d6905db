//===- Pte/DistinctBlobs.cpp - Blobs deduplicated by their bytes ---------===//
#include "Pte/DistinctBlobs.h"

#include "IR/StringHash.h"
#include "Support/Hash.h"

#include <algorithm>
#include <utility>

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

/// The sample's bytes: a view of a small blob held in memory (most small
/// constants: gathered views), else read into `storage`.
std::string_view sampleOf(const BlobSource &blob, std::string &storage) {
  uint64_t size = blob.size();
  if (isSmall(blob)) {
    if (blob.inMemory()) return blob.view();
    storage = blob.readPart(0, size);
  } else {
    storage = blob.readPart(0, kSamplePart) + blob.readPart(size / 2 - kSamplePart / 2, kSamplePart) +
              blob.readPart(size - kSamplePart, kSamplePart);
  }
  return storage;
}

/// A fast hash of the sample: it only narrows the candidates (bytes or
/// SHA-256 decide), so collisions cost a compare, never a wrong match. A
/// SHA-256 per small constant was most of deduplicating 100k of them.
uint64_t sampleHash(std::string_view sample) { return hashString(sample); }

} // namespace

size_t DistinctBlobs::FlatTable::probe(uint64_t a, uint64_t b, uint64_t c) const {
  using string_hash_detail::mix;
  size_t mask = slots_.size() - 1;
  for (size_t i = size_t(mix(mix(a ^ 0x9e3779b97f4a7c15ull, b ^ 0xbf58476d1ce4e5b9ull), c ^ 0xa0761d6478bd642full)) & mask;;
       i = (i + 1) & mask) {
    const Slot &slot = slots_[i];
    if (slot.value == kNone || (slot.a == a && slot.b == b && slot.c == c)) return i;
  }
}

const size_t *DistinctBlobs::FlatTable::find(uint64_t a, uint64_t b, uint64_t c) const {
  if (slots_.empty()) return nullptr;
  const Slot &slot = slots_[probe(a, b, c)];
  return slot.value == kNone ? nullptr : &slot.value;
}

void DistinctBlobs::FlatTable::reserve(size_t n) {
  size_t capacity = std::max<size_t>(16, slots_.size());
  while (4 * n > 3 * capacity) capacity *= 2; // at most 3/4 full
  if (capacity == slots_.size()) return;
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
  for (const Slot &slot : old)
    if (slot.value != kNone) slots_[probe(slot.a, slot.b, slot.c)] = slot;
}

size_t &DistinctBlobs::FlatTable::at(uint64_t a, uint64_t b, uint64_t c) {
  if (4 * (size_ + 1) > 3 * slots_.size()) reserve(std::max<size_t>(size_ + 1, 2 * slots_.size() * 3 / 4));
  Slot &slot = slots_[probe(a, b, c)];
  if (slot.value == kNone) {
    slot.a = a;
    slot.b = b;
    slot.c = c;
    ++size_;
  }
  return slot.value;
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

void DistinctBlobs::index(size_t member, uint64_t sample) {
  size_t &last = bySample_.at(blobs_[member].size(), sample, 0);
  sameSample_[member] = last; // kNone for the first
  last = member;
}

size_t DistinctBlobs::append(const BlobSource &blob, SizeGroup &group) {
  size_t index = blobs_.size();
  group.members.push_back(index);
  if (blob.isFile()) fileRanges_.at(pathId(blob.path()), blob.offset(), blob.size()) = index;
  blobs_.push_back(blob);
  digests_.emplace_back();
  sameSample_.push_back(kNone);
  return index;
}

void DistinctBlobs::reserve(size_t n) {
  blobs_.reserve(n);
  digests_.reserve(n);
  sameSample_.reserve(n);
  // Only blobs with an earlier one of their size are sampled: nearly all of
  // them when many constants share a shape, as weights of a layer stack do.
  bySample_.reserve(n);
}

size_t DistinctBlobs::add(const BlobSource &blob) {
  if (blob.isFile()) {
    if (const size_t *range = fileRanges_.find(pathId(blob.path()), blob.offset(), blob.size())) return *range;
  }
  SizeGroup &group = bySize_[blob.size()];
  if (group.members.empty()) return append(blob, group);
  if (blob.size() == 0) return group.members.front();
  // Every earlier blob of this size goes into the sample index once.
  for (; group.sampled < group.members.size(); ++group.sampled) {
    size_t member = group.members[group.sampled];
    std::string storage;
    index(member, sampleHash(sampleOf(blobs_[member], storage)));
  }
  std::string storage;
  std::string_view sample = sampleOf(blob, storage);
  uint64_t hash = sampleHash(sample);
  // Earlier blobs with this sample hash have pairwise different bytes: at most one matches.
  if (const size_t *last = bySample_.find(blob.size(), hash, 0)) {
    if (isSmall(blob)) {
      std::string other;
      for (size_t member = *last; member != kNone; member = sameSample_[member])
        if (sampleOf(blobs_[member], other) == sample) return member; // a small blob's sample is all of it
    } else {
      std::string blobDigest = blob.sha256Hex();
      for (size_t member = *last; member != kNone; member = sameSample_[member])
        if (digest(member) == blobDigest) return member;
      size_t index = append(blob, group);
      digests_[index] = std::move(blobDigest);
      this->index(index, hash);
      ++group.sampled;
      return index;
    }
  }
  size_t index = append(blob, group);
  this->index(index, hash);
  ++group.sampled;
  return index;
}

} // namespace exir::pte
