//===- Edge/DecomposeConvolution.cpp - conv{1,2,3}d -> convolution --------===//
//
// torch.export keeps the user-facing conv1d/conv2d/conv3d; core ATen only has
// `convolution`. The rewrite spells out every argument, with the N-d defaults
// expanded (stride 1, padding 0, dilation 1, groups 1) and transposed=False,
// output_padding=[0]*N, exactly as upstream's decomposition prints it.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

namespace exir::edge {

namespace {
/// int[N] arguments may be given with one element meaning "all dims".
Argument expandIntList(const Argument &arg, size_t n, const std::string &what, const Node &node) {
  auto values = concreteInts(arg);
  if (!values) return arg; // symbolic: keep as given
  if (values->size() == 1 && n > 1) values->assign(n, (*values)[0]);
  if (values->size() != n)
    throw Error(what + " has " + std::to_string(values->size()) + " elements, expected " + std::to_string(n), {},
                "node " + node.displayName());
  return Argument::ints_(*values);
}

std::optional<std::vector<Node>> decompose(Node &node, const OpTarget &t) {
  if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
  size_t n = 0;
  if (t.name == "conv1d") n = 1;
  else if (t.name == "conv2d") n = 2;
  else if (t.name == "conv3d") n = 3;
  else return std::nullopt;
  if (t.overload != "default")
    throw Error("aten::" + t.name + "." + t.overload + " (string padding) is not supported; export with numeric padding",
                {}, "node " + node.displayName());
  std::vector<NamedArgument> args;
  args.push_back(positional("input", requireArg(node, "input")));
  args.push_back(positional("weight", requireArg(node, "weight")));
  Argument bias = argOr(node, "bias", Argument::none());
  if (bias.kind == ArgKind::OptionalTensor) bias = bias.name.empty() ? Argument::none() : Argument::tensor(bias.name);
  args.push_back(positional("bias", bias));
  args.push_back(positional("stride", expandIntList(argOr(node, "stride", Argument::ints_({1})), n, "stride", node)));
  args.push_back(positional("padding", expandIntList(argOr(node, "padding", Argument::ints_({0})), n, "padding", node)));
  args.push_back(positional("dilation", expandIntList(argOr(node, "dilation", Argument::ints_({1})), n, "dilation", node)));
  args.push_back(positional("transposed", Argument::boolean(false)));
  args.push_back(positional("output_padding", Argument::ints_(std::vector<int64_t>(n, 0))));
  args.push_back(positional("groups", argOr(node, "groups", Argument::integer(1))));
  Node conv = makeCall(atenTarget("aten", "convolution", "default"), std::move(args), node.outputs.at(0).name, &node);
  return std::vector<Node>{std::move(conv)};
}
} // namespace

void decomposeConvolution(Program &program) {
  TargetCache targets;
  for (auto &[name, method] : program.methods)
    rewriteNodes(method.program.graph, [&](Graph &, Node &node) { return decompose(node, targets(node)); });
}

} // namespace exir::edge
