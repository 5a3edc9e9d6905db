//===- Edge/DecomposeConvolution.cpp - conv{1,2,3}d -> convolution --------===//
//
// torch.export keeps the user-facing conv1d/conv2d/conv3d; core ATen only has
// `convolution`. The rewrite spells out every argument, with the N-d defaults
// expanded (stride 1, padding 0, dilation 1, groups 1) and transposed=False,
// output_padding=[0]*N, exactly as upstream's decomposition prints it.
// The string-padding overloads (conv2d.padding) become numbers: "valid" is 0;
// "same" pads dilation * (kernel - 1) per dim, half on each side and the odd
// one on the right (a constant_pad_nd first), as ATen's _convolution_mode does.
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

/// The numeric padding for a string one; the extra right-side padding of an
/// even-sized "same" window goes into `rightExtra` (empty when symmetric).
std::vector<int64_t> stringPadding(const Graph &graph, const Node &node, const std::string &mode, size_t n,
                                   std::vector<int64_t> &rightExtra) {
  auto fail = [&](const std::string &why) { throw Error("padding='" + mode + "': " + why, {}, "node " + node.displayName()); };
  if (mode == "valid") return std::vector<int64_t>(n, 0);
  if (mode != "same") fail("expected 'same' or 'valid'");
  auto stride = concreteInts(argOr(node, "stride", Argument::ints_({1})));
  auto dilation = concreteInts(argOr(node, "dilation", Argument::ints_({1})));
  if (!stride || !dilation) fail("needs static stride and dilation");
  for (int64_t s : *stride)
    if (s != 1) fail("needs stride 1 (as torch requires)");
  if (dilation->size() == 1) dilation->assign(n, (*dilation)[0]);
  const Argument &weight = requireArg(node, "weight");
  const TensorMeta &w = metaOf(graph, weight.name);
  if (w.sizes.size() != n + 2 || dilation->size() != n) fail("weight or dilation of the wrong rank");
  std::vector<int64_t> left(n);
  for (size_t i = 0; i < n; ++i) {
    if (w.sizes[i + 2].isExpr) fail("needs a static kernel size");
    int64_t total = (*dilation)[i] * (w.sizes[i + 2].value - 1);
    left[i] = total / 2;
    if (total - left[i] != left[i]) {
      rightExtra.resize(n, 0);
      rightExtra[i] = total - 2 * left[i];
    }
  }
  return left;
}

std::optional<std::vector<Node>> decompose(Graph &graph, Node &node, const OpTarget &t) {
  if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
  size_t n = 0;
  if (t.name == "conv1d") n = 1;
  else if (t.name == "conv2d") n = 2;
  else if (t.name == "conv3d") n = 3;
  else return std::nullopt;
  std::vector<Node> out;
  Argument input = requireArg(node, "input");
  Argument padding = argOr(node, "padding", Argument::ints_({0}));
  if (t.overload == "padding") {
    if (padding.kind != ArgKind::String)
      throw Error("padding of aten::" + t.name + ".padding must be a string", {}, "node " + node.displayName());
    std::vector<int64_t> extra;
    padding = Argument::ints_(stringPadding(graph, node, padding.name, n, extra));
    if (!extra.empty()) {
      // constant_pad_nd lists (left, right) pairs from the last dim back.
      std::vector<int64_t> pad;
      TensorMeta padded = metaOf(graph, input.name);
      for (size_t i = n; i-- > 0;) {
        pad.push_back(0);
        pad.push_back(extra[i]);
        SymInt &size = padded.sizes.at(padded.sizes.size() - n + i);
        if (size.isExpr) throw Error("padding='same' with an even kernel needs static input sizes", {}, "node " + node.displayName());
        size = SymInt::of(size.value + extra[i]);
      }
      padded = makeMeta(padded.dtype, padded.sizes, padded.device);
      std::string name = addTensorValue(graph, input.name + "_padded", padded);
      out.push_back(makeCall(atenTarget("aten", "constant_pad_nd", "default"),
                             {positional("self", input), positional("pad", Argument::ints_(pad)),
                              positional("value", Argument::integer(0))},
                             name, &node));
      input = Argument::tensor(name);
    }
  } else if (t.overload != "default") {
    return std::nullopt;
  }
  std::vector<NamedArgument> args;
  args.push_back(positional("input", input));
  args.push_back(positional("weight", requireArg(node, "weight")));
  Argument bias = argOr(node, "bias", Argument::none());
  if (bias.kind == ArgKind::OptionalTensor) bias = bias.name.empty() ? Argument::none() : Argument::tensor(bias.name);
  args.push_back(positional("bias", bias));
  args.push_back(positional("stride", expandIntList(argOr(node, "stride", Argument::ints_({1})), n, "stride", node)));
  args.push_back(positional("padding", expandIntList(padding, n, "padding", node)));
  args.push_back(positional("dilation", expandIntList(argOr(node, "dilation", Argument::ints_({1})), n, "dilation", node)));
  args.push_back(positional("transposed", Argument::boolean(false)));
  args.push_back(positional("output_padding", Argument::ints_(std::vector<int64_t>(n, 0))));
  args.push_back(positional("groups", argOr(node, "groups", Argument::integer(1))));
  out.push_back(makeCall(atenTarget("aten", "convolution", "default"), std::move(args), node.outputs.at(0).name, &node));
  return out;
}
} // namespace

void decomposeConvolution(Program &program) {
  TargetCache targets;
  for (auto &[name, method] : program.methods)
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) { return decompose(g, node, targets(node)); });
}

} // namespace exir::edge
