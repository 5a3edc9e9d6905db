//===- Edge/RemoveAsserts.cpp - drop runtime asserts and what only they use ===//
//
// The remove-asserts pass: IR's removeGraphAssertsIn on every method's graph
// and its control-flow branches (see IR/GraphAsserts.cpp).
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"

namespace exir::edge {

void removeGraphAsserts(Program &program) { removeProgramAsserts(program); }

bool mayBeAssertOrSymOp(const std::string &target, const OpTarget &) { return mayHoldGraphAssertWork(target); }

} // namespace exir::edge
