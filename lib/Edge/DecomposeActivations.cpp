//===- Edge/DecomposeActivations.cpp - relu6, silu, softmax forms ---------===//
//
// Non-core activation spellings that torch.export leaves in the graph:
// relu6 -> hardtanh(x, 0, 6); silu -> mul(x, sigmoid(x)); hardswish and
// hardsigmoid stay (they are in the operator table as non-core only when the
// table says so); softmax.int / log_softmax.int -> _softmax / _log_softmax
// with half_to_float=False (a dtype argument is rejected: it needs a cast).
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

namespace exir::edge {

void decomposeActivations(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods)
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
      static const std::string kNoResult;
      const std::string &result = node.outputs.empty() ? kNoResult : node.outputs[0].name; // no copy per node
      if (t.name == "relu6" && t.overload == "default")
        return std::vector<Node>{makeCall(atenTarget("aten", "hardtanh", "default"),
                                          {positional("self", requireArg(node, "self")),
                                           positional("min_val", Argument::real(0.0)),
                                           positional("max_val", Argument::real(6.0))},
                                          result, &node)};
      if (t.name == "silu" && t.overload == "default") {
        const std::string x = requireArg(node, "self").name;
        std::string sig = addTensorValue(g, "sigmoid", metaOf(g, x));
        return std::vector<Node>{
            makeCall(atenTarget("aten", "sigmoid", "default"), {positional("self", Argument::tensor(x))}, sig, &node),
            makeCall(atenTarget("aten", "mul", "Tensor"),
                     {positional("self", Argument::tensor(x)), positional("other", Argument::tensor(sig))}, result,
                     &node)};
      }
      bool soft = t.name == "softmax" && t.overload == "int";
      bool logSoft = t.name == "log_softmax" && t.overload == "int";
      if (soft || logSoft) {
        const Argument *dtype = findArg(node, "dtype");
        if (dtype && dtype->kind != ArgKind::None)
          throw Error(t.name + " with an explicit dtype is not supported", {}, "node " + node.displayName());
        return std::vector<Node>{makeCall(atenTarget("aten", soft ? "_softmax" : "_log_softmax", "default"),
                                          {positional("self", requireArg(node, "self")),
                                           positional("dim", requireArg(node, "dim")),
                                           positional("half_to_float", Argument::boolean(false))},
                                          result, &node)};
      }
      return std::nullopt;
    });
}

} // namespace exir::edge
