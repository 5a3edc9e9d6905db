//===- Edge/NormalizeLayouts.cpp - output strides as the kernels make them -===//
//
// The traced strides of an op's output follow eager PyTorch, where an
// elementwise op on a transposed view keeps the view's layout. Once views are
// `_copy` ops (contiguous), those strides no longer describe what the kernels
// produce, and the runtime's portable kernels refuse an out tensor whose dim
// order differs from their inputs' (tensors_have_same_dim_order). Upstream gets
// fresh strides by re-tracing in to_edge; here each output keeps its traced
// layout only when it is the layout of its first tensor input (as torch's
// elementwise ops propagate channels-last) or when the op asks for a memory
// format explicitly; every other output becomes contiguous.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Edge/SymSize.h"

#include <optional>
#include <unordered_map>

namespace exir::edge {

namespace {

// _to_copy / clone / empty with an explicit memory format other than preserve:
// the traced layout is what the user asked for.
bool setsMemoryFormat(const Node &node, const OpTarget &t) {
  if (t.name != "_to_copy" && t.name != "clone" && t.name != "empty" && t.name != "empty_like") return false;
  const Argument *format = findArg(node, "memory_format");
  return format && format->kind == ArgKind::MemoryFormat && format->intValue != kMemoryFormatPreserve;
}

void normalizeGraph(Graph &graph) {
  std::unordered_map<std::string, OpTarget> targets; // parsed once per distinct target
  std::vector<std::string> outs;
  for (const Node &node : graph.nodes) {
    auto [slot, unseen] = targets.try_emplace(node.target);
    if (unseen) slot->second = targetOf(node);
    const OpTarget &t = slot->second;
    if (t.dialect != TargetDialect::Aten) continue; // getitem, sym ops, cond, delegates
    if (setsMemoryFormat(node, t)) continue;
    outs.clear();
    for (const auto &o : node.outputs) o.collectTensorNames(outs);
    // The input's layout is needed only for an output that is not contiguous (rare).
    const TensorMeta *first = nullptr;
    std::optional<std::vector<int64_t>> inputOrder;
    for (const auto &name : outs) {
      TensorMeta *meta = graph.tensorValues.find(name);
      if (!meta) continue;
      std::vector<int64_t> order = meta->dimOrder();
      bool contiguous = true;
      for (size_t i = 0; i < order.size(); ++i) contiguous &= order[i] == int64_t(i);
      if (contiguous) continue;
      if (!inputOrder) {
        first = firstTensorInputMeta(graph, node);
        inputOrder = first ? first->dimOrder() : std::vector<int64_t>{};
      }
      if (meta == first || order == *inputOrder) continue;
      meta->strides = symContiguousStrides(meta->sizes);
      meta->storageOffset = SymInt::of(0);
    }
  }
}

} // namespace

void normalizeLayouts(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    normalizeGraph(method.program.graph);
    forEachSubgraph(method.program.graph, [](Graph &g, const std::string &) { normalizeGraph(g); });
  }
}

} // namespace exir::edge
