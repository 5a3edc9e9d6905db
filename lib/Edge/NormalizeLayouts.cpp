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
#include "IR/ValueNames.h"

#include <algorithm>
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

/// Whether TensorMeta::dimOrder() is [0..n-1], without building it: its
/// stable sort by descending stride keeps the order exactly when the strides
/// do not increase (or are symbolic or missing).
bool hasDefaultDimOrder(const TensorMeta &meta) {
  const auto &strides = meta.strides;
  if (strides.size() != meta.sizes.size()) return true;
  for (const auto &s : strides)
    if (s.isExpr) return true;
  for (size_t i = 1; i < strides.size(); ++i)
    if (strides[i].value > strides[i - 1].value) return false;
  return true;
}

void normalizeGraph(Graph &graph, TargetCache &targets) {
  // Only a value whose dim order is not the default can change. A graph with
  // none (most are contiguous throughout) needs no sweep over its nodes: one
  // pass over the value table in order, not a lookup per node output.
  if (std::all_of(graph.tensorValues.begin(), graph.tensorValues.end(),
                  [](const auto &item) { return hasDefaultDimOrder(item.second); }))
    return;
  for (const Node &node : graph.nodes) {
    const OpTarget &t = targets(node);
    if (t.dialect != TargetDialect::Aten) continue; // getitem, sym ops, cond, delegates
    if (setsMemoryFormat(node, t)) continue;
    // The input's layout is needed only for an output that is not contiguous (rare).
    const TensorMeta *first = nullptr;
    std::optional<std::vector<int64_t>> inputOrder;
    for (const auto &o : node.outputs)
      forEachTensorName(o, [&](const std::string &name) {
        TensorMeta *meta = graph.tensorValues.find(name);
        if (!meta || hasDefaultDimOrder(*meta)) return;
        if (!inputOrder) {
          first = firstTensorInputMeta(graph, node);
          inputOrder = first ? first->dimOrder() : std::vector<int64_t>{};
        }
        if (meta == first || meta->dimOrder() == *inputOrder) return;
        setContiguousStrides(*meta);
        meta->storageOffset = SymInt::of(0);
      });
  }
}

} // namespace

void normalizeLayouts(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods) {
    normalizeGraph(method.program.graph, targets);
    forEachSubgraph(method.program.graph, [&](Graph &g, const std::string &) { normalizeGraph(g, targets); });
  }
}

} // namespace exir::edge
