//===- Edge/DimOrderOps.cpp - memory_format ops -> dim_order ops ----------===//
//
// ExecuTorch describes layouts by dim order, not memory format. As upstream's
// MemoryFormatOpsPass does by default, _to_copy / clone / empty.memory_format
// become dim_order_ops::_to_dim_order_copy / _clone_dim_order /
// _empty_dim_order with an explicit dim_order list: contiguous -> [0..n-1],
// channels_last -> [0, 2, 3, 1], preserve (or none) -> the input's order.
// --skip-dim-order leaves them as they are.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

#include <algorithm>
#include <numeric>

namespace exir::edge {

namespace {
std::vector<int64_t> dimOrderFor(const Argument *memoryFormat, const TensorMeta &input, const Node &node) {
  size_t rank = input.sizes.size();
  std::vector<int64_t> contiguous(rank);
  std::iota(contiguous.begin(), contiguous.end(), 0);
  if (!memoryFormat || memoryFormat->kind == ArgKind::None || memoryFormat->intValue == kMemoryFormatPreserve)
    return input.dimOrder();
  if (memoryFormat->intValue == kMemoryFormatContiguous) return contiguous;
  if (memoryFormat->intValue == kMemoryFormatChannelsLast && rank == 4) return {0, 2, 3, 1};
  if (memoryFormat->intValue == kMemoryFormatChannelsLast3d && rank == 5) return {0, 2, 3, 4, 1};
  throw Error("memory_format " + std::to_string(memoryFormat->intValue) + " cannot be expressed as a dim order for rank " +
                  std::to_string(rank),
              {}, "node " + node.displayName());
}
} // namespace

void dimOrderOps(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods)
    for (Node &node : method.program.graph.nodes) {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Edge || t.ns != "aten") continue;
      const Graph &g = method.program.graph;
      std::string newName;
      if (t.name == "_to_copy" && t.overload == "default") newName = "_to_dim_order_copy";
      else if (t.name == "clone" && t.overload == "default") newName = "_clone_dim_order";
      else if (t.name == "empty" && t.overload == "memory_format") newName = "_empty_dim_order";
      else continue;
      const Argument *mf = findArg(node, "memory_format");
      std::vector<int64_t> order;
      if (newName == "_empty_dim_order") {
        const TensorMeta &out = metaOf(g, node.outputs.at(0).name);
        order = dimOrderFor(mf, out, node);
      } else {
        order = dimOrderFor(mf, metaOf(g, node.inputs.at(0).arg.name), node);
      }
      std::vector<NamedArgument> inputs;
      for (auto &in : node.inputs)
        if (in.name != "memory_format") inputs.push_back(in);
      inputs.push_back(keyword("dim_order", Argument::ints_(order)));
      node.inputs = std::move(inputs);
      node.target = edgeTarget("dim_order_ops", newName, "default");
    }
}

} // namespace exir::edge
