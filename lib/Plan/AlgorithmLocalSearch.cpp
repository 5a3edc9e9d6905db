//===- Plan/AlgorithmLocalSearch.cpp - Compaction and order search --------===//
//
// Improves on the constructive algorithms in three ways:
//
//  1. Compaction ("gravity", compactDown): starting from the placements of
//     greedy-by-size, greedy and best-fit, every block is moved, lowest
//     first, down to the lowest offset where it fits among the blocks that
//     overlap it in time. On arenas above `maxBlocks` units only
//     greedy-by-size's placement is compacted, in one pass (the others are
//     kept as they are), so that `best` stays fast on very large graphs.
//  2. Touching-perimeter placements (placeContactFit) in a few orders that
//     put long-lived blocks first, on arenas of any size whose overlap count
//     is within a budget; each is compacted too.
//  3. Order search, only on arenas with at most `maxBlocks` units: the
//     best-fit gap rule of greedy-by-size applied to a few natural orders
//     (size, size x lifetime, lifetime, start), then a hill climb over the
//     order: move a unit that touches the top of the arena to a random
//     earlier position, or swap two random units; each order is decoded and
//     compacted, and kept when the arena does not grow (sideways moves let
//     the search drift across plateaus). It stops at the lower bound or when
//     its work budget is spent.
//
// The result is the smallest placement seen, so it is never worse than any
// of the starting placements. Everything is deterministic: a fixed-seed
// splitmix64 generator (not the implementation-defined <random>
// distributions) and a budget counted in visited overlaps, never in time.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <algorithm>
#include <bit>
#include <numeric>

namespace exir::plan::detail {

namespace {

/// Overlap entries the order search may visit in total (each decode visits
/// all of them once); arenas whose single decode exceeds it are not searched.
constexpr size_t kWorkBudget = 30'000'000;
/// The same for the touching-perimeter placements, on arenas of any size:
/// each visits every overlap once; they run only if two of them fit, and stop
/// when the next would exceed it (bench/plan_bench.sh's dense random DAG of
/// 100k tensors, 14M overlaps, gets none: they did not help there).
constexpr size_t kContactWorkBudget = 16'000'000;

/// splitmix64: tiny, fast, and the same sequence on every platform.
class Rng {
public:
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform-enough value in [0, bound), bound > 0.
  size_t below(size_t bound) { return static_cast<size_t>(next() % bound); }

private:
  uint64_t state_ = 0x5eed0f9a11c0ffeeULL;
};

/// Places the blocks in `order` with the best-fit gap rule. Gives up (and
/// returns false) as soon as the arena would exceed `limit`.
bool decode(const std::vector<Block> &blocks, const std::vector<uint32_t> &order,
            const std::vector<std::vector<uint32_t>> &overlaps, uint64_t limit,
            ArenaResult &result, std::vector<char> &placed,
            std::vector<std::pair<uint64_t, uint64_t>> &busy) {
  result.offsets.assign(blocks.size(), 0);
  result.extent = 0;
  placed.assign(blocks.size(), 0);
  for (uint32_t b : order) {
    busy.clear();
    for (uint32_t other : overlaps[b])
      if (placed[other])
        busy.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
    uint64_t offset = bestFitOffset(busy, blocks[b].size);
    result.offsets[b] = offset;
    placed[b] = 1;
    result.extent = std::max(result.extent, offset + blocks[b].size);
    if (result.extent > limit)
      return false;
  }
  return true;
}

/// Number of (block, overlapping block) pairs plus n, in O(n log n).
size_t countOverlaps(const std::vector<Block> &blocks) {
  size_t n = blocks.size();
  std::vector<uint32_t> firsts(n), lasts(n);
  for (size_t b = 0; b < n; ++b) {
    firsts[b] = blocks[b].start;
    lasts[b] = blocks[b].end;
  }
  std::sort(firsts.begin(), firsts.end());
  std::sort(lasts.begin(), lasts.end());
  size_t work = n;
  for (const Block &block : blocks) {
    size_t startingAfter = firsts.end() - std::upper_bound(firsts.begin(), firsts.end(), block.end);
    size_t endingBefore = std::lower_bound(lasts.begin(), lasts.end(), block.start) - lasts.begin();
    work += n - startingAfter - endingBefore - 1;
  }
  return work;
}

std::vector<uint32_t> sortedOrder(size_t n, auto less) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), less);
  return order;
}

} // namespace

