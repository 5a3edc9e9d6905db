//===- Plan/AlgorithmBestFit.cpp - Best-fit allocator run in program order ===//
//
// Simulates a malloc/free allocator over the program: time points are visited
// in order; units whose lifetime ended are freed first (coalescing with free
// neighbours), then the units that become live are allocated, largest first,
// in the smallest free gap that holds them (lowest offset on ties), or on top
// of the heap. The arena is the highest the heap ever got. Because a unit only
// competes with the units live when it is allocated, this is fast
// (O(n log n)) and complements the size-ordered algorithms on graphs whose
// sizes grow along the program.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace exir::plan::detail {

namespace {

/// Free gaps below the top of the heap, indexed by offset and by size.
class FreeList {
public:
  /// Allocates `size` bytes; returns the offset.
  uint64_t allocate(uint64_t size) {
    auto it = bySize_.lower_bound({size, 0});
    if (it == bySize_.end()) {
      uint64_t offset = top_;
      top_ += size;
      peak_ = std::max(peak_, top_);
      return offset;
    }
    auto [gapSize, offset] = *it;
    erase(offset, gapSize);
    if (gapSize > size)
      insert(offset + size, gapSize - size);
    return offset;
  }

  void release(uint64_t offset, uint64_t size) {
    if (size == 0)
      return;
    // Coalesce with the gap that ends at `offset` and the one that starts at
    // offset + size.
    auto next = byOffset_.lower_bound(offset);
    if (next != byOffset_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        erase(prev->first, prev->second);
      }
    }
    next = byOffset_.find(offset + size);
    if (next != byOffset_.end()) {
      size += next->second;
      erase(next->first, next->second);
    }
    if (offset + size == top_)
      top_ = offset; // the heap shrinks; the gap merges into the free top
    else
      insert(offset, size);
  }

  uint64_t peak() const { return peak_; }

private:
  void insert(uint64_t offset, uint64_t size) {
    byOffset_.emplace(offset, size);
    bySize_.emplace(size, offset);
  }
  void erase(uint64_t offset, uint64_t size) {
    byOffset_.erase(offset);
    bySize_.erase({size, offset});
  }
  std::map<uint64_t, uint64_t> byOffset_;
  std::set<std::pair<uint64_t, uint64_t>> bySize_;
  uint64_t top_ = 0, peak_ = 0;
};

} // namespace

ArenaResult placeBestFit(const std::vector<Block> &blocks) {
  size_t n = blocks.size();
  std::vector<uint32_t> byStart(n), byEnd(n);
  std::iota(byStart.begin(), byStart.end(), 0);
  std::iota(byEnd.begin(), byEnd.end(), 0);
  std::sort(byStart.begin(), byStart.end(), [&](uint32_t a, uint32_t b) {
    const Block &x = blocks[a], &y = blocks[b];
    if (x.start != y.start)
      return x.start < y.start;
    if (x.size != y.size)
      return x.size > y.size;
    return a < b;
  });
  std::sort(byEnd.begin(), byEnd.end(), [&](uint32_t a, uint32_t b) {
    if (blocks[a].end != blocks[b].end)
      return blocks[a].end < blocks[b].end;
    return a < b;
  });

  ArenaResult result;
  result.offsets.assign(n, 0);
  FreeList heap;
  size_t nextFree = 0;
  for (uint32_t b : byStart) {
    const Block &block = blocks[b];
    // Lifetimes are inclusive: a unit ending at t - 1 is dead at t.
    while (nextFree < n && blocks[byEnd[nextFree]].end < block.start) {
      uint32_t dead = byEnd[nextFree++];
      heap.release(result.offsets[dead], blocks[dead].size);
    }
    result.offsets[b] = block.size == 0 ? 0 : heap.allocate(block.size);
  }
  result.extent = heap.peak();
  return result;
}

} // namespace exir::plan::detail
