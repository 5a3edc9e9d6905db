//===- Pte/PteDump.h - JSON and text dumps of a pte::Program ----*- C++ -*-===//
//
// dumpPteJson prints the program as `flatc --json --strict-json --defaults-json`
// does with schema/program.fbs: same field names and order, enum names, all
// scalar fields including defaults, absent tables/vectors left out, byte
// vectors as number arrays, doubles with flatc's 12 digits. Layout fields
// (segments, inline buffers, processed references) come from program.layout,
// so a program that was not read from a file shows none.
//
// dumpPteText prints a readable listing: header and segments, then per plan the
// values (`%3 = Tensor f32[2, 2] dim_order=[0,1] mem=1+32`), operators,
// instructions with operator names, delegates and buffer sizes, then the
// constant, mutable-data and named-data payloads with their sizes (and, with
// TextDumpOptions::hashes, their SHA-256).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <ostream>
#include <string>

namespace exir::pte {

struct TextDumpOptions {
  /// Print the SHA-256 of every payload. It reads every payload byte (a second
  /// for 2 GB of weights), so the default listing shows sizes only and reads
  /// just the header and the flatbuffer.
  bool hashes = false;
};

void dumpPteJson(const Program &program, std::ostream &out);
void dumpPteText(const Program &program, std::ostream &out, const TextDumpOptions &options = {});
/// A Graphviz graph per execution plan: instructions (boxes, in order) and the
/// tensor values they use (ellipses; constants as notes), with the plan's
/// inputs and outputs. A .pte does not say which arguments a kernel writes, so
/// the direction is inferred: a tensor that no earlier instruction, plan input
/// or constant provides is taken as written by the first instruction using it
/// (an out variant's out argument); every other use reads it.
void dumpPteDot(const Program &program, std::ostream &out);

/// One value as the text dump shows it: "Int 1", "IntList [%4, %5]",
/// "Tensor f32[2, 2] dim_order=[0,1] mem=1+32", ...
std::string formatValue(const EValue &value);
/// One instruction with operator / delegate names resolved from `plan`:
/// "KernelCall aten::add.out(%0, %1, %3, %2, %2)".
std::string formatInstruction(const Instruction &instruction, const ExecutionPlan &plan);
/// Shortest decimal form that reads back as the same double ("0.1", "inf", "nan").
std::string formatDouble(double value);
/// Bytes as quoted text when printable ASCII, else lower-case hex ("0x0400").
std::string formatBytes(std::string_view bytes);

} // namespace exir::pte
