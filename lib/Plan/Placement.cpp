//===- Plan/Placement.cpp - Driver for the placement algorithms -----------===//
//
// Turns the items into storage units per arena (share groups merged, sizes
// aligned, lifetimes rank-compressed so that only the order of endpoints
// matters), runs one algorithm per arena, and lays each arena out after its
// reserved base. Also holds the pieces shared by several algorithms: the
// lower bound, the lifetime-overlap index and the best-fit gap rule.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <unordered_map>

namespace exir::plan {

using detail::ArenaResult;
using detail::Block;

void checkAlignment(uint64_t alignment) {
  if (!isPowerOfTwo(alignment))
    throw Error("alignment " + std::to_string(alignment) + " is not a power of two");
  if (alignment > kMaxAlignment)
    throw Error("alignment " + std::to_string(alignment) + " exceeds the limit of " +
                std::to_string(kMaxAlignment) + " (1 GiB)");
}

uint64_t alignUp(uint64_t size, uint64_t alignment) {
  return (size + alignment - 1) & ~(alignment - 1);
}

const std::vector<std::string> &algorithmNames() {
  static const std::vector<std::string> names = {"greedy",       "greedy-by-size", "best-fit",
                                                 "local-search", "naive",          "best"};
  return names;
}

bool isKnownAlgorithm(std::string_view name) {
  const auto &names = algorithmNames();
  return std::find(names.begin(), names.end(), name) != names.end();
}

uint64_t totalBytes(const Placement &placement) {
  uint64_t total = 0;
  for (uint64_t size : placement.arenaSizes)
    total += size;
  return total;
}

namespace {

/// Arena ids are small in practice (one per memory kind); the bound keeps a
/// typo from allocating gigabytes.
constexpr uint32_t kMaxMemId = 1 << 16;

/// The storage units of every arena (index = memId; [0] stays empty) and,
/// for each item, the index of its unit inside its arena.
struct Arenas {
  std::vector<std::vector<Block>> blocks;
  std::vector<uint32_t> blockOf;
};

/// Validates the items and groups them into arenas of storage units.
Arenas buildArenas(const std::vector<PlanItem> &items, uint64_t alignment) {
  checkAlignment(alignment);
  struct Unit {
    uint32_t memId;
    uint64_t size;
    uint32_t start, end;
    uint32_t firstItem;
  };
  std::vector<Unit> units;
  std::vector<uint32_t> unitOf(items.size());
  std::unordered_map<int32_t, uint32_t> unitOfGroup;
  uint32_t maxMemId = 1;
  for (size_t i = 0; i < items.size(); ++i) {
    const PlanItem &item = items[i];
    if (item.start > item.end)
      throw Error("item '" + item.name + "' has lifetime [" + std::to_string(item.start) + ", " +
                      std::to_string(item.end) + "] that ends before it starts",
                  {}, item.name);
    if (item.memId == 0)
      throw Error("item '" + item.name + "' has mem_id 0; arena ids start at 1", {}, item.name);
    if (item.memId > kMaxMemId)
      throw Error("item '" + item.name + "' has mem_id " + std::to_string(item.memId) +
                      ", more than the " + std::to_string(kMaxMemId) + " arenas supported",
                  {}, item.name);
    if (item.size > UINT64_MAX - alignment)
      throw Error("item '" + item.name + "' is too large to align", {}, item.name);
    maxMemId = std::max(maxMemId, item.memId);
    uint64_t size = alignUp(item.size, alignment);
    if (item.shareGroup >= 0) {
      auto [it, inserted] =
          unitOfGroup.try_emplace(item.shareGroup, static_cast<uint32_t>(units.size()));
      if (!inserted) {
        Unit &unit = units[it->second];
        if (unit.memId != item.memId) {
          const PlanItem &first = items[unit.firstItem];
          throw Error("items '" + first.name + "' and '" + item.name + "' share storage group " +
                          std::to_string(item.shareGroup) + " but are in arenas " +
                          std::to_string(unit.memId) + " and " + std::to_string(item.memId),
                      {}, item.name);
        }
        unit.size = std::max(unit.size, size);
        unit.start = std::min(unit.start, item.start);
        unit.end = std::max(unit.end, item.end);
        unitOf[i] = it->second;
        continue;
      }
    }
    unitOf[i] = static_cast<uint32_t>(units.size());
    units.push_back({item.memId, size, item.start, item.end, static_cast<uint32_t>(i)});
  }

  std::vector<std::vector<uint32_t>> endpoints(maxMemId + 1);
  for (const Unit &unit : units) {
    endpoints[unit.memId].push_back(unit.start);
    endpoints[unit.memId].push_back(unit.end);
  }
  for (auto &points : endpoints) {
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
  }
  // Rank compression keeps every comparison between endpoints, which is all
  // that lifetime overlap and live-set sums depend on.
  auto rank = [&](uint32_t memId, uint32_t t) {
    const auto &points = endpoints[memId];
    return static_cast<uint32_t>(std::lower_bound(points.begin(), points.end(), t) -
                                 points.begin());
  };
  Arenas arenas;
  arenas.blocks.resize(maxMemId + 1);
  std::vector<uint32_t> blockOfUnit(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    const Unit &unit = units[u];
    auto &blocks = arenas.blocks[unit.memId];
    blockOfUnit[u] = static_cast<uint32_t>(blocks.size());
    blocks.push_back({unit.size, rank(unit.memId, unit.start), rank(unit.memId, unit.end)});
  }
  arenas.blockOf.resize(items.size());
  for (size_t i = 0; i < items.size(); ++i)
    arenas.blockOf[i] = blockOfUnit[unitOf[i]];
  return arenas;
}

/// The results of the algorithms on one arena, computed on demand and
/// shared: local-search starts from greedy, greedy-by-size and best-fit, and
/// `best` compares them all.
class ArenaRuns {
public:
  ArenaRuns(const std::vector<Block> &blocks, const PlanOptions &options)
      : blocks_(blocks), options_(options) {}

