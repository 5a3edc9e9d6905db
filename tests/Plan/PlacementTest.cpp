//===- tests/Plan/PlacementTest.cpp - Placement algorithms ----------------===//
//
// Goldens for upstream's greedy and naive, hand-computed lower bounds, option
// and input validation, and property tests over many random instances: every
// algorithm's placement passes the verifier, `best` is never worse than any
// algorithm (greedy in particular), and our fast greedy makes exactly the
// decisions of a literal, quadratic transcription of upstream's rule.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanVerifier.h"
#include "Plan/Placement.h"
#include "PlanTestUtil.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>

using namespace exir::plan;

namespace {

using plantest::item;

/// forward(x, y) = x + y on [1] floats after ToOutVarPass: nodes 0 x, 1 y,
/// 2 alloc, 3 add.out, 4 output (pte-format.md §3.2, §5.3).
std::vector<PlanItem> addProgram() {
  return {item("x", 4, 0, 3), item("y", 4, 0, 3), item("out", 4, 2, 4)};
}

/// Upstream's greedy written out literally (objects with allocation lists,
/// linear scans), one arena, no share groups; returns offsets and the size.
std::pair<std::vector<uint64_t>, uint64_t> referenceGreedy(const std::vector<PlanItem> &items,
                                                           uint64_t alignment, bool overlapping) {
  struct Alloc {
    size_t item;
    uint64_t offset;
  };
  struct Object {
    uint64_t size;
    std::vector<Alloc> allocs;
  };
  std::vector<uint64_t> sizes;
  for (const auto &it : items)
    sizes.push_back(alignUp(it.size, alignment));
  // Ascending list with right-biased insertion, then reversed.
  std::vector<size_t> sorted;
  for (size_t i = 0; i < items.size(); ++i) {
    auto pos = std::upper_bound(sorted.begin(), sorted.end(), sizes[i],
                                [&](uint64_t s, size_t j) { return s < sizes[j]; });
    sorted.insert(pos, i);
  }
  std::reverse(sorted.begin(), sorted.end());
  auto overlap = [&](size_t a, size_t b) {
    return !(items[a].end < items[b].start || items[a].start > items[b].end);
  };
  std::vector<Object> objects;
  std::vector<std::pair<size_t, uint64_t>> where(items.size());
  for (size_t i : sorted) {
    bool done = false;
    for (size_t o = 0; o < objects.size() && !done; ++o) {
      bool free = std::none_of(objects[o].allocs.begin(), objects[o].allocs.end(),
                               [&](const Alloc &a) { return overlap(a.item, i); });
      if (free) {
        objects[o].allocs.push_back({i, 0});
        where[i] = {o, 0};
        done = true;
      }
    }
    if (!done && overlapping) {
      for (size_t o = 0; o < objects.size() && !done; ++o) {
        uint64_t maxOffset = 0;
        for (const Alloc &a : objects[o].allocs)
          if (overlap(a.item, i))
            maxOffset = std::max(maxOffset, a.offset + sizes[a.item]);
        if (maxOffset > 0 && maxOffset + sizes[i] <= objects[o].size) {
          objects[o].allocs.push_back({i, maxOffset});
          where[i] = {o, maxOffset};
          done = true;
        }
      }
    }
    if (!done) {
      objects.push_back({sizes[i], {{i, 0}}});
      where[i] = {objects.size() - 1, 0};
    }
  }
  std::vector<uint64_t> base;
  uint64_t total = 0;
  for (const auto &object : objects) {
    base.push_back(total);
    total += object.size;
  }
  std::vector<uint64_t> offsets;
  for (const auto &[object, offset] : where)
    offsets.push_back(base[object] + offset);
  return {offsets, total};
}

std::vector<std::string> concreteAlgorithms() {
  std::vector<std::string> names;
  for (const auto &name : algorithmNames())
    if (name != "best")
      names.push_back(name);
  return names;
}

} // namespace

TEST_CASE("greedy reproduces upstream's placement of add(x, y)", "[plan][greedy]") {
  Placement placement = planMemory(addProgram(), "greedy");
  // Equal sizes: the item collected last (the out buffer) goes first.
  CHECK(placement.offsets == std::vector<uint64_t>{32, 16, 0});
  CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 48});
  CHECK(placement.algorithm == "greedy");
}

TEST_CASE("greedy places the arduino AddModel output at 0 and the input at 16",
          "[plan][greedy]") {
  // x + 1.0: the lifted constant is not planned; nodes 0 const, 1 x,
  // 2 alloc, 3 add.out, 4 output.
  std::vector<PlanItem> items = {item("x", 4, 0, 3), item("out", 4, 2, 4)};
  Placement placement = planMemory(items, "greedy");
  CHECK(placement.offsets == std::vector<uint64_t>{16, 0});
  CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 32});
}

