//===- Edge/DecomposeShapeOps.cpp - reshape/flatten/dropout/contiguous ----===//
//
// reshape and flatten are views in disguise: both become view_copy with the
// target shape (flatten's shape is computed from start_dim/end_dim). dropout in
// an inference graph and contiguous on an already-contiguous tensor are
// identities: their uses are redirected to the input and the node dropped.
// split/split_with_sizes/unbind return lists, which the runtime side handles
// poorly; each list element becomes its own slice / select (a view replaced by
// its _copy later), as many as the node has outputs.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

#include <cstdint>
#include <unordered_map>

namespace exir::edge {

namespace {

Argument shapeArgument(const std::vector<SymInt> &sizes, const Node &node) {
  std::vector<int64_t> values;
  for (const auto &s : sizes) {
    if (s.isExpr)
      throw Error("flatten of a dynamic shape is not supported", {}, "node " + node.displayName());
    values.push_back(s.value);
  }
  return Argument::ints_(values);
}

/// split.Tensor / split_with_sizes -> one slice per output; unbind -> one select per output.
std::optional<std::vector<Node>> splitIntoElements(Graph &g, Node &node, const OpTarget &t) {
  bool split = t.name == "split" && t.overload == "Tensor";
  bool splitSizes = (t.name == "split_with_sizes" && t.overload == "default") || (t.name == "split" && t.overload == "sizes");
  bool unbind = t.name == "unbind" && t.overload == "int";
  if (!split && !splitSizes && !unbind) return std::nullopt;
  if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensors) return std::nullopt;
  const std::string self = requireArg(node, "self").name;
  int64_t rank = int64_t(metaOf(g, self).sizes.size());
  int64_t dim = argOr(node, "dim", Argument::integer(0)).intValue;
  if (dim < 0) dim += rank;
  const auto &elements = node.outputs[0].names;
  std::vector<int64_t> sizes;
  if (split) {
    const Argument &s = requireArg(node, "split_size");
    if (s.kind != ArgKind::Int) return std::nullopt; // a symbolic split size stays a list op
    sizes.assign(elements.size(), s.intValue);
  } else if (splitSizes) {
    auto given = concreteInts(requireArg(node, splitSizes && t.name == "split" ? "split_size" : "split_sizes"));
    if (!given || given->size() != elements.size()) return std::nullopt;
    sizes = *given;
  }
  std::vector<Node> out;
  int64_t start = 0;
  for (size_t k = 0; k < elements.size(); ++k) {
    if (elements[k].empty()) continue;
    if (unbind) {
      out.push_back(makeCall(atenTarget("aten", "select", "int"),
                             {positional("self", Argument::tensor(self)), positional("dim", Argument::integer(dim)),
                              positional("index", Argument::integer(int64_t(k)))},
                             elements[k], &node));
      continue;
    }
    // The last piece runs to the end, so a symbolic size along dim is fine.
    int64_t end = k + 1 == elements.size() ? INT64_MAX : start + sizes[k];
    out.push_back(makeCall(atenTarget("aten", "slice", "Tensor"),
                           {positional("self", Argument::tensor(self)), positional("dim", Argument::integer(dim)),
                            positional("start", Argument::integer(start)), positional("end", Argument::integer(end))},
                           elements[k], &node));
    start += sizes[k];
  }
  return out;
}

} // namespace

void decomposeShapeOps(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods) {
    std::unordered_map<std::string, std::string> aliases; // output -> the first real value
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
      if (auto pieces = splitIntoElements(g, node, t)) return pieces;
      static const std::string kNoResult;
      const std::string &result = node.outputs.empty() ? kNoResult : node.outputs[0].name; // no copy per node
      if (t.name == "reshape" && t.overload == "default") {
        return std::vector<Node>{makeCall(atenTarget("aten", "view_copy", "default"),
                                          {positional("self", requireArg(node, "self")),
                                           positional("size", requireArg(node, "shape"))},
                                          result, &node)};
      }
      if (t.name == "flatten" && t.overload == "using_ints") {
        const std::string x = requireArg(node, "self").name;
        return std::vector<Node>{makeCall(atenTarget("aten", "view_copy", "default"),
                                          {positional("self", Argument::tensor(x)),
                                           positional("size", shapeArgument(metaOf(g, result).sizes, node))},
                                          result, &node)};
      }
      bool identity = false;
      if (t.name == "dropout" && t.overload == "default") {
        const Argument *train = findArg(node, "train");
        if (train && train->kind == ArgKind::Bool && train->intValue)
          throw Error("dropout with train=True cannot be lowered; export the model in eval() mode", {},
                      "node " + node.displayName());
        identity = true;
      }
      if (t.name == "contiguous" && t.overload == "default") identity = true;
      if (t.name == "detach" && t.overload == "default") identity = true;
      if (!identity) return std::nullopt;
      const Argument &input = node.inputs.at(0).arg;
      if (input.kind != ArgKind::Tensor) return std::nullopt;
      // A chain of identities (dropout -> contiguous) must end at the first real value.
      auto known = aliases.find(input.name);
      aliases[result] = known == aliases.end() ? input.name : known->second;
      return std::vector<Node>{};
    });
    // One sweep for all the identities (not one whole-graph rename per node).
    if (!aliases.empty()) renameUses(method.program, aliases);
  }
}

} // namespace exir::edge
