//===- Ops/OpLibrary.h - Custom operators from a YAML file ------*- C++ -*-===//
//
// An op library (--op-library FILE.yaml, format in edge_ops/OP_LIBRARY.md)
// declares operators the built-in table lacks: their schemas in PyTorch's
// grammar, their out variants and their dtype rules. Registering one adds the
// operators to OperatorTable::builtin() for the rest of the process, so every
// stage (out variants, KernelCall layout, dtype checks) treats them like
// built-in ones. Programs record the libraries they use (Program::opLibraries)
// so later tools register them without the flag.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <string>
#include <vector>

namespace exir {

class EdgeDtypeRules;

/// Registers the library `text` read from `sourceName`. The same text twice is
/// registered once. Errors (exir::Error) name the file and "line N": YAML
/// shape, schemas, out variants, dtype rules, operators already in the table.
void registerOpLibrary(const std::string &text, const std::string &sourceName);

/// Registers every library `program` records.
void registerOpLibraries(const Program &program);

/// Reads `path`, registers it and records it in `program` (once per text).
void addOpLibrary(Program &program, const std::string &path);

/// The dtype rules of the registered libraries, in registration order.
std::vector<const EdgeDtypeRules *> opLibraryDtypeRules();

} // namespace exir