TEST_CASE("greedy reuses an object at offset 0, then above overlapping allocations",
          "[plan][greedy]") {
  std::vector<PlanItem> items = {item("big", 64, 0, 1), item("c", 32, 3, 6), item("a", 16, 4, 5)};
  SECTION("allow_overlapping_allocations (default)") {
    Placement placement = planMemory(items, "greedy");
    // c shares big's object at 0 (disjoint lifetimes); a overlaps only c, so
    // it sits at c's end (32) inside the 64-byte object.
    CHECK(placement.offsets == std::vector<uint64_t>{0, 0, 32});
    CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 64});
  }
  SECTION("without overlapping allocations a gets a new object") {
    PlanOptions options;
    options.allowOverlappingAllocations = false;
    Placement placement = planMemory(items, "greedy", options);
    CHECK(placement.offsets == std::vector<uint64_t>{0, 0, 64});
    CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 80});
  }
}

TEST_CASE("greedy objects never grow and are laid out in creation order", "[plan][greedy]") {
  // Largest first: big opens object 0 although it is collected second.
  std::vector<PlanItem> items = {item("small", 16, 0, 1), item("big", 48, 2, 3),
                                 item("mid", 32, 0, 3)};
  Placement placement = planMemory(items, "greedy");
  // big -> object 0 (48); mid overlaps big: 48 + 32 > 48 -> object 1 at 48;
  // small: big's object is free during [0, 1] -> offset 0.
  CHECK(placement.offsets == std::vector<uint64_t>{0, 0, 48});
  CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 80});
}

TEST_CASE("naive bump-allocates in item order per arena", "[plan][naive]") {
  Placement add = planMemory(addProgram(), "naive");
  CHECK(add.offsets == std::vector<uint64_t>{0, 16, 32});
  CHECK(add.arenaSizes == std::vector<uint64_t>{0, 48});

  std::vector<PlanItem> items = {item("a", 10, 0, 0, 2), item("b", 17, 5, 5, 1),
                                 item("c", 1, 9, 9, 2)};
  Placement two = planMemory(items, "naive");
  CHECK(two.offsets == std::vector<uint64_t>{0, 0, 16});
  CHECK(two.arenaSizes == std::vector<uint64_t>{0, 32, 32});
}

TEST_CASE("every arena up to the largest memId is reported", "[plan]") {
  std::vector<PlanItem> items = {item("a", 16, 0, 1, 3)};
  for (const auto &algorithm : algorithmNames()) {
    Placement placement = planMemory(items, algorithm);
    CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 0, 0, 16});
  }
  Placement empty = planMemory({}, "best");
  CHECK(empty.arenaSizes == std::vector<uint64_t>{0, 0});
  CHECK(empty.offsets.empty());
}

TEST_CASE("arena base and extra padding", "[plan]") {
  PlanOptions options;
  options.arenaBase = {0, 64};
  options.extraPadding = 64;
  Placement placement = planMemory(addProgram(), "greedy", options);
  CHECK(placement.offsets == std::vector<uint64_t>{96, 80, 64});
  CHECK(placement.arenaSizes == std::vector<uint64_t>{0, 64 + 48 + 64});

  options.arenaBase = {0, 8};
  CHECK_THROWS_WITH(planMemory(addProgram(), "greedy", options),
                    "reserved base 8 of arena 1 is not a multiple of the alignment 16");
}

TEST_CASE("alignment must be a power of two", "[plan]") {
  PlanOptions options;
  options.alignment = 24;
  CHECK_THROWS_AS(planMemory(addProgram(), "greedy", options), exir::Error);
  CHECK_THROWS_WITH(planMemory(addProgram(), "best", options),
                    "alignment 24 is not a power of two");
  CHECK_THROWS_WITH(lowerBound(addProgram(), 1, 24), "alignment 24 is not a power of two");
  options.alignment = 0;
  CHECK_THROWS_WITH(planMemory(addProgram(), "naive", options),
                    "alignment 0 is not a power of two");
  CHECK_THROWS_WITH(checkAlignment(3), "alignment 3 is not a power of two");
  CHECK_NOTHROW(checkAlignment(1));
  CHECK_NOTHROW(checkAlignment(64));
}

TEST_CASE("other alignments size and place every item on multiples", "[plan]") {
  std::vector<PlanItem> items = {item("a", 1, 0, 2), item("b", 65, 1, 3), item("c", 64, 3, 4)};
  for (const auto &algorithm : algorithmNames()) {
    INFO(algorithm);
    PlanOptions options;
    options.alignment = 64;
    Placement placement = planMemory(items, algorithm, options);
    for (uint64_t offset : placement.offsets)
      CHECK(offset % 64 == 0);
    CHECK_NOTHROW(verifyPlacement(items, placement, 64));
    CHECK(placement.arenaSizes[1] >= lowerBound(items, 1, 64));
  }
  CHECK(lowerBound(items, 1, 64) == 64 + 128);
  CHECK(lowerBound(items, 1, 1) == 65 + 64);
}

