//===- Edge/ReplaceViewOps.cpp - view ops -> their functional _copy ops ---===//
//
// Edge has no aliasing: every view op becomes its `_copy` twin, which has the
// same arguments and returns a fresh tensor. (The planner later turns static
// view_copy ops back into free memory.view aliases where that is safe.)
// A fresh tensor is contiguous: the traced strides of a view (a transpose's
// [1, 4], an expand's 0) are replaced by row-major ones, since the runtime's
// kernels refuse an out tensor whose dim order is not the default one.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Edge/SymSize.h"

#include "IR/ValueNames.h"

#include <map>
#include <unordered_map>

namespace exir::edge {

namespace {
// view op name -> copy op name (same overloads). A fixed fact of ATen.
const std::map<std::string, std::string> kViewToCopy = {
    {"view", "view_copy"},           {"permute", "permute_copy"},
    {"expand", "expand_copy"},       {"select", "select_copy"},
    {"slice", "slice_copy"},         {"squeeze", "squeeze_copy"},
    {"unsqueeze", "unsqueeze_copy"}, {"transpose", "transpose_copy"},
    {"alias", "alias_copy"},         {"t", "t_copy"},
    {"unfold", "unfold_copy"},       {"diagonal", "diagonal_copy"},
    {"as_strided", "as_strided_copy"}, {"split", "split_copy"},
    {"split_with_sizes", "split_with_sizes_copy"}, {"unbind", "unbind_copy"},
    {"detach", "detach_copy"},       {"view_as_real", "view_as_real_copy"},
    {"view_as_complex", "view_as_complex_copy"}, {"_unsafe_view", "view_copy"},
    {"pixel_shuffle", "pixel_shuffle"}, {"narrow", "narrow_copy"},
};
} // namespace

bool isViewOp(const std::string &, const OpTarget &t) {
  if (t.dialect != TargetDialect::Aten || t.ns != "aten") return false;
  auto it = kViewToCopy.find(t.name);
  return it != kViewToCopy.end() && it->second != t.name;
}

void replaceViewOps(Program &program) {
  // Per distinct target: the target of its _copy twin, or "" for an op that is
  // not a view (worked out once, not per node).
  // Also whether its nodes may take subgraphs (a higher-order op's branches).
  struct Twin {
    std::string target;
    bool higherOrder = false;
  };
  StringMap<Twin> twins;
  auto twinOf = [&](const std::string &target) -> const Twin & {
    auto [slot, unseen] = twins.try_emplace(target);
    if (!unseen) return slot->second;
    OpTarget t = parseTarget(target);
    slot->second.higherOrder = t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge;
    if (t.dialect != TargetDialect::Aten || t.ns != "aten") return slot->second;
    auto it = kViewToCopy.find(t.name);
    if (it == kViewToCopy.end() || it->second == t.name) return slot->second;
    slot->second.target = atenTarget("aten", it->second, t.name == "_unsafe_view" ? "default" : t.overload);
    return slot->second;
  };
  // Cond branches are rewritten like the method; only a higher-order op's
  // operands are looked at for them (an ATen op takes no graph).
  std::function<void(Graph &)> replace = [&](Graph &graph) {
    for (Node &node : graph.nodes) {
      const Twin &found = twinOf(node.target);
      if (found.higherOrder)
        for (auto &in : node.inputs)
          if (in.arg.kind == ArgKind::Graph && in.arg.graph()) replace(*in.arg.graph());
      const std::string &twin = found.target;
      if (twin.empty()) continue;
      node.target = twin;
      for (const auto &o : node.outputs)
        forEachTensorName(o, [&](const std::string &name) {
          TensorMeta *meta = graph.tensorValues.find(name);
          if (!meta) return;
          setContiguousStrides(*meta);
          meta->storageOffset = SymInt::of(0);
        });
    }
  };
  for (auto &[methodName, method] : program.methods) replace(method.program.graph);
}

} // namespace exir::edge
