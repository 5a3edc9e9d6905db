//===- Serde/ProgramDiff.h - Differences between two programs --*- C++ -*-===//
//
// Compares two programs of the same stage through their artifact JSON (the
// form every tool writes, data references with absolute paths): one line per
// difference, located by JSON pointer, so it reads like the file does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <ostream>

namespace exir {

/// Writes one line per difference to `out`:
///   /methods/forward/graph_module/graph/nodes/1/target: "...add.Tensor" != "...sub.Tensor"
///   /constants/w: only in the first
///   /methods/forward/graph_module/graph/nodes: 3 entries != 4 entries
/// and returns true when the programs are equal. Throws exir::Error when the
/// stages differ (programs of different stages are not comparable).
bool diffPrograms(const Program &a, const Program &b, std::ostream &out);

} // namespace exir
