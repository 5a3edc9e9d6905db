//===- Plan/AlgorithmContactFit.cpp - Touching-perimeter placement --------===//
//
// A constructive rule that local-search tries besides greedy-by-size's
// best-fit gap: the blocks are placed in a given order, each at the end of a
// free gap (between the placed blocks that overlap it in time, below a
// ceiling) where it touches the most: the time it shares an edge with a
// placed neighbour, with the floor or with the ceiling. This is the
// "touching perimeter" rule of 2D bin packing; the ceiling is the arena's
// lower bound, raised only when a block fits nowhere below it.
//
// Why: best fit alone packs each block tightly but blindly. On a convnet the
// residual of one stage (small, long-lived) overlaps the next stage's
// residual; best fit stacks the two, and the large activations of the next
// stage then no longer fit beside them (1.11x the bound). Touching the
// ceiling puts consecutive residuals at opposite ends of the arena, which
// leaves the middle whole for the activations.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <algorithm>

namespace exir::plan::detail {

namespace {

struct Neighbour {
  uint64_t lo, hi;
  uint64_t shared; // time points shared with the block being placed
};

/// Sum of `shared` over the neighbours whose `key` equals `at`; `sorted` is
/// ordered by key.
uint64_t contactAt(const std::vector<std::pair<uint64_t, uint64_t>> &sorted, uint64_t at) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), std::pair<uint64_t, uint64_t>(at, 0));
  uint64_t sum = 0;
  for (; it != sorted.end() && it->first == at; ++it)
    sum += it->second;
  return sum;
}

} // namespace

ArenaResult placeContactFit(const std::vector<Block> &blocks, const std::vector<uint32_t> &order,
                            OverlapIndex &index, uint64_t ceiling) {
  ArenaResult result;
  result.offsets.assign(blocks.size(), 0);
  index.deactivateAll();
  std::vector<uint32_t> neighbours;
  std::vector<Neighbour> busy;
  std::vector<std::pair<uint64_t, uint64_t>> byLow, byHigh; // (edge, shared time)
  for (uint32_t b : order) {
    const Block &block = blocks[b];
    index.activate(b);
    if (block.size == 0)
      continue; // occupies nothing; offset 0 is as good as any
    uint64_t size = block.size, length = uint64_t(block.end - block.start) + 1;
    neighbours.clear();
    index.collectActive(block.start, block.end, neighbours);
    busy.clear();
    for (uint32_t other : neighbours) {
      const Block &o = blocks[other];
      if (other == b || o.size == 0)
        continue;
      uint64_t shared = uint64_t(std::min(o.end, block.end) - std::max(o.start, block.start)) + 1;
      busy.push_back({result.offsets[other], result.offsets[other] + o.size, shared});
    }
    std::sort(busy.begin(), busy.end(), [](const Neighbour &x, const Neighbour &y) {
      return x.lo != y.lo ? x.lo < y.lo : x.hi < y.hi;
    });
    byLow.clear();
    byHigh.clear();
    for (const Neighbour &n : busy) {
      byLow.emplace_back(n.lo, n.shared);
      byHigh.emplace_back(n.hi, n.shared);
    }
    std::sort(byHigh.begin(), byHigh.end());
    auto contactBelow = [&](uint64_t offset) {
      return offset == 0 ? length : contactAt(byHigh, offset);
    };
    auto contactAbove = [&](uint64_t top) {
      return top == ceiling ? length : contactAt(byLow, top);
    };

    bool found = false;
    uint64_t bestOffset = 0, bestContact = 0, bestGap = 0;
    auto consider = [&](uint64_t offset, uint64_t gap) {
      uint64_t contact = contactBelow(offset) + contactAbove(offset + size);
      // Most contact; then the tighter gap; then the lower offset.
      if (!found || contact > bestContact ||
          (contact == bestContact && (gap < bestGap || (gap == bestGap && offset < bestOffset)))) {
        found = true;
        bestOffset = offset;
        bestContact = contact;
        bestGap = gap;
      }
    };
    // Gaps below the ceiling: both ends of each one that holds the block.
    uint64_t top = 0;
    auto gapEnds = [&](uint64_t lo, uint64_t hi) {
      hi = std::min(hi, ceiling);
      if (hi > lo && hi - lo >= size) {
        consider(lo, hi - lo);
        if (hi - size != lo)
          consider(hi - size, hi - lo);
      }
    };
    for (const Neighbour &n : busy) {
      if (n.lo > top)
        gapEnds(top, n.lo);
      top = std::max(top, n.hi);
    }
    gapEnds(top, UINT64_MAX);
    if (!found) {
      // Nowhere below the ceiling: the lowest gap that holds it, or the top.
      uint64_t first = 0;
      for (const Neighbour &n : busy) {
        if (n.lo >= first + size)
          break;
        first = std::max(first, n.hi);
      }
      bestOffset = first;
      ceiling = std::max(ceiling, first + size);
    }
    result.offsets[b] = bestOffset;
    result.extent = std::max(result.extent, bestOffset + size);
  }
  return result;
}

} // namespace exir::plan::detail