ArenaResult placeLocalSearch(const std::vector<Block> &blocks, size_t maxBlocks,
                             const std::vector<ArenaResult> &starts) {
  size_t n = blocks.size();
  OverlapIndex index(blocks);
  ArenaResult best;
  bool haveBest = false;
  // Keeps `candidate` if it is strictly smaller than everything seen so far.
  auto consider = [&](ArenaResult &candidate) {
    if (!haveBest || candidate.extent < best.extent) {
      best = candidate;
      haveBest = true;
    }
  };
  bool small = n <= maxBlocks;
  for (size_t s = 0; s < starts.size(); ++s) {
    ArenaResult start = starts[s];
    // On large arenas only the first start is compacted, once: that is where
    // compaction gains most (size order leaves holes that it fills).
    for (int pass = 0; pass < (small ? 2 : s == 0 ? 1 : 0); ++pass)
      if (!compactDown(blocks, index, start))
        break;
    consider(start);
  }
  if (!haveBest) {
    ArenaResult start = placeGreedyBySize(blocks);
    compactDown(blocks, index, start);
    consider(start);
  }
  uint64_t floor = blockLowerBound(blocks);
  if (n < 2 || best.extent <= floor)
    return best;

  // One decode visits every overlap pair; count them first (n log n) so that
  // dense arenas skip the searches instead of spending seconds on them.
  size_t work = countOverlaps(blocks);

  // Touching-perimeter placements (AlgorithmContactFit.cpp), on arenas of
  // any size. Long-lived blocks go first, in program order, then the others
  // in program order: the long ones then settle at the floor and the ceiling
  // by turns and leave the middle whole for the short ones (a convnet's
  // residuals around its stages). "Long" is at least 2 or 4 times the median
  // lifetime, or (third order) classes of lifetimes by powers of two. Small
  // arenas also get plain program order and size order.
  if (work <= kContactWorkBudget / 2) {
    auto length = [&](uint32_t b) { return blocks[b].end - blocks[b].start + 1; };
    auto byStart = [&](uint32_t a, uint32_t b) {
      if (blocks[a].start != blocks[b].start)
        return blocks[a].start < blocks[b].start;
      if (blocks[a].size != blocks[b].size)
        return blocks[a].size > blocks[b].size;
      return a < b;
    };
    std::vector<uint32_t> lengths(n);
    for (uint32_t b = 0; b < n; ++b)
      lengths[b] = length(b);
    std::nth_element(lengths.begin(), lengths.begin() + n / 2, lengths.end());
    uint64_t median = lengths[n / 2];
    std::vector<std::vector<uint32_t>> orders;
    for (uint64_t factor : {2, 4}) {
      uint64_t threshold = median * factor;
      orders.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
        bool longA = length(a) >= threshold, longB = length(b) >= threshold;
        return longA != longB ? longA : byStart(a, b);
      }));
    }
    orders.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
      int classA = std::bit_width(length(a)), classB = std::bit_width(length(b));
      return classA != classB ? classA > classB : byStart(a, b);
    }));
    if (small) {
      orders.push_back(sortedOrder(n, byStart));
      orders.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
        return blocks[a].size != blocks[b].size ? blocks[a].size > blocks[b].size : byStart(a, b);
      }));
    }
    size_t spent = 0;
    for (const auto &order : orders) {
      if (spent + work > kContactWorkBudget)
        break;
      spent += work;
      ArenaResult start = placeContactFit(blocks, order, index, floor);
      compactDown(blocks, index, start);
      consider(start);
      if (best.extent <= floor)
        return best;
    }
  }
  if (!small || work > kWorkBudget)
    return best;

  std::vector<std::vector<uint32_t>> overlaps(n);
  for (uint32_t b = 0; b < n; ++b) {
    index.collect(blocks[b].start, blocks[b].end, overlaps[b]);
    std::erase(overlaps[b], b);
  }
  auto length = [&](uint32_t b) { return uint64_t(blocks[b].end - blocks[b].start) + 1; };
  std::vector<std::vector<uint32_t>> seeds;
  seeds.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) { // greedy-by-size's order
    if (blocks[a].size != blocks[b].size)
      return blocks[a].size > blocks[b].size;
    if (length(a) != length(b))
      return length(a) > length(b);
    return a < b;
  }));
  seeds.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
    // Compare size * length without overflow via 128-bit products.
    unsigned __int128 x = (unsigned __int128)blocks[a].size * length(a);
    unsigned __int128 y = (unsigned __int128)blocks[b].size * length(b);
    if (x != y)
      return x > y;
    return a < b;
  }));
  seeds.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
    if (length(a) != length(b))
      return length(a) > length(b);
    if (blocks[a].size != blocks[b].size)
      return blocks[a].size > blocks[b].size;
    return a < b;
  }));
  seeds.push_back(sortedOrder(n, [&](uint32_t a, uint32_t b) {
    if (blocks[a].start != blocks[b].start)
      return blocks[a].start < blocks[b].start;
    if (blocks[a].size != blocks[b].size)
      return blocks[a].size > blocks[b].size;
    return a < b;
  }));

  std::vector<char> placed;
  std::vector<std::pair<uint64_t, uint64_t>> busy;
  ArenaResult current, trial;
  std::vector<uint32_t> currentOrder;
  // Decodes an order and compacts it; false if it got above `limit` on the way
  // (compaction rarely recovers more than an eighth, so that is the cut-off).
  auto evaluate = [&](const std::vector<uint32_t> &order, uint64_t limit, ArenaResult &out) {
    uint64_t slack = limit / 8;
    if (!decode(blocks, order, overlaps, limit > UINT64_MAX - slack ? UINT64_MAX : limit + slack,
                out, placed, busy))
      return false;
    compactDown(blocks, index, out);
    return out.extent <= limit;
  };
  for (const auto &seed : seeds) {
    uint64_t limit = currentOrder.empty() ? UINT64_MAX : current.extent - 1;
    if (!currentOrder.empty() && current.extent == 0)
      break;
    if (evaluate(seed, limit, trial)) {
      std::swap(current, trial);
      currentOrder = seed;
    }
  }
  consider(current);

  // About kWorkBudget visited overlap entries in total, at most 2000 moves.
  size_t iterations = std::min<size_t>(kWorkBudget / work, 2000);
  Rng rng;
  std::vector<uint32_t> order, position(n), critical;
  for (size_t iter = 0; iter < iterations && best.extent > floor; ++iter) {
    order = currentOrder;
    for (size_t p = 0; p < n; ++p)
      position[order[p]] = static_cast<uint32_t>(p);
    critical.clear();
    for (uint32_t b = 0; b < n; ++b)
      if (current.offsets[b] + blocks[b].size == current.extent && blocks[b].size > 0)
        critical.push_back(b);
    size_t from = critical.empty() ? 0 : position[critical[rng.below(critical.size())]];
    if (rng.next() % 2 == 0 && from > 0) {
      // Move a unit at the top earlier: placed sooner, it may sink lower.
      size_t to = rng.below(from);
      std::rotate(order.begin() + to, order.begin() + from, order.begin() + from + 1);
    } else {
      size_t i = rng.below(n), j = rng.below(n);
      std::swap(order[i], order[j]);
    }
    if (evaluate(order, current.extent, trial)) {
      std::swap(current, trial);
      currentOrder.swap(order);
      consider(current);
    }
  }
  return best;
}

} // namespace exir::plan::detail