  const ArenaResult &get(const std::string &algorithm) {
    auto found = results_.find(algorithm);
    if (found != results_.end())
      return found->second;
    ArenaResult result;
    if (algorithm == "naive")
      result = detail::placeNaive(blocks_);
    else if (algorithm == "greedy")
      result = detail::placeGreedy(blocks_, options_.allowOverlappingAllocations);
    else if (algorithm == "greedy-by-size")
      result = detail::placeGreedyBySize(blocks_);
    else if (algorithm == "best-fit")
      result = detail::placeBestFit(blocks_);
    else if (algorithm == "local-search")
      result = detail::placeLocalSearch(blocks_, options_.localSearchMaxItems,
                                        {get("greedy-by-size"), get("greedy"), get("best-fit")});
    else
      throw InternalError("ArenaRuns: unhandled algorithm " + algorithm);
    return results_.emplace(algorithm, std::move(result)).first->second;
  }

private:
  const std::vector<Block> &blocks_;
  const PlanOptions &options_;
  std::map<std::string, ArenaResult> results_;
};

uint64_t arenaBase(const PlanOptions &options, size_t memId) {
  return memId < options.arenaBase.size() ? options.arenaBase[memId] : 0;
}

Placement placeArenas(const std::vector<PlanItem> &items, const Arenas &arenas,
                      std::vector<ArenaRuns> &runs, const std::string &algorithm,
                      const PlanOptions &options) {
  Placement placement;
  placement.algorithm = algorithm;
  placement.offsets.assign(items.size(), 0);
  placement.arenaSizes.assign(
      std::max<size_t>({2, arenas.blocks.size(), options.arenaBase.size()}), 0);
  std::vector<const ArenaResult *> results(arenas.blocks.size(), nullptr);
  for (size_t memId = 1; memId < placement.arenaSizes.size(); ++memId) {
    uint64_t base = arenaBase(options, memId);
    placement.arenaSizes[memId] = base;
    if (memId < arenas.blocks.size() && !arenas.blocks[memId].empty()) {
      results[memId] = &runs[memId].get(algorithm);
      placement.arenaSizes[memId] = base + results[memId]->extent + options.extraPadding;
    }
  }
  for (size_t i = 0; i < items.size(); ++i) {
    uint32_t memId = items[i].memId;
    placement.offsets[i] = arenaBase(options, memId) + results[memId]->offsets[arenas.blockOf[i]];
  }
  return placement;
}

} // namespace

Placement planMemory(const std::vector<PlanItem> &items, std::string_view algorithm,
                     const PlanOptions &options) {
  if (!isKnownAlgorithm(algorithm)) {
    std::string known;
    for (const auto &name : algorithmNames())
      known += (known.empty() ? "" : ", ") + name;
    throw Error("unknown memory planning algorithm '" + std::string(algorithm) + "' (known: " +
                known + ")");
  }
  Arenas arenas = buildArenas(items, options.alignment);
  for (size_t memId = 0; memId < options.arenaBase.size(); ++memId)
    if (options.arenaBase[memId] % options.alignment != 0)
      throw Error("reserved base " + std::to_string(options.arenaBase[memId]) + " of arena " +
                  std::to_string(memId) + " is not a multiple of the alignment " +
                  std::to_string(options.alignment));
  std::vector<ArenaRuns> runs;
  runs.reserve(arenas.blocks.size());
  for (const auto &blocks : arenas.blocks)
    runs.emplace_back(blocks, options);
  if (algorithm != "best")
    return placeArenas(items, arenas, runs, std::string(algorithm), options);

  // No placement can be smaller than the lower bound of every arena; once a
  // candidate reaches it, later ones could only tie, and ties keep the earlier.
  uint64_t floor = 0;
  for (size_t memId = 1; memId < std::max(arenas.blocks.size(), options.arenaBase.size());
       ++memId) {
    floor += arenaBase(options, memId);
    if (memId < arenas.blocks.size() && !arenas.blocks[memId].empty())
      floor += detail::blockLowerBound(arenas.blocks[memId]) + options.extraPadding;
  }
  Placement bestPlacement;
  uint64_t bestTotal = UINT64_MAX;
  for (const std::string &candidate : algorithmNames()) {
    if (candidate == "best")
      break;
    Placement placement = placeArenas(items, arenas, runs, candidate, options);
    uint64_t total = totalBytes(placement);
    if (total < bestTotal) {
      bestTotal = total;
      bestPlacement = std::move(placement);
    }
    if (bestTotal <= floor)
      break;
  }
  return bestPlacement;
}

uint64_t lowerBound(const std::vector<PlanItem> &items, uint32_t memId, uint64_t alignment) {
  Arenas arenas = buildArenas(items, alignment);
  if (memId >= arenas.blocks.size())
    return 0;
  return detail::blockLowerBound(arenas.blocks[memId]);
}

std::vector<uint64_t> lowerBounds(const std::vector<PlanItem> &items, uint64_t alignment) {
  Arenas arenas = buildArenas(items, alignment);
  std::vector<uint64_t> bounds(std::max<size_t>(2, arenas.blocks.size()), 0);
  for (size_t memId = 1; memId < arenas.blocks.size(); ++memId)
    bounds[memId] = detail::blockLowerBound(arenas.blocks[memId]);
  return bounds;
}

//===----------------------------------------------------------------------===//
// Shared pieces of the algorithms
//===----------------------------------------------------------------------===//
namespace detail {

uint32_t timeSpan(const std::vector<Block> &blocks) {
  uint32_t span = 0;
  for (const Block &block : blocks)
    span = std::max(span, block.end + 1);
  return span;
}

uint64_t blockLowerBound(const std::vector<Block> &blocks) {
  // delta[t] = bytes becoming live at t minus bytes dead from t on.
  std::vector<int64_t> delta(timeSpan(blocks) + 1, 0);
  for (const Block &block : blocks) {
    delta[block.start] += static_cast<int64_t>(block.size);
    delta[block.end + 1] -= static_cast<int64_t>(block.size);
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) {
    live += d;
    peak = std::max(peak, live);
  }
  return static_cast<uint64_t>(peak);
}

OverlapIndex::OverlapIndex(const std::vector<Block> &blocks)
    : classOf_(blocks.size()), positionOf_(blocks.size()) {
  std::vector<std::vector<uint32_t>> members;
  for (uint32_t i = 0; i < blocks.size(); ++i) {
    uint32_t span = blocks[i].end - blocks[i].start;
    size_t cls = std::bit_width(span); // 0 for length 1, then one class per power of two
    if (members.size() <= cls)
      members.resize(cls + 1);
    members[cls].push_back(i);
    classOf_[i] = static_cast<uint8_t>(cls);
  }
  classes_.resize(members.size());
  for (size_t c = 0; c < members.size(); ++c) {
    auto &list = members[c];
    std::stable_sort(list.begin(), list.end(),
                     [&](uint32_t a, uint32_t b) { return blocks[a].start < blocks[b].start; });
    LengthClass &cls = classes_[c];
    for (uint32_t i : list) {
      positionOf_[i] = static_cast<uint32_t>(cls.blocks.size());
      cls.longest = std::max(cls.longest, blocks[i].end - blocks[i].start);
      cls.starts.push_back(blocks[i].start);
      cls.ends.push_back(blocks[i].end);
      cls.blocks.push_back(i);
    }
    cls.active.assign((list.size() + 63) / 64, 0);
    // chunk[k]: first position starting at or after 64 k, so that a search
    // only bisects the entries of one 64-point chunk.
    uint32_t chunks = (blocks.empty() ? 0 : timeSpan(blocks) / 64) + 2;
    cls.chunk.resize(chunks);
    size_t pos = 0;
    for (uint32_t k = 0; k < chunks; ++k) {
      while (pos < cls.starts.size() && cls.starts[pos] < uint64_t(k) * 64)
        ++pos;
      cls.chunk[k] = static_cast<uint32_t>(pos);
    }
  }
}

size_t OverlapIndex::lowerPosition(const LengthClass &cls, uint32_t time) const {
  size_t k = time / 64;
  if (k + 1 >= cls.chunk.size())
    return cls.starts.size();
  auto begin = cls.starts.begin();
  return std::lower_bound(begin + cls.chunk[k], begin + cls.chunk[k + 1], time) - begin;
}

template <bool OnlyActive>
void OverlapIndex::scan(uint32_t start, uint32_t end, std::vector<uint32_t> &out) const {
  for (const LengthClass &cls : classes_) {
    if (cls.blocks.empty())
      continue;
    // A block of this class starting before `first` ends before `start`.
    uint32_t first = start > cls.longest ? start - cls.longest : 0;
    size_t pos = lowerPosition(cls, first);
    size_t count = cls.blocks.size();
    if constexpr (!OnlyActive) {
      for (; pos < count && cls.starts[pos] <= end; ++pos)
        if (cls.ends[pos] >= start)
          out.push_back(cls.blocks[pos]);
    } else {
      for (size_t word = pos / 64; word < cls.active.size(); ++word) {
        if (cls.starts[word * 64] > end)
          break; // every later position starts after `end` too
        uint64_t bits = cls.active[word];
        if (word == pos / 64)
          bits &= ~uint64_t(0) << (pos % 64);
        for (; bits != 0; bits &= bits - 1) {
          size_t at = word * 64 + std::countr_zero(bits);
          if (cls.starts[at] > end)
            break;
          if (cls.ends[at] >= start)
            out.push_back(cls.blocks[at]);
        }
      }
    }
  }
}

void OverlapIndex::collect(uint32_t start, uint32_t end, std::vector<uint32_t> &out) const {
  scan<false>(start, end, out);
}

void OverlapIndex::collectActive(uint32_t start, uint32_t end,
                                 std::vector<uint32_t> &out) const {
  scan<true>(start, end, out);
}

void OverlapIndex::activate(uint32_t block) {
  uint32_t pos = positionOf_[block];
  classes_[classOf_[block]].active[pos / 64] |= uint64_t(1) << (pos % 64);
}

void OverlapIndex::deactivateAll() {
  for (LengthClass &cls : classes_)
    std::fill(cls.active.begin(), cls.active.end(), 0);
}

namespace {
using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;

/// Calls f(lo, hi) for the ranges of three lists sorted by lo, in the order
/// of lo, until f returns false.
template <typename F> void forEachMerged(const Ranges &a, const Ranges &b, const Ranges &c, F &&f) {
  size_t i = 0, j = 0, k = 0;
  constexpr uint64_t kEnd = UINT64_MAX;
  for (;;) {
    uint64_t x = i < a.size() ? a[i].first : kEnd, y = j < b.size() ? b[j].first : kEnd,
             z = k < c.size() ? c[k].first : kEnd;
    const std::pair<uint64_t, uint64_t> *range;
    if (i < a.size() && x <= y && x <= z)
      range = &a[i++];
    else if (j < b.size() && y <= z)
      range = &b[j++];
    else if (k < c.size())
      range = &c[k++];
    else
      return;
    if (!f(range->first, range->second))
      return;
  }
}
} // namespace

LongLivedBlocks::LongLivedBlocks(const std::vector<Block> &blocks) : blocks_(blocks), kind_(blocks.size(), Short) {
  uint32_t lastTime = blocks.empty() ? 0 : timeSpan(blocks) - 1;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const Block &block = blocks[b];
    if (block.start == 0 && block.end == lastTime && block.size > 0)
      kind_[b] = Whole;
    else if (uint64_t(block.end - block.start) * 64 > lastTime) // a 64th of the span
      kind_[b] = Long;
  }
}

void LongLivedBlocks::clear() {
  whole_.clear();
  long_.clear();
}

void LongLivedBlocks::add(uint32_t b, uint64_t offset) {
  const Block &block = blocks_[b];
  uint64_t lo = offset, hi = offset + block.size;
  if (kind_[b] == Long) {
    auto at = std::upper_bound(long_.begin(), long_.end(), lo,
                               [](uint64_t value, const Entry &entry) { return value < entry.lo; });
    long_.insert(at, Entry{lo, hi, block.start, block.end});
    return;
  }
  // The first range that ends at or after lo: it and the next ones up to hi
  // merge with [lo, hi).
  auto first = std::lower_bound(whole_.begin(), whole_.end(), lo,
                                [](const auto &range, uint64_t value) { return range.second < value; });
  auto last = first;
  for (; last != whole_.end() && last->first <= hi; ++last) {
    lo = std::min(lo, last->first);
    hi = std::max(hi, last->second);
  }
  if (first == last) {
    whole_.insert(first, {lo, hi});
  } else {
    *first = {lo, hi};
    whole_.erase(first + 1, last);
  }
}

void LongLivedBlocks::collect(uint32_t start, uint32_t end, bool skipEmpty, Ranges &out) const {
  out.clear();
  for (const Entry &entry : long_)
    if (entry.start <= end && entry.end >= start && !(skipEmpty && entry.lo == entry.hi))
      out.emplace_back(entry.lo, entry.hi);
}

bool compactDown(const std::vector<Block> &blocks, OverlapIndex &index, ArenaResult &result) {
  size_t n = blocks.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return result.offsets[a] != result.offsets[b] ? result.offsets[a] < result.offsets[b] : a < b;
  });
  index.deactivateAll();
  LongLivedBlocks tracked(blocks);
  bool moved = false;
  std::vector<uint32_t> neighbours;
  std::vector<std::pair<uint64_t, uint64_t>> busy, longBusy;
  for (uint32_t b : order) {
    uint64_t offset = result.offsets[b], size = blocks[b].size;
    bool isTracked = tracked.tracks(b);
    if (!isTracked)
      index.activate(b);
    if (offset == 0 || size == 0) {
      if (isTracked)
        tracked.add(b, offset);
      continue;
    }
    neighbours.clear();
    index.collectActive(blocks[b].start, blocks[b].end, neighbours);
    busy.clear();
    for (uint32_t other : neighbours)
      if (other != b && blocks[other].size > 0)
        busy.emplace_back(result.offsets[other], result.offsets[other] + blocks[other].size);
    sortByLow(busy);
    tracked.collect(blocks[b].start, blocks[b].end, /*skipEmpty=*/true, longBusy);
    // First fit: the lowest gap that holds the block.
    uint64_t top = 0;
    forEachMerged(busy, longBusy, tracked.whole(), [&](uint64_t lo, uint64_t hi) {
      if (lo >= top + size)
        return false;
      top = std::max(top, hi);
      return true;
    });
    // The re-placed neighbours all sit below the old offset (they were below
    // it before and only moved down), so the old offset is always free.
    if (top > offset)
      throw InternalError("compactDown: block moved up");
    if (top < offset) {
      result.offsets[b] = top;
      moved = true;
    }
    if (isTracked)
      tracked.add(b, result.offsets[b]);
  }
  result.extent = 0;
  for (size_t b = 0; b < n; ++b)
    result.extent = std::max(result.extent, result.offsets[b] + blocks[b].size);
  return moved;
}

