//===- Run/Delegates.h - Running delegate calls ------------------*- C++ -*-===//
//
// A delegate call runs as the runtime's registered backend would run its
// blob: BackendWithCompilerDemo with the semantics of upstream's runtime test
// backend (pte-format.md §7.5: records parsed from the blob, add / mm / sin
// hard-wired to argument positions, sin as x - x^3/6), ExirSubgraphJson by
// interpreting the subgraph its blob holds (a .pte has nothing else). In a
// graph program every other backend runs the original subgraph the artifact
// keeps (it has the delegate's constants); without one, a clear error.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "Run/Interpreter.h"
#include "Run/Value.h"

#include <span>
#include <string>
#include <vector>

namespace exir::run {

/// True when runBackendBlob knows how to run `backendId` from its blob alone.
bool isKnownBackend(const std::string &backendId);

/// Runs a blob of a known backend on a DelegateCall's args (inputs, then outputs).
void runBackendBlob(const std::string &backendId, const std::string &blob,
                    const std::vector<CompileSpec> &compileSpecs, std::span<Value *> args,
                    const RunOptions &options);

/// Runs an (unplanned) ExportedProgram on its user inputs; its constants come
/// from `owner`'s constant table. Used for delegates' original subgraphs and
/// cond branches. `where` is the graph's JSON pointer, for errors.
std::vector<Value> runExportedProgram(const Program &owner, const ExportedProgram &ep,
                                      const std::vector<Value> &userInputs, const RunOptions &options,
                                      const std::string &where);

/// Copies `src` into `dst` (resizing dst within its bound; dtypes must agree).
void copyTensorInto(Tensor &dst, const Tensor &src, const std::string &what);

} // namespace exir::run
