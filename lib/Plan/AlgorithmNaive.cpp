//===- Plan/AlgorithmNaive.cpp - Bump allocation without reuse ------------===//
//
// Upstream's `naive` planner: every storage unit gets fresh bytes right after
// the previous one, in collection order. Nothing is reused, so the arena is
// the sum of all sizes. Useful as a baseline and for debugging aliasing bugs.
//
//===----------------------------------------------------------------------===//
#include "Plan/Placement.h"

namespace exir::plan::detail {

ArenaResult placeNaive(const std::vector<Block> &blocks) {
  ArenaResult result;
  result.offsets.reserve(blocks.size());
  for (const Block &block : blocks) {
    result.offsets.push_back(result.extent);
    result.extent += block.size;
  }
  return result;
}

} // namespace exir::plan::detail
