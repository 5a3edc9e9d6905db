//===- tests/Plan/LongLivedBlocksTest.cpp - Long-lived blocks out of the index ===//
//
// greedy-by-size and compaction keep the blocks that live long (over the
// whole arena span, or a 64th of it) out of the overlap index and merge their
// byte ranges into the gap scans (detail::LongLivedBlocks). The placements
// must stay those of the plain rule, which lists every overlapping block:
// checked here against literal transcriptions of that rule on random arenas
// full of long blocks, zero-sized ones among them (those split gaps).
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"
#include "PlanTestUtil.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

using namespace exir::plan;
using detail::ArenaResult;
using detail::Block;

namespace {

using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

bool overlapInTime(const Block &a, const Block &b) { return !(a.end < b.start || b.end < a.start); }

/// Greedy-by-size as the plain rule states it: every placed block that
/// overlaps in time is a neighbour.
ArenaResult referenceGreedyBySize(const std::vector<Block> &blocks) {
  size_t n = blocks.size();
  // The visiting order is not what this test is about: the library's.
  std::vector<uint32_t> order = detail::greedyBySizeOrder(blocks);
  ArenaResult result;
  result.offsets.assign(n, 0);
  std::vector<char> placed(n, 0);
  for (uint32_t b : order) {
    Ranges busy;
    for (uint32_t o = 0; o < n; ++o)
      if (placed[o] && overlapInTime(blocks[o], blocks[b]))
        busy.emplace_back(result.offsets[o], result.offsets[o] + blocks[o].size);
    uint64_t offset = detail::bestFitOffset(busy, blocks[b].size);
    result.offsets[b] = offset;
    placed[b] = 1;
    result.extent = std::max(result.extent, offset + blocks[b].size);
  }
  return result;
}

/// compactDown as the plain rule states it.
void referenceCompactDown(const std::vector<Block> &blocks, ArenaResult &result) {
  size_t n = blocks.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return result.offsets[a] != result.offsets[b] ? result.offsets[a] < result.offsets[b] : a < b;
  });
  std::vector<char> done(n, 0);
  for (uint32_t b : order) {
    done[b] = 1;
    uint64_t size = blocks[b].size;
    if (result.offsets[b] == 0 || size == 0)
      continue;
    Ranges busy;
    for (uint32_t o = 0; o < n; ++o)
      if (done[o] && o != b && blocks[o].size > 0 && overlapInTime(blocks[o], blocks[b]))
        busy.emplace_back(result.offsets[o], result.offsets[o] + blocks[o].size);
    std::sort(busy.begin(), busy.end());
    uint64_t top = 0;
    for (const auto &[lo, hi] : busy) {
      if (lo >= top + size)
        break;
      top = std::max(top, hi);
    }
    result.offsets[b] = std::min(result.offsets[b], top);
  }
  result.extent = 0;
  for (size_t b = 0; b < n; ++b)
    result.extent = std::max(result.extent, result.offsets[b] + blocks[b].size);
}

/// An arena like a decoder's: blocks over the whole span (mutable buffers),
/// long ones from somewhere to near the end (their updated values), and
/// short activations; sizes small multiples of 16, some zero.
std::vector<Block> decoderLikeBlocks(plantest::Rng &rng) {
  uint32_t span = 64 + uint32_t(rng.below(200));
  size_t n = 1 + rng.below(120);
  std::vector<Block> blocks;
  for (size_t i = 0; i < n; ++i) {
    Block b;
    b.size = rng.below(5) == 0 ? 0 : 16 * (1 + rng.below(rng.below(2) ? 4 : 32));
    switch (rng.below(4)) {
    case 0: b.start = 0; b.end = span - 1; break;
    case 1:
      b.start = uint32_t(rng.below(span / 2));
      b.end = span - 1 - uint32_t(rng.below(span / 4));
      break;
    default:
      b.start = uint32_t(rng.below(span));
      b.end = std::min(span - 1, b.start + uint32_t(rng.below(6)));
      break;
    }
    blocks.push_back(b);
  }
  blocks.push_back({16, 0, span - 1}); // the span is reached
  return blocks;
}

} // namespace

TEST_CASE("long-lived blocks: greedy-by-size places as the plain rule", "[plan][long-lived][property]") {
  plantest::Rng rng(27182);
  for (int instance = 0; instance < 400; ++instance) {
    std::vector<Block> blocks = decoderLikeBlocks(rng);
    INFO("instance " << instance);
    ArenaResult expected = referenceGreedyBySize(blocks);
    ArenaResult actual = detail::placeGreedyBySize(blocks);
    CHECK(actual.offsets == expected.offsets);
    CHECK(actual.extent == expected.extent);
  }
}

TEST_CASE("long-lived blocks: compaction moves as the plain rule", "[plan][long-lived][property]") {
  plantest::Rng rng(16180);
  for (int instance = 0; instance < 400; ++instance) {
    std::vector<Block> blocks = decoderLikeBlocks(rng);
    INFO("instance " << instance);
    // Naive's bump placement leaves room for every block to move.
    ArenaResult start = detail::placeNaive(blocks);
    ArenaResult expected = start;
    referenceCompactDown(blocks, expected);
    detail::OverlapIndex index(blocks);
    detail::compactDown(blocks, index, start);
    CHECK(start.offsets == expected.offsets);
    CHECK(start.extent == expected.extent);
  }
}
