//===- Edge/DecomposeWithRules.cpp - the data-driven decompositions -------===//
//
// Runs the builtin decomposition rules (lib/Edge/decompositions.yaml); the
// pipeline runs them together with the user's --decompositions files.
//
//===----------------------------------------------------------------------===//
#include "Edge/DecompositionRules.h"
#include "Edge/Passes.h"

namespace exir::edge {

void decomposeRules(Program &program) { decomposeWithRules(program, DecompositionRules::builtin()); }

} // namespace exir::edge
