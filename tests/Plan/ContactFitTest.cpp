//===- tests/Plan/ContactFitTest.cpp - Touching-perimeter placement -------===//
//
// The touching-perimeter rule (detail::placeContactFit) on hand-checked
// blocks and random ones, and the convnet shape that made every algorithm
// but it end at 1.11x the lower bound: `best` must reach the bound there,
// also on arenas too large for local-search's order search.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanVerifier.h"
#include "Plan/Placement.h"
#include "PlanTestUtil.h"

#include <catch2/catch.hpp>

#include <numeric>

using namespace exir::plan;
using detail::ArenaResult;
using detail::Block;

namespace {

using plantest::item;

/// `stages` stages of a MobileNet-like network, with the lifetimes that
/// exir-plan computes for bench/gen_models.py's convnet: per stage a residual
/// (1 KiB) live over the whole stage and into the next one, a chain of six
/// 4 KiB activations each overlapping the next, and two 1 KiB tensors at the
/// stage's end. At most two activations and the residual are live at once.
std::vector<PlanItem> convnetItems(int stages) {
  std::vector<PlanItem> items;
  for (int k = 0; k < stages; ++k) {
    uint32_t t = 24 * k;
    std::string s = "s" + std::to_string(k) + "_";
    items.push_back(item(s + "residual", 1024, t, t + 25));
    const uint32_t chain[6][2] = {{2, 7}, {4, 9}, {8, 11}, {10, 15}, {12, 17}, {16, 19}};
    for (int i = 0; i < 6; ++i)
      items.push_back(item(s + "act" + std::to_string(i), 4096, t + chain[i][0], t + chain[i][1]));
    items.push_back(item(s + "a", 1024, t + 18, t + 23));
    items.push_back(item(s + "b", 1024, t + 20, t + 25));
  }
  return items;
}

/// True if no two blocks that overlap in time overlap in bytes.
bool disjoint(const std::vector<Block> &blocks, const ArenaResult &result) {
  for (size_t i = 0; i < blocks.size(); ++i)
    for (size_t j = i + 1; j < blocks.size(); ++j) {
      const Block &a = blocks[i], &b = blocks[j];
      if (a.size == 0 || b.size == 0 || a.end < b.start || b.end < a.start)
        continue;
      uint64_t x = result.offsets[i], y = result.offsets[j];
      if (x < y + b.size && y < x + a.size)
        return false;
    }
  return true;
}

std::vector<uint32_t> identity(size_t n) {
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  return order;
}

} // namespace

TEST_CASE("contact fit puts a block where it touches most", "[plan][contact-fit]") {
  // a takes the floor; b overlaps a for two time points only, so it goes
  // under the ceiling (touching it all its life) rather than on top of a.
  std::vector<Block> blocks = {{16, 0, 10}, {16, 9, 20}};
  detail::OverlapIndex index(blocks);
  ArenaResult result = detail::placeContactFit(blocks, identity(2), index, 48);
  CHECK(result.offsets == std::vector<uint64_t>{0, 32});
  CHECK(result.extent == 48);

  // c (32 bytes) fits nowhere below the ceiling between a and b: it goes to
  // the lowest gap that holds it, above both, and raises the ceiling.
  blocks.push_back({32, 8, 12});
  detail::OverlapIndex index3(blocks);
  result = detail::placeContactFit(blocks, identity(3), index3, 48);
  CHECK(result.offsets == std::vector<uint64_t>{0, 32, 48});
  CHECK(result.extent == 80);
  CHECK(disjoint(blocks, result));
}

TEST_CASE("contact fit: equal contact goes to the lower offset", "[plan][contact-fit]") {
  // b lives inside a's lifetime: right on top of a it touches a all its life,
  // under the ceiling it touches the ceiling as long; the lower end wins.
  std::vector<Block> blocks = {{16, 0, 10}, {16, 2, 5}};
  detail::OverlapIndex index(blocks);
  ArenaResult result = detail::placeContactFit(blocks, identity(2), index, 64);
  CHECK(result.offsets == std::vector<uint64_t>{0, 16});
}

TEST_CASE("property: contact fit placements are valid for any order and ceiling",
          "[plan][contact-fit][property]") {
  plantest::Rng rng(314159);
  for (int instance = 0; instance < 300; ++instance) {
    size_t n = 1 + rng.below(80);
    std::vector<Block> blocks;
    for (size_t i = 0; i < n; ++i) {
      Block b;
      b.size = rng.below(6) == 0 ? 0 : 16 * (1 + rng.below(rng.below(2) ? 8 : 64));
      b.start = uint32_t(rng.below(60));
      b.end = b.start + uint32_t(rng.below(rng.below(4) == 0 ? 60 : 6));
      blocks.push_back(b);
    }
    std::vector<uint32_t> order = identity(n);
    for (size_t i = n; i > 1; --i)
      std::swap(order[i - 1], order[rng.below(i)]);
    uint64_t bound = detail::blockLowerBound(blocks);
    uint64_t ceiling = instance % 3 == 0 ? 0 : bound + 16 * rng.below(4);
    detail::OverlapIndex index(blocks);
    ArenaResult result = detail::placeContactFit(blocks, order, index, ceiling);
    INFO("instance " << instance);
    REQUIRE(result.offsets.size() == n);
    CHECK(disjoint(blocks, result));
    CHECK(result.extent >= bound);
    uint64_t extent = 0;
    for (size_t i = 0; i < n; ++i)
      extent = std::max(extent, result.offsets[i] + blocks[i].size);
    CHECK(result.extent == extent);
  }
}

TEST_CASE("convnet residuals: best reaches the lower bound", "[plan][contact-fit]") {
  std::vector<PlanItem> items = convnetItems(40);
  uint64_t bound = lowerBound(items, 1);
  CHECK(bound == 2 * 4096 + 1024);
  // Size order and program order both stack two residuals and then find no
  // room for two activations beside them.
  uint64_t greedy = totalBytes(planMemory(items, "greedy"));
  CHECK(greedy > bound);
  CHECK(totalBytes(planMemory(items, "greedy-by-size")) > bound);
  CHECK(totalBytes(planMemory(items, "best-fit")) > bound);
  for (size_t maxItems : {size_t(4000), size_t(1)}) { // with and without the order search
    PlanOptions options;
    options.localSearchMaxItems = maxItems;
    INFO("localSearchMaxItems " << maxItems);
    Placement local = planMemory(items, "local-search", options);
    REQUIRE_NOTHROW(verifyPlacement(items, local));
    CHECK(totalBytes(local) == bound);
    Placement best = planMemory(items, "best", options);
    CHECK(best.algorithm == "local-search");
    CHECK(totalBytes(best) == bound);
    CHECK(totalBytes(best) <= greedy);
  }
}
