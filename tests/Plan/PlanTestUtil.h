//===- tests/Plan/PlanTestUtil.h - Shared helpers for the Plan tests ------===//
//
// A deterministic random instance generator (fixed-seed splitmix64, so the
// instances are the same on every platform) used by the property tests.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Plan/Placement.h"

#include <string>
#include <vector>

namespace plantest {

/// A PlanItem in one line: item("x", 4, 0, 3).
inline exir::plan::PlanItem item(std::string name, uint64_t size, uint32_t start, uint32_t end,
                                 uint32_t memId = 1, int32_t group = -1) {
  exir::plan::PlanItem result;
  result.name = std::move(name);
  result.size = size;
  result.start = start;
  result.end = end;
  result.memId = memId;
  result.shareGroup = group;
  return result;
}

class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t bound) { return next() % bound; }

private:
  uint64_t state_;
};

/// A random instance: up to maxItems items over up to maxNodes nodes, sizes
/// from tiny to a few KiB (with repeats, to exercise ties), optionally a
/// second arena and share groups.
inline std::vector<exir::plan::PlanItem> randomItems(Rng &rng, size_t maxItems, uint32_t maxNodes,
                                                     bool arenas, bool groups) {
  static const uint64_t commonSizes[] = {4, 16, 64, 100, 256, 1000, 4096};
  size_t n = 1 + rng.below(maxItems);
  std::vector<exir::plan::PlanItem> items;
  for (size_t i = 0; i < n; ++i) {
    exir::plan::PlanItem item;
    item.name = "t" + std::to_string(i);
    item.size = rng.below(3) == 0 ? commonSizes[rng.below(7)] : rng.below(5000);
    if (rng.below(20) == 0)
      item.size = 0;
    item.start = static_cast<uint32_t>(rng.below(maxNodes));
    item.end = item.start + static_cast<uint32_t>(rng.below(rng.below(4) == 0 ? maxNodes : 6));
    if (arenas && rng.below(4) == 0)
      item.memId = 2;
    if (groups && i > 0 && rng.below(6) == 0) {
      // A view of an earlier item: same storage, lifetime inside or extending it.
      size_t base = rng.below(i);
      if (items[base].shareGroup < 0)
        items[base].shareGroup = static_cast<int32_t>(base);
      item.shareGroup = items[base].shareGroup;
      item.memId = items[base].memId;
      item.start = items[base].start + static_cast<uint32_t>(rng.below(3));
      item.end = std::max(item.start, items[base].end) + static_cast<uint32_t>(rng.below(3));
    }
    items.push_back(item);
  }
  return items;
}

} // namespace plantest
