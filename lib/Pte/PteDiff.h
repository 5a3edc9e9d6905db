//===- Pte/PteDiff.h - Structural comparison of two programs ----*- C++ -*-===//
//
// Compares the content of two pte::Programs: plans, values, operators,
// instructions, delegates (blob bytes by content), buffer sizes, and the
// constant / mutable / named-data payloads by bytes. The file layout (segment
// offsets, extended header, inline vs segment placement) is not compared, so a
// program and its write -> read round trip are equal.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <ostream>

namespace exir::pte {

/// Writes one line per difference (`execution_plan[0].values[3]: Int 1 != Int 2`)
/// to `out`; returns true when the programs are equal.
bool diffPte(const Program &a, const Program &b, std::ostream &out);

} // namespace exir::pte
