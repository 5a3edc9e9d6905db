//===- Edge/DecomposeLinear.cpp - linear, t, matmul -> permute_copy + mm ----===//
//
// linear(x, W, b) becomes permute_copy(W, [1, 0]) followed by addmm(b, x, W^T),
// or mm(x, W^T) without a bias, as upstream's core-ATen decomposition does.
// Inputs of rank > 2 are flattened to 2-D around the matrix product with
// view_copy. t() becomes permute_copy; a 2-D matmul becomes mm and a batched
// one bmm.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

namespace exir::edge {

namespace {

std::vector<SymInt> transposed2d(const std::vector<SymInt> &s) { return {s.at(1), s.at(0)}; }

std::optional<std::vector<Node>> decomposeLinear(Graph &g, Node &node) {
  std::vector<Node> out;
  const std::string x = requireArg(node, "input").name;
  const std::string w = requireArg(node, "weight").name;
  Argument biasArg = argOr(node, "bias", Argument::none());
  std::string bias = (biasArg.kind == ArgKind::Tensor || biasArg.kind == ArgKind::OptionalTensor) ? biasArg.name : "";
  const std::string result = node.outputs.at(0).name;
  // Copies: adding values below may reallocate the tensor_values table.
  const TensorMeta xm = metaOf(g, x);
  const TensorMeta wm = metaOf(g, w);
  if (wm.sizes.size() != 2) throw Error("linear weight must be 2-D", {}, "node " + node.displayName());
  ScalarType dtype = metaOf(g, result).dtype;

  std::string wt = addTensorValue(g, "permute", makeMeta(wm.dtype, transposed2d(wm.sizes), wm.device));
  out.push_back(makeCall(atenTarget("aten", "permute_copy", "default"),
                         {positional("self", Argument::tensor(w)), positional("dims", Argument::ints_({1, 0}))}, wt,
                         &node));

  size_t rank = xm.sizes.size();
  std::string lhs = x;
  std::string product = result;
  if (rank != 2) {
    // Flatten leading dims: [..., in] -> [prod, in]; static shapes only.
    auto numel = xm.numel();
    if (!numel) throw Error("linear on a dynamic input of rank " + std::to_string(rank) + " is not supported", {},
                            "node " + node.displayName());
    int64_t in = rank == 0 ? 1 : xm.sizes.back().value;
    int64_t rows = in ? *numel / in : 0;
    lhs = addTensorValue(g, "view", makeMeta(xm.dtype, {SymInt::of(rows), SymInt::of(in)}, xm.device));
    out.push_back(makeCall(atenTarget("aten", "view_copy", "default"),
                           {positional("self", Argument::tensor(x)), positional("size", Argument::ints_({rows, in}))},
                           lhs, &node));
    product = addTensorValue(g, bias.empty() ? "mm" : "addmm",
                             makeMeta(dtype, {SymInt::of(rows), wm.sizes.at(0)}, xm.device));
  }
  if (bias.empty())
    out.push_back(makeCall(atenTarget("aten", "mm", "default"),
                           {positional("self", Argument::tensor(lhs)), positional("mat2", Argument::tensor(wt))},
                           product, &node));
  else
    out.push_back(makeCall(atenTarget("aten", "addmm", "default"),
                           {positional("self", Argument::tensor(bias)), positional("mat1", Argument::tensor(lhs)),
                            positional("mat2", Argument::tensor(wt))},
                           product, &node));
  if (rank != 2) {
    std::vector<int64_t> shape;
    for (const auto &s : metaOf(g, result).sizes) shape.push_back(s.value);
    out.push_back(makeCall(atenTarget("aten", "view_copy", "default"),
                           {positional("self", Argument::tensor(product)), positional("size", Argument::ints_(shape))},
                           result, &node));
  }
  return out;
}

std::optional<std::vector<Node>> decomposeT(Graph &g, Node &node) {
  const std::string x = requireArg(node, "self").name;
  size_t rank = metaOf(g, x).sizes.size();
  std::vector<int64_t> dims = rank == 2 ? std::vector<int64_t>{1, 0} : std::vector<int64_t>{};
  if (rank < 2) {
    for (size_t i = 0; i < rank; ++i) dims.push_back(int64_t(i));
  }
  return std::vector<Node>{makeCall(atenTarget("aten", "permute_copy", "default"),
                                    {positional("self", Argument::tensor(x)), positional("dims", Argument::ints_(dims))},
                                    node.outputs.at(0).name, &node)};
}

std::optional<std::vector<Node>> decomposeMatmul(Graph &g, Node &node) {
  const std::string a = requireArg(node, "self").name, b = requireArg(node, "other").name;
  size_t ra = metaOf(g, a).sizes.size(), rb = metaOf(g, b).sizes.size();
  const std::string result = node.outputs.at(0).name;
  if (ra == 2 && rb == 2)
    return std::vector<Node>{makeCall(atenTarget("aten", "mm", "default"),
                                      {positional("self", Argument::tensor(a)), positional("mat2", Argument::tensor(b))},
                                      result, &node)};
  if (ra == 3 && rb == 3)
    return std::vector<Node>{makeCall(atenTarget("aten", "bmm", "default"),
                                      {positional("self", Argument::tensor(a)), positional("mat2", Argument::tensor(b))},
                                      result, &node)};
  throw Error("matmul of rank " + std::to_string(ra) + " x " + std::to_string(rb) +
                  " is not supported by the decomposition (2-D x 2-D and 3-D x 3-D are)",
              {}, "node " + node.displayName() + (userFrame(node).empty() ? "" : " at " + userFrame(node)));
}

} // namespace

void decomposeLinear(Program &program) {
  for (auto &[name, method] : program.methods)
    rewriteNodes(method.program.graph, [](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten") return std::nullopt;
      if (t.name == "linear" && t.overload == "default") return decomposeLinear(g, node);
      if (t.name == "t" && t.overload == "default") return decomposeT(g, node);
      if (t.name == "matmul" && t.overload == "default") return decomposeMatmul(g, node);
      return std::nullopt;
    });
}

} // namespace exir::edge