void sortByLow(std::vector<std::pair<uint64_t, uint64_t>> &ranges) {
  // The gap scans only need the ranges by start; the order among equal
  // starts does not matter to them.
  if (ranges.size() < 512) {
    std::sort(ranges.begin(), ranges.end(),
              [](const auto &a, const auto &b) { return a.first < b.first; });
    return;
  }
  // Long lists (blocks that live long) are radix-sorted, 11 bits a pass.
  uint64_t maxLow = 0;
  for (const auto &range : ranges)
    maxLow = std::max(maxLow, range.first);
  std::vector<std::pair<uint64_t, uint64_t>> scratch(ranges.size());
  std::vector<size_t> count(2048);
  for (int shift = 0; shift < 64 && (maxLow >> shift) != 0; shift += 11) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto &range : ranges)
      ++count[(range.first >> shift) & 2047];
    size_t sum = 0;
    for (size_t &c : count)
      sum += std::exchange(c, sum);
    for (const auto &range : ranges)
      scratch[count[(range.first >> shift) & 2047]++] = range;
    ranges.swap(scratch);
  }
}

namespace {
/// The smallest gap between the ranges `forEachRange` lists in order of lo
/// that holds `size` bytes, as bestFitOffset.
template <typename ForEachRange> uint64_t bestFitGap(uint64_t size, ForEachRange &&forEachRange) {
  uint64_t top = 0;
  bool found = false;
  uint64_t bestOffset = 0, bestGap = 0;
  forEachRange([&](uint64_t lo, uint64_t hi) {
    if (lo > top) {
      uint64_t gap = lo - top;
      if (gap >= size && (!found || gap < bestGap)) {
        found = true;
        bestOffset = top;
        bestGap = gap;
      }
    }
    top = std::max(top, hi);
    return true;
  });
  return found ? bestOffset : top;
}
} // namespace

uint64_t bestFitOffset(std::vector<std::pair<uint64_t, uint64_t>> &busy, uint64_t size) {
  sortByLow(busy);
  return bestFitGap(size, [&](auto &&f) {
    for (const auto &[lo, hi] : busy)
      f(lo, hi);
  });
}

uint64_t bestFitOffset(std::vector<std::pair<uint64_t, uint64_t>> &busy, const Block &block,
                       const LongLivedBlocks &tracked, std::vector<std::pair<uint64_t, uint64_t>> &scratch) {
  sortByLow(busy);
  tracked.collect(block.start, block.end, /*skipEmpty=*/false, scratch);
  return bestFitGap(block.size, [&](auto &&f) { forEachMerged(busy, scratch, tracked.whole(), f); });
}

} // namespace detail
} // namespace exir::plan
