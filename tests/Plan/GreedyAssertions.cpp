//===- tests/Plan/GreedyAssertions.cpp - greedy placement under libstdc++ assertions ===//
//
// Built with AlgorithmGreedy.cpp compiled again under _GLIBCXX_ASSERTIONS (see
// tests/CMakeLists.txt), so an out-of-range vector access in the greedy
// planner aborts instead of passing silently in the Release build: it once
// took &rows[0] of empty rows before the first object was placed.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

#include <catch2/catch.hpp>

using namespace exir::plan::detail;

TEST_CASE("greedy placement is free of out-of-range accesses", "[plan][greedy]") {
  for (bool overlap : {false, true}) {
    std::vector<Block> blocks = {{64, 0, 3}, {32, 1, 2}, {64, 4, 5}, {16, 0, 5}};
    ArenaResult r = placeGreedy(blocks, overlap);
    REQUIRE(r.offsets.size() == blocks.size());
    CHECK(r.extent >= 64 + 32 + 16);
    CHECK(placeGreedy({}, overlap).offsets.empty());
  }
  // More objects than one occupancy word holds (rows are re-laid out as they grow).
  std::vector<Block> many;
  for (uint32_t i = 0; i < 200; ++i) many.push_back({16, i % 7, i % 7 + 3});
  CHECK(placeGreedy(many, true).offsets.size() == 200);
}