TEST_CASE("invalid items are rejected", "[plan]") {
  CHECK_THROWS_WITH(planMemory({item("v", 4, 5, 3)}, "greedy"),
                    "item 'v' has lifetime [5, 3] that ends before it starts");
  CHECK_THROWS_WITH(planMemory({item("v", 4, 0, 3, 0)}, "greedy"),
                    "item 'v' has mem_id 0; arena ids start at 1");
  CHECK_THROWS_WITH(planMemory({item("a", 4, 0, 3, 1, 7), item("b", 4, 0, 3, 2, 7)}, "greedy"),
                    "items 'a' and 'b' share storage group 7 but are in arenas 1 and 2");
  CHECK_THROWS_WITH(planMemory(addProgram(), "fancy"),
                    Catch::StartsWith("unknown memory planning algorithm 'fancy' (known: greedy"));
}

TEST_CASE("lower bound on small hand cases", "[plan][lowerbound]") {
  CHECK(lowerBound(addProgram(), 1) == 48);
  // A chain: a and b overlap at 1, b and c at 2; never all three.
  std::vector<PlanItem> chain = {item("a", 16, 0, 1), item("b", 32, 1, 2), item("c", 16, 2, 3)};
  CHECK(lowerBound(chain, 1) == 48);
  // Disjoint lifetimes: the largest one alone.
  std::vector<PlanItem> disjoint = {item("a", 16, 0, 0), item("b", 100, 1, 1),
                                    item("c", 16, 2, 2)};
  CHECK(lowerBound(disjoint, 1) == 112);
  // Inclusive ends: [0, 2] and [2, 4] overlap at 2; [0, 1] and [2, 4] do not.
  CHECK(lowerBound({item("a", 16, 0, 2), item("b", 16, 2, 4)}, 1) == 32);
  CHECK(lowerBound({item("a", 16, 0, 1), item("b", 16, 2, 4)}, 1) == 16);
  // Arenas are separate; a share group counts once at its largest member.
  std::vector<PlanItem> mixed = {item("a", 16, 0, 4, 1), item("b", 32, 0, 4, 2),
                                 item("v", 20, 2, 6, 1, 0), item("w", 40, 3, 5, 1, 0)};
  CHECK(lowerBound(mixed, 1) == 16 + 48);
  CHECK(lowerBound(mixed, 2) == 32);
  CHECK(lowerBound(mixed, 3) == 0);
  CHECK(lowerBounds(mixed) == std::vector<uint64_t>{0, 64, 32});
  CHECK(lowerBounds({}) == std::vector<uint64_t>{0, 0});
  // The lower bound is reachable here, and best reaches it.
  CHECK(totalBytes(planMemory(chain, "best")) == 48);
}

TEST_CASE("share groups get one offset", "[plan]") {
  // v is a view of a that outlives it; b overlaps v only.
  std::vector<PlanItem> items = {item("a", 64, 0, 2, 1, 3), item("b", 64, 4, 6),
                                 item("v", 64, 1, 5, 1, 3)};
  for (const auto &algorithm : algorithmNames()) {
    INFO(algorithm);
    Placement placement = planMemory(items, algorithm);
    CHECK(placement.offsets[0] == placement.offsets[2]);
    CHECK(placement.offsets[1] != placement.offsets[2]);
    CHECK_NOTHROW(verifyPlacement(items, placement));
  }
}

TEST_CASE("best keeps greedy on ties and reports the winner", "[plan][best]") {
  Placement best = planMemory(addProgram(), "best");
  CHECK(best.algorithm == "greedy");
  CHECK(best.offsets == planMemory(addProgram(), "greedy").offsets);

  // Greedy's buckets never grow: b fits neither above a (48 + 32 > 64) nor
  // above c, so it opens a third bucket; a gap-filling algorithm reaches the
  // lower bound.
  std::vector<PlanItem> items = {item("a", 48, 5, 7), item("b", 32, 4, 9), item("c", 64, 2, 4),
                                 item("d", 64, 3, 3)};
  Placement greedy = planMemory(items, "greedy");
  Placement winner = planMemory(items, "best");
  CHECK(totalBytes(greedy) == 160);
  CHECK(totalBytes(winner) == 128);
  CHECK(winner.algorithm != "greedy");
  CHECK(totalBytes(winner) == lowerBound(items, 1));
}

