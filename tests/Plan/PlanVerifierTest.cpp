//===- tests/Plan/PlanVerifierTest.cpp - The placement verifier -----------===//
//
// Deliberately broken placements (overlap, out of arena, misalignment, split
// share groups) must be caught with a message naming the items; valid corner
// cases (touching lifetimes, share groups, zero-sized items) must pass.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanVerifier.h"
#include "Support/Error.h"

#include "PlanTestUtil.h"

#include <catch2/catch.hpp>

using namespace exir::plan;

namespace {

using plantest::item;

Placement placed(std::vector<uint64_t> offsets, std::vector<uint64_t> arenas) {
  Placement placement;
  placement.offsets = std::move(offsets);
  placement.arenaSizes = std::move(arenas);
  placement.algorithm = "hand";
  return placement;
}

} // namespace

TEST_CASE("verifier catches two live items sharing bytes", "[plan][verifier]") {
  std::vector<PlanItem> items = {item("a", 64, 2, 9), item("b", 64, 7, 12)};
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0, 32}, {0, 96})),
                    "'a' [0,64) and 'b' [32,96) overlap in memory while both live at node 7");
  // Same bytes but disjoint lifetimes: fine.
  std::vector<PlanItem> apart = {item("a", 64, 2, 6), item("b", 64, 7, 12)};
  CHECK_NOTHROW(verifyPlacement(apart, placed({0, 32}, {0, 96})));
  // Lifetimes are inclusive: ending at 7 and starting at 7 overlap.
  std::vector<PlanItem> touching = {item("a", 64, 2, 7), item("b", 64, 7, 12)};
  CHECK_THROWS_WITH(verifyPlacement(touching, placed({0, 0}, {0, 64})),
                    "'a' [0,64) and 'b' [0,64) overlap in memory while both live at node 7");
  // The overlap is found whichever side the newcomer is on.
  std::vector<PlanItem> below = {item("hi", 32, 0, 5), item("lo", 48, 3, 4)};
  CHECK_THROWS_WITH(verifyPlacement(below, placed({32, 0}, {0, 64})),
                    "'hi' [32,64) and 'lo' [0,48) overlap in memory while both live at node 3");
  // Different arenas never conflict.
  std::vector<PlanItem> arenas = {item("a", 64, 0, 9, 1), item("b", 64, 0, 9, 2)};
  CHECK_NOTHROW(verifyPlacement(arenas, placed({0, 0}, {0, 64, 64})));
}

TEST_CASE("verifier finds an overlap hidden behind other items", "[plan][verifier]") {
  // c sits between a and b in address order and overlaps a's range while a
  // is live; b is an innocent neighbour.
  std::vector<PlanItem> items = {item("a", 64, 0, 10), item("b", 16, 0, 10),
                                 item("c", 32, 5, 6)};
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0, 96, 48}, {0, 112})),
                    "'a' [0,64) and 'c' [48,80) overlap in memory while both live at node 5");
}

TEST_CASE("verifier catches items outside their arena", "[plan][verifier]") {
  std::vector<PlanItem> items = {item("x", 20, 0, 1)};
  CHECK_THROWS_WITH(verifyPlacement(items, placed({32}, {0, 48})),
                    "'x' [32,64) exceeds arena 1 of 48 bytes");
  CHECK_THROWS_WITH(verifyPlacement({item("y", 16, 0, 1, 3)}, placed({0}, {0, 64})),
                    "'y' is in arena 3 but the placement has arenas 1..1");
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0}, {16, 48})),
                    "arena 0 is reserved but has size 16");
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0, 0}, {0, 48})),
                    "placement has 2 offsets for 1 items");
}

TEST_CASE("verifier catches misaligned offsets", "[plan][verifier]") {
  std::vector<PlanItem> items = {item("x", 16, 0, 1)};
  CHECK_THROWS_WITH(verifyPlacement(items, placed({8}, {0, 32})),
                    "'x' offset 8 is not a multiple of the alignment 16");
  CHECK_NOTHROW(verifyPlacement(items, placed({8}, {0, 32}), 8));
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0}, {0, 32}), 24),
                    "alignment 24 is not a power of two");
}

TEST_CASE("verifier handles share groups and zero-sized items", "[plan][verifier]") {
  // v is a view of a: same storage, may overlap a; b must avoid both.
  std::vector<PlanItem> items = {item("a", 64, 0, 4, 1, 0), item("v", 32, 3, 8, 1, 0),
                                 item("b", 32, 6, 9)};
  CHECK_NOTHROW(verifyPlacement(items, placed({0, 0, 64}, {0, 96})));
  // b reuses the bytes of a after a died, but v still holds [0, 32).
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0, 0, 16}, {0, 96})),
                    "'v' [0,32) and 'b' [16,48) overlap in memory while both live at node 6");
  // ... and [32, 64) is free again once a is dead.
  CHECK_NOTHROW(verifyPlacement(items, placed({0, 0, 32}, {0, 96})));
  CHECK_THROWS_WITH(verifyPlacement(items, placed({0, 16, 64}, {0, 96})),
                    "'a' and 'v' share storage group 0 but are placed at 1:0 and 1:16");
  // Zero-sized items occupy nothing.
  std::vector<PlanItem> empty = {item("a", 64, 0, 4), item("z", 0, 0, 4)};
  CHECK_NOTHROW(verifyPlacement(empty, placed({0, 0}, {0, 64})));
}

TEST_CASE("verifier accepts every algorithm on a dense instance", "[plan][verifier]") {
  std::vector<PlanItem> items;
  for (uint32_t i = 0; i < 200; ++i)
    items.push_back(item("t" + std::to_string(i), 16 + (i * 37) % 500, i, i + (i * 7) % 23));
  for (const auto &algorithm : algorithmNames())
    CHECK_NOTHROW(verifyPlacement(items, planMemory(items, algorithm)));
  // Sliding one item onto a live neighbour is caught.
  Placement placement = planMemory(items, "greedy");
  Placement broken = placement;
  bool moved = false;
  for (size_t i = 0; i < items.size() && !moved; ++i)
    for (size_t j = i + 1; j < items.size() && !moved; ++j)
      if (items[j].start <= items[i].end && broken.offsets[j] != broken.offsets[i] &&
          alignUp(items[j].size, 16) <= alignUp(items[i].size, 16)) {
        broken.offsets[j] = broken.offsets[i];
        moved = true;
      }
  REQUIRE(moved);
  CHECK_THROWS_WITH(verifyPlacement(items, broken), Catch::Contains("overlap in memory"));
}
