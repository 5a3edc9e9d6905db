//===- Plan/PlanVerifier.h - Independent check of a placement ---*- C++ -*-===//
//
// Checks a placement against its items without trusting the algorithm that
// made it: every offset aligned, every item inside its arena, share-group
// members at the same place, and no two items whose lifetimes overlap sharing
// a byte. Runs in O(n log n) (a sweep over time with an ordered set of live
// byte ranges), so it is cheap enough to run after every planning.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Plan/Placement.h"

namespace exir::plan {

/// Throws exir::Error naming the offending item(s), e.g.
///   'a' [0,64) and 'b' [32,96) overlap in memory while both live at node 7
///   'x' [32,64) exceeds arena 1 of 48 bytes
///   'x' offset 8 is not a multiple of the alignment 16
/// Byte ranges are [offset, offset + aligned size). Items in the same share
/// group may overlap each other; zero-sized items occupy no bytes.
void verifyPlacement(const std::vector<PlanItem> &items, const Placement &placement,
                     uint64_t alignment = 16);

} // namespace exir::plan
