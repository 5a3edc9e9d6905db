//===- IR/GraphPrinter.h - Human-readable dumps ----------------*- C++ -*-===//
//
// Text like torch's ExportedProgram printing (one line per node with dtype and
// shape annotations, the graph signature, range constraints) and Graphviz DOT.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <ostream>

namespace exir {

struct PrintOptions {
  bool stackTraces = true; // print "# File: ..." comment lines from stack_trace metadata
};

void printExportedProgram(std::ostream &os, const ExportedProgram &ep, const PrintOptions &opts = {});
void printProgram(std::ostream &os, const Program &program, const PrintOptions &opts = {});
void printDot(std::ostream &os, const Program &program);

} // namespace exir
