//===- Edge/DecomposeShapeOps.cpp - reshape/flatten/dropout/contiguous ----===//
//
// reshape and flatten are views in disguise: both become view_copy with the
// target shape (flatten's shape is computed from start_dim/end_dim). dropout in
// an inference graph and contiguous on an already-contiguous tensor are
// identities: their uses are redirected to the input and the node dropped.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

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

} // namespace

void decomposeShapeOps(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    std::vector<std::pair<std::string, std::string>> aliases; // output -> input
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
      const std::string &result = node.outputs.empty() ? std::string() : node.outputs[0].name;
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
      std::string target = input.name;
      for (const auto &[from, to] : aliases)
        if (from == target) target = to;
      aliases.emplace_back(result, target);
      return std::vector<Node>{};
    });
    for (const auto &[from, to] : aliases) {
      replaceUses(method.program, from, to);
      method.program.graph.tensorValues.erase(from);
    }
  }
}

} // namespace exir::edge
