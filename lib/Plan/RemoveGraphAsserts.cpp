//===- Plan/RemoveGraphAsserts.cpp - drop runtime asserts before planning --===//
//
// to_executorch removes the runtime asserts torch.export records on symbolic
// values (RemoveGraphAssertsPass) and the sym ops that only fed them. exir-edge
// already does so; this covers Edge programs made elsewhere that still carry
// them (see IR/GraphAsserts.cpp).
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"

namespace exir::plan {

void removeGraphAsserts(Program &program) { removeProgramAsserts(program); }

} // namespace exir::plan
