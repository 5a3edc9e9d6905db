//===- Run/Interpreter.h - Executing programs of every stage -----*- C++ -*-===//
//
// Two executors behind one interface: the graph interpreter runs an Edge,
// delegated or planned program from the IR (an ATen program is lowered to
// Edge first), and the .pte executor runs the instructions of an
// ExecutionPlan as the runtime's Method::execute does. Both call the same
// reference kernels (Run/Kernel.h) with the runtime's KernelCall layout, so
// their results differ only where the programs differ.
//
// Planned tensors (a planned program's allocations, a .pte's allocation_info)
// live at (mem_id, offset) in one arena per mem_id, filled with a poison byte
// before the run: a wrong plan gives wrong numbers or an error, not silence.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"
#include "IR/IR.h"
#include "Run/Value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exir::run {

/// What a method expects for one user input.
struct InputInfo {
  std::string name;      // the graph's input name; "input<i>" for a .pte
  bool isTensor = true;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes; // the static sizes or, for dynamic inputs, the upper bounds
  std::vector<uint8_t> dimOrder;
  bool dynamic = false;
  /// Non-tensor inputs: the value kind the method takes (Int, Double or Bool; a
  /// sample value of that kind).
  Value scalar;
};

struct RunOptions {
  /// Byte every arena is filled with before the run.
  uint8_t poison = 0xA5;
  /// Keep a copy of every tensor a graph node produces (for --check-stages).
  bool recordIntermediates = false;
  /// Instruction budget of a .pte run (the runtime's cap on JumpFalse loops).
  uint64_t maxInstructions = 10'000'000;
};

struct RunResult {
  /// User outputs; tensors are contiguous owned copies.
  std::vector<Value> outputs;
  /// With recordIntermediates: (value name, contiguous copy) in execution order.
  std::vector<std::pair<std::string, Tensor>> intermediates;
};

class Executable {
public:
  virtual ~Executable();
  /// "edge program", "planned program", ".pte", ...
  virtual std::string kind() const = 0;
  virtual std::vector<std::string> methods() const = 0;
  virtual std::vector<InputInfo> inputs(const std::string &method) const = 0;
  /// Runs `method` on user inputs (in order). Throws exir::Error with the
  /// instruction or node as location when something is wrong.
  virtual RunResult run(const std::string &method, const std::vector<Value> &inputs, const RunOptions &options) = 0;
};

/// An Edge, delegated or planned program (stage Aten: lowered to Edge first).
std::unique_ptr<Executable> makeGraphExecutable(Program program);
/// A parsed .pte.
std::unique_ptr<Executable> makePteExecutable(pte::Program program);
/// Reads a .pte (by its "ET12" identifier) or any program input of
/// Serde/ProgramReader.h.
std::unique_ptr<Executable> loadExecutable(const std::string &path);

/// The method to run when none is given: "forward" when present, else the only one.
std::string defaultMethod(const Executable &exe);

} // namespace exir::run
