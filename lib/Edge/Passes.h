//===- Edge/Passes.h - The edge passes (to_edge) ---------------*- C++ -*-===//
#pragma once

#include "IR/IR.h"
#include "IR/Pass.h"

#include <string>
#include <vector>

namespace exir::edge {

#define EDGE_PASS(name, fn, summary, trigger) void fn(Program &program);
#include "Edge/Passes.def"

/// Trigger predicates of Passes.def (see PassTrigger), beside their passes.
/// An in-place or out= ATen op (or an unknown one named like an in-place op).
bool mayMutate(const std::string &target, const OpTarget &parsed);
/// A runtime assert or a symbolic op (from the target's text alone).
bool mayBeAssertOrSymOp(const std::string &target, const OpTarget &parsed);
/// An ATen view op with a _copy twin.
bool isViewOp(const std::string &target, const OpTarget &parsed);
/// A target check-aten-dialect would not pass silently (not core ATen, unknown).
bool needsAtenDialectCheck(const std::string &target, const OpTarget &parsed);

/// Renames single-output edge nodes after their op (aten_add_tensor, ...).
void renameEdgeNodes(Program &program);
/// Refuses non-core aten ops left after decomposition (unless allowed).
void checkAtenDialect(Program &program, const std::vector<std::string> &allowNonCore);
/// Applies op-replacement rules from a YAML file (--rewrite).
void applyRewriteRules(Program &program, const std::string &rulesPath);

/// --fold-constants: fold what does not grow the emitted constants (auto),
/// every foldable node (always), or nothing (never). See FoldConstants.cpp.
enum class FoldConstantsMode { Auto, Always, Never };
void foldConstantsWith(Program &program, FoldConstantsMode mode);

/// Every edge pass known to --pass.
const std::vector<PassInfo> &edgePassRegistry();
/// The trigger Passes.def gives pass `name` (always() for a name it lacks).
struct PassTrigger;
PassTrigger edgePassTrigger(const std::string &name);

/// The passes toEdge runs with default options, in order: Passes.def's, with
/// functionalize once more after decompose-rules (the copy_ write-backs rules
/// emit) and check-aten-dialect before replace-view-ops. Options only drop
/// passes from it (--skip-dim-order, --fold-constants never).
std::vector<std::string> toEdgePassOrder();

/// Every pass toEdge can run, in pipeline order, as (name, summary): the
/// registry plus the steps --pass cannot name (check-aten-dialect, rewrite).
/// What --list-passes shows and --print-after accepts.
std::vector<std::pair<std::string, std::string>> edgePipelinePasses();

struct EdgeOptions {
  bool skipDimOrder = false;
  FoldConstantsMode foldConstants = FoldConstantsMode::Auto;
  std::vector<std::string> allowNonCore;  // qualified names, "aten::foo.bar"
  std::string edgeYamlPath;               // empty = the project's edge_ops/edge.yaml
  bool edgeYamlReplace = false;           // the user's file alone, not over the built-in rules
  std::vector<std::string> extraPasses;   // --pass NAME, run after to_edge
  std::vector<std::string> rewriteRules;  // --rewrite FILE, run after extra passes
  std::vector<std::string> decompositionFiles; // --decompositions FILE, tried before the builtin rules
  PassManagerOptions passManager;
  /// false: toEdge / runUserPassesOnEdge leave the final verification to the
  /// caller (verifyEdgeProgram with DtypeRules::forProgram of the result);
  /// exir-edge runs it beside writing the output.
  bool verifyResult = true;
};

/// to_edge: the whole pipeline, with verification at the end (and after every
/// pass when passManager.verifyEach is set). The program becomes stage Edge.
void toEdge(Program &program, const EdgeOptions &options);

/// The user's passes (--pass, --rewrite) on a program that already is Edge
/// dialect, verified after each and at the end (exir-edge on an Edge artifact).
void runUserPassesOnEdge(Program &program, const EdgeOptions &options);

/// The edge-stage verifier: structure, edge namespace, dtype rules.
class DtypeRules;
void verifyEdgeProgram(const Program &program, const DtypeRules &rules);
/// The same for one method of an Edge program (a delegate's original module),
/// reported as /methods/<methodName>/...
void verifyEdgeMethod(const ExportedProgram &method, const std::string &methodName, const DtypeRules &rules);

} // namespace exir::edge
