//===- Emit/Emitter.h - planned program -> pte::Program --------*- C++ -*-===//
//
// Builds the .pte model from a planned program as upstream's emitter does
// (pte-format.md §3): values in node order, KernelCall arguments = every schema
// argument (defaults included) + the return slot, operators deduplicated per
// plan, one chain per plan, methods sorted by name, one program-wide constant
// list deduplicated by SHA-256 with index 0 reserved, constant bytes referenced
// (streamed by the writer), delegate blobs, and pytree container strings.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Emit/PteModel.h"
#include "IR/IR.h"

namespace exir::emit {

pte::Program emitProgram(const Program &program);

/// Converts a torch treespec JSON string ([1, {...}]) into ExecuTorch's compact
/// pytree string (T2#1#1($,$), ...). Returns "" for an empty spec.
std::string compactPytreeSpec(const std::string &treespecJson);

} // namespace exir::emit
