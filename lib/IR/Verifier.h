//===- IR/Verifier.h - Stage invariants ------------------------*- C++ -*-===//
//
// One verifier per stage, called at every tool's input and output (and after
// each pass with --verify-each). Structural rules hold for every stage:
// topological order, every use defined, signature matches placeholders and
// outputs, tensor metadata present. Stage rules add what each stage promises
// (edge: edge-namespace targets; planned: out variants and allocations).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

namespace exir {

/// Throws exir::Error naming the method, JSON-pointer-like location and rule.
void verifyProgram(const Program &program, Stage stage);
/// Structural rules for one method (any stage).
void verifyMethodStructure(const ExportedProgram &method, const std::string &methodName);
/// verifyProgram's rules for one method of a program of `stage` (not Planned,
/// whose rules also read the program's memory plan), without a Program
/// around it: a delegate's original module is checked where it is.
void verifyMethod(const ExportedProgram &method, const std::string &methodName, Stage stage);

} // namespace exir
