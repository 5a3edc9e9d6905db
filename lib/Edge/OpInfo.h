//===- Edge/OpInfo.h - What the edge passes ask the operator table -*- C++ -*-===//
//
// The edge passes need a handful of facts about operators (is it core ATen,
// is an argument a Tensor, what dtype rule applies). This narrow interface keeps
// the passes independent of the operator table's data model.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <map>
#include <optional>
#include <string>

namespace exir {
struct OpSchema;
class OperatorTable;
} // namespace exir

namespace exir::edge {

/// True if the operator table knows `qualifiedName` ("aten::add.Tensor").
bool isKnownOp(const std::string &qualifiedName);
/// True if the op is in the core ATen op set (or a view_copy op, which Edge also allows).
bool isCoreOp(const std::string &qualifiedName);
/// The functional twin of an in-place or out= schema (what functionalize
/// rewrites it to: add_.Tensor and add.out -> add.Tensor), or null.
const OpSchema *functionalTwin(const OperatorTable &table, const OpSchema &schema);
/// True if argument `argName` of the op has type Tensor (not Tensor?, not a list).
bool isPlainTensorParam(const std::string &qualifiedName, const std::string &argName);
/// Names of the op's arguments in schema order (empty if unknown).
std::vector<std::string> argumentNames(const std::string &qualifiedName);
/// Names of the arguments a call must pass: no default and not an out argument.
std::vector<std::string> requiredArgumentNames(const std::string &qualifiedName);

/// The IR validity checks (upstream's _check_ir_validity): the core-ATen op
/// set and the edge.yaml dtype rules. On by default; a tool's --no-verify
/// turns them off for the whole process. Structural checks always run.
void setIrValidityChecks(bool on);
bool irValidityChecks();

/// Loaded dtype rules (the project's edge_ops/edge.yaml, or a user's file).
class DtypeRules {
public:
  /// Empty path = the project's built-in edge.yaml.
  static DtypeRules load(const std::string &path);
  /// The rules a program records (Program::edgeRules: a user's file over the
  /// built-in rules, or alone), or the built-in ones. Every stage uses these.
  static DtypeRules forProgram(const Program &program);
  /// Checks one edge-op node; returns the violation text, or nullopt if allowed.
  std::optional<std::string> check(const Graph &graph, const Node &node) const;
  ~DtypeRules();
  DtypeRules(DtypeRules &&) noexcept;
  DtypeRules &operator=(DtypeRules &&) noexcept;

private:
  DtypeRules();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace exir::edge