TEST_CASE("property: every algorithm is valid, best is never worse", "[plan][property]") {
  plantest::Rng rng(20260822);
  auto names = concreteAlgorithms();
  for (int instance = 0; instance < 400; ++instance) {
    auto items = plantest::randomItems(rng, 60, 40, instance % 2 == 0, instance % 3 != 0);
    PlanOptions options;
    options.alignment = uint64_t(1) << rng.below(8);
    if (instance % 5 == 0) {
      options.arenaBase = {0, 4 * options.alignment};
      options.extraPadding = 64;
    }
    if (instance % 7 == 0)
      options.localSearchMaxItems = 5; // the compaction-only path
    INFO("instance " << instance << " with " << items.size() << " items, alignment "
                     << options.alignment);
    std::vector<uint64_t> bounds = lowerBounds(items, options.alignment);
    uint64_t floor = 0;
    for (uint64_t bound : bounds)
      floor += bound;
    std::map<std::string, uint64_t> totals;
    for (const auto &name : names) {
      INFO(name);
      Placement placement = planMemory(items, name, options);
      REQUIRE(placement.offsets.size() == items.size());
      REQUIRE_NOTHROW(verifyPlacement(items, placement, options.alignment));
      for (size_t memId = 1; memId < bounds.size(); ++memId)
        CHECK(placement.arenaSizes[memId] >= bounds[memId]);
      totals[name] = totalBytes(placement);
      CHECK(totals[name] >= floor);
    }
    Placement best = planMemory(items, "best", options);
    REQUIRE_NOTHROW(verifyPlacement(items, best, options.alignment));
    for (const auto &[name, total] : totals)
      CHECK(totalBytes(best) <= total);
    CHECK(totalBytes(best) <= totals["greedy"]);
    CHECK(totals["local-search"] <= totals["greedy-by-size"]);
    CHECK(totals["naive"] >= totals["greedy"]);
    CHECK(totalBytes(best) == totals[best.algorithm]);
  }
}

TEST_CASE("property: greedy matches a literal transcription of upstream's rule",
          "[plan][greedy][property]") {
  plantest::Rng rng(7);
  for (int instance = 0; instance < 500; ++instance) {
    // Every tenth instance is long (hundreds of time points) so that the
    // per-64-points level of the occupancy index is exercised too.
    auto items = instance % 10 == 0 ? plantest::randomItems(rng, 400, 300, false, false)
                                    : plantest::randomItems(rng, 80, 50, false, false);
    bool overlapping = instance % 4 != 0;
    uint64_t alignment = instance % 3 == 0 ? 16 : 1;
    PlanOptions options;
    options.alignment = alignment;
    options.allowOverlappingAllocations = overlapping;
    INFO("instance " << instance);
    Placement placement = planMemory(items, "greedy", options);
    auto [offsets, total] = referenceGreedy(items, alignment, overlapping);
    REQUIRE(placement.offsets == offsets);
    REQUIRE(placement.arenaSizes[1] == total);
  }
}

TEST_CASE("placements are deterministic", "[plan]") {
  plantest::Rng rng(99);
  auto items = plantest::randomItems(rng, 300, 200, true, true);
  for (const auto &name : algorithmNames()) {
    Placement first = planMemory(items, name);
    Placement second = planMemory(items, name);
    CHECK(first.offsets == second.offsets);
    CHECK(first.arenaSizes == second.arenaSizes);
    CHECK(first.algorithm == second.algorithm);
  }
}

TEST_CASE("local-search compacts even above its hill-climb limit", "[plan]") {
  // greedy and greedy-by-size both need 336 bytes here; moving every block
  // down as far as it goes (compaction) reaches the lower bound.
  std::vector<PlanItem> items = {
      item("t0", 32, 4, 5), item("t1", 32, 4, 9), item("t2", 32, 2, 4), item("t3", 80, 5, 11),
      item("t4", 64, 0, 1), item("t5", 48, 6, 7), item("t6", 64, 3, 7), item("t7", 80, 4, 8),
      item("t8", 16, 6, 6), item("t9", 32, 4, 4)};
  PlanOptions options;
  options.localSearchMaxItems = 1; // no order search: compaction only
  CHECK(totalBytes(planMemory(items, "greedy", options)) == 336);
  CHECK(totalBytes(planMemory(items, "greedy-by-size", options)) == 336);
  CHECK(totalBytes(planMemory(items, "best-fit", options)) == 368);
  Placement compacted = planMemory(items, "local-search", options);
  CHECK(totalBytes(compacted) == 320);
  CHECK(lowerBound(items, 1) == 320);
  CHECK_NOTHROW(verifyPlacement(items, compacted));
  Placement best = planMemory(items, "best", options);
  CHECK(best.algorithm == "local-search");
  CHECK(best.offsets == compacted.offsets);
}
