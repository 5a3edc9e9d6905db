//===- Plan/AlgorithmGreedyBySize.cpp - TFLite-style greedy by size -------===//
//
// The "greedy by size" offset calculation known from TFLite's arena planner:
// visit the storage units from the largest to the smallest (equal sizes:
// longer lifetime first, then collection order) and put each at the smallest
// gap between the already placed units whose lifetimes overlap it, or on top
// of them when no gap is large enough. Unlike upstream's greedy it is not
// tied to fixed buckets, so small tensors fill the holes that large ones
// leave, which usually lands within a few percent of the lower bound.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <algorithm>
#include <numeric>

namespace exir::plan::detail {

std::vector<uint32_t> greedyBySizeOrder(const std::vector<Block> &blocks) {
  std::vector<uint32_t> order(blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const Block &x = blocks[a], &y = blocks[b];
    if (x.size != y.size)
      return x.size > y.size;
    if (x.end - x.start != y.end - y.start)
      return x.end - x.start > y.end - y.start;
    return a < b;
  });
  return order;
}

ArenaResult placeGreedyBySize(const std::vector<Block> &blocks) {
  size_t n = blocks.size();
  std::vector<uint32_t> order = greedyBySizeOrder(blocks);

  OverlapIndex index(blocks);
  ArenaResult result;
  result.offsets.assign(n, 0);
  LongLivedBlocks tracked(blocks);
  std::vector<uint32_t> neighbours;
  std::vector<std::pair<uint64_t, uint64_t>> busy, scratch;
  for (uint32_t b : order) {
    const Block &block = blocks[b];
    neighbours.clear();
    index.collectActive(block.start, block.end, neighbours);
    busy.clear();
    for (uint32_t other : neighbours)
      busy.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
    uint64_t offset = bestFitOffset(busy, block, tracked, scratch);
    result.offsets[b] = offset;
    if (tracked.tracks(b))
      tracked.add(b, offset);
    else
      index.activate(b);
    result.extent = std::max(result.extent, offset + block.size);
  }
  return result;
}

} // namespace exir::plan::detail
