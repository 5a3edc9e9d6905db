//===- Plan/PlanPasses.h - to_executorch: out variants and memory planning -*- C++ -*-===//
//
// The IR-level half of exir-plan. ToOutVariant turns functional edge ops into
// their out variants fed by memory.alloc nodes; ViewsToAliases turns static
// view_copy ops into free memory.view aliases; planProgram computes lifetimes
// from the node order and places every planned tensor with the algorithms of
// Placement.h, then verifies the result.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"
#include "IR/ValueNames.h"
#include "Plan/Placement.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace exir::plan {

/// BUFFER_MUTATION outputs -> aten::copy_(buffer, new value) before the output.
void insertBufferWriteBack(Program &program);

/// Removes runtime asserts on symbolic values (_assert_scalar, sym_constrain_range*)
/// and the sym ops only they used, as to_executorch does.
void removeGraphAsserts(Program &program);

/// Functional edge op -> `.out` variant with one memory.alloc per out argument.
/// Throws naming the node when an op has no out variant.
void toOutVariant(Program &program);

/// Static view_copy of a tensor that is neither a graph input nor output, whose
/// result is not a graph output -> executorch.exir.memory.view aliasing the base.
void viewsToAliases(Program &program);

struct PlanningOptions {
  std::string algorithm = "best";
  uint64_t alignment = 16;
  bool allocGraphInputs = true;
  bool allocGraphOutputs = true;
  bool allocMutableBuffers = true;
  /// Mutable buffers with the same FQN share one placement across all methods,
  /// in an extra arena appended after the others (upstream's share_mutable_buffers).
  bool shareMutableBuffers = false;
  /// Arena placement rules: kind ("inputs", "outputs", "activations", "buffers") -> mem_id.
  std::map<std::string, uint32_t> memIds;
};

/// What planning produced for one method, for reports and pictures.
struct MethodPlanDetails {
  std::vector<PlanItem> items;
  Placement placement;
  std::vector<uint64_t> lowerBounds;
};

/// Plans every method (program must be out-variant converted); stage becomes Planned.
std::map<std::string, MethodPlanDetails> planProgram(Program &program, const PlanningOptions &options);

/// The plan verifier run alone: re-derives lifetimes from the graph and checks the
/// recorded allocations (no overlap of live tensors, inside the arena, aligned,
/// aliases placed with their storage, nothing produced in the graph left unplanned).
std::map<std::string, MethodPlanDetails> verifyMemoryPlan(const Program &program);

/// Value name -> the value whose storage it uses: an out-variant op's results
/// alias its out arguments (the allocs), a memory.view aliases its base.
std::unordered_map<std::string, std::string> storageAliases(const Graph &graph);
/// The same pairs (value, the value whose storage it uses), in node order, as
/// references into the graph; a later pair for the same value overrides.
void forEachStorageAlias(const Graph &graph,
                         const std::function<void(const std::string &, const std::string &)> &alias);
/// The rules forEachStorageAlias applies, one node at a time, for passes that
/// keep their own record of the allocs (by dense id instead of by name).
/// markAlloc(name) records an alloc's result, isAlloc(name) asks for one,
/// alias(value, base) reports a pair; names are references into the node.
class StorageAliasRules {
public:
  template <typename MarkAlloc, typename IsAlloc, typename Alias>
  void node(const Node &node, MarkAlloc &&markAlloc, IsAlloc &&isAlloc, Alias &&alias) {
    Kind kind = kindOf(node.target);
    if (kind == Kind::Alloc) {
      for (const auto &o : node.outputs)
        if (o.kind == ArgKind::Tensor) markAlloc(o.name);
      return;
    }
    if (kind == Kind::View) {
      if (!node.inputs.empty() && node.inputs[0].arg.kind == ArgKind::Tensor && !node.outputs.empty())
        alias(node.outputs[0].name, node.inputs[0].arg.name);
      return;
    }
    // An in-place op (name ending in '_', e.g. copy_) returns its first argument's storage.
    if (kind == Kind::InPlace && !node.inputs.empty() && node.inputs[0].arg.kind == ArgKind::Tensor &&
        !node.outputs.empty() && node.outputs[0].kind == ArgKind::Tensor) {
      alias(node.outputs[0].name, node.inputs[0].arg.name);
      return;
    }
    // k-th result aliases the k-th alloc passed as a keyword argument (lists
    // flattened: the elements of split_with_sizes_copy's result alias its out list).
    outArgs_.clear();
    results_.clear();
    for (const auto &in : node.inputs)
      if (in.kind && *in.kind == ArgumentPassing::Keyword &&
          (in.arg.kind == ArgKind::Tensor || in.arg.kind == ArgKind::Tensors))
        forEachTensorName(in.arg, [&](const std::string &n) {
          if (isAlloc(n)) outArgs_.push_back(&n);
        });
    for (const auto &o : node.outputs)
      if (o.kind == ArgKind::Tensor || o.kind == ArgKind::Tensors)
        forEachTensorName(o, [&](const std::string &n) { results_.push_back(&n); });
    for (size_t k = 0; k < outArgs_.size() && k < results_.size(); ++k) alias(*results_[k], *outArgs_[k]);
  }

private:
  enum class Kind { Alloc, View, InPlace, Other };
  /// What a target is, parsed once per distinct target (parseTarget builds strings).
  Kind kindOf(const std::string &target);
  std::unordered_map<std::string_view, Kind> kinds_;
  std::vector<const std::string *> outArgs_, results_;
};

/// Follows storageAliases to the root.
std::string storageRoot(const std::unordered_map<std::string, std::string> &aliases, std::string name);

/// An unbacked size symbol of a nonzero result (u0 in [u0, ndim]) without an upper
/// bound gets one: nonzero of N elements has at most N rows.
void boundDataDependentSizes(Program &program);

/// Upper bound of a symbolic size given the method's range constraints.
/// Throws exir::Error when the expression has no finite upper bound.
int64_t upperBound(const SymInt &size, const ExportedProgram &ep);

/// Text report: per method and arena, planned bytes, lower bound, ratio,
/// algorithm, biggest tensors.
std::string planReport(const Program &program, const std::map<std::string, MethodPlanDetails> &details);

} // namespace exir::plan
