//===- tests/Edge/DecompositionTest.cpp - to_edge decompositions ----------===//
//
// Each decomposition on a graph of a few nodes: the exact replacement nodes
// (targets, argument names in schema order, argument values with defaults
// expanded), the metadata of the values they introduce, and the errors for
// what cannot be lowered.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;
using Names = std::vector<std::string>;
using Ints = std::vector<int64_t>;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

const Argument &arg(const Node &n, const std::string &name) {
  const NamedArgument *a = n.input(name);
  REQUIRE(a);
  return a->arg;
}

/// conv(x, w, b) with only the given extra arguments, as torch.export omits defaults.
Program convProgram(const std::string &op, const Ints &xs, const Ints &ws, const Ints &outs,
                    std::vector<NamedArgument> extra) {
  GraphBuilder b;
  b.param("p_weight", "conv.weight", F32, ws).param("p_bias", "conv.bias", F32, {ws[0]});
  b.input("x", F32, xs);
  std::vector<NamedArgument> args = {pos("input", T("x")), pos("weight", T("p_weight")), pos("bias", T("p_bias"))};
  for (auto &e : extra) args.push_back(e);
  b.aten(op, args, "conv", F32, outs);
  b.output("conv");
  return programOf(b.ep);
}

} // namespace

TEST_CASE("conv2d becomes convolution with every argument spelled out", "[edge][conv]") {
  Program p = convProgram("conv2d.default", {1, 3, 8, 8}, {4, 3, 3, 3}, {1, 4, 6, 6}, {});
  edge::decomposeConvolution(p);
  const auto &nodes = graphOf(p).nodes;
  REQUIRE(nodes.size() == 1);
  const Node &n = nodes[0];
  CHECK(n.target == "torch.ops.aten.convolution.default");
  CHECK(argNames(n) == Names{"input", "weight", "bias", "stride", "padding", "dilation", "transposed",
                             "output_padding", "groups"});
  CHECK(arg(n, "input").name == "x");
  CHECK(arg(n, "weight").name == "p_weight");
  CHECK(arg(n, "bias").name == "p_bias");
  CHECK(arg(n, "stride").ints == Ints{1, 1});
  CHECK(arg(n, "padding").ints == Ints{0, 0});
  CHECK(arg(n, "dilation").ints == Ints{1, 1});
  CHECK(arg(n, "transposed").kind == ArgKind::Bool);
  CHECK(arg(n, "transposed").intValue == 0);
  CHECK(arg(n, "output_padding").ints == Ints{0, 0});
  CHECK(arg(n, "groups").kind == ArgKind::Int);
  CHECK(arg(n, "groups").intValue == 1);
  CHECK(n.outputs.at(0).name == "conv");
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("conv2d: one-element lists expand, given values are kept", "[edge][conv]") {
  Program p = convProgram("conv2d.default", {1, 4, 8, 8}, {4, 2, 3, 3}, {1, 4, 4, 4},
                          {pos("stride", Argument::ints_({2})), pos("padding", Argument::ints_({1})),
                           pos("dilation", Argument::ints_({1, 1})), pos("groups", Argument::integer(2))});
  edge::decomposeConvolution(p);
  const Node &n = graphOf(p).nodes.at(0);
  CHECK(arg(n, "stride").ints == Ints{2, 2});
  CHECK(arg(n, "padding").ints == Ints{1, 1});
  CHECK(arg(n, "dilation").ints == Ints{1, 1});
  CHECK(arg(n, "groups").intValue == 2);
}

TEST_CASE("conv1d without bias", "[edge][conv]") {
  GraphBuilder b;
  b.param("p_weight", "conv.weight", F32, {2, 3, 3});
  b.input("x", F32, {1, 3, 10});
  b.aten("conv1d.default",
         {pos("input", T("x")), pos("weight", T("p_weight")), pos("bias", Argument::none()),
          pos("stride", Argument::ints_({2}))},
         "conv1d", F32, {1, 2, 4});
  b.output("conv1d");
  Program p = programOf(b.ep);
  edge::decomposeConvolution(p);
  const Node &n = graphOf(p).nodes.at(0);
  CHECK(n.target == "torch.ops.aten.convolution.default");
  CHECK(arg(n, "bias").kind == ArgKind::None);
  CHECK(arg(n, "stride").ints == Ints{2});
  CHECK(arg(n, "padding").ints == Ints{0});
  CHECK(arg(n, "output_padding").ints == Ints{0});
}

TEST_CASE("conv errors: wrong list length and string padding", "[edge][conv]") {
  Program p = convProgram("conv2d.default", {1, 3, 8, 8}, {4, 3, 3, 3}, {1, 4, 6, 6},
                          {pos("stride", Argument::ints_({1, 1, 1}))});
  CHECK(errorOf([&] { edge::decomposeConvolution(p); }) == "node conv: stride has 3 elements, expected 2");
  Program q = convProgram("conv2d.padding", {1, 3, 8, 8}, {4, 3, 3, 3}, {1, 4, 4, 4},
                          {pos("stride", Argument::ints_({2})), pos("padding", Argument::string("same"))});
  CHECK(errorOf([&] { edge::decomposeConvolution(q); }) == "node conv: padding='same': needs stride 1 (as torch requires)");
  Program r = convProgram("conv2d.padding", {1, 3, 8, 8}, {4, 3, 3, 3}, {1, 4, 10, 10},
                          {pos("padding", Argument::string("full"))});
  CHECK(errorOf([&] { edge::decomposeConvolution(r); }) == "node conv: padding='full': expected 'same' or 'valid'");
}

TEST_CASE("conv2d padding='same': symmetric numbers, or a constant_pad_nd for an even kernel", "[edge][conv]") {
  Program p = convProgram("conv2d.padding", {1, 3, 8, 8}, {4, 3, 3, 5}, {1, 4, 8, 8},
                          {pos("padding", Argument::string("same")), pos("dilation", Argument::ints_({2, 1}))});
  edge::decomposeConvolution(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 1);
  CHECK(arg(g.nodes[0], "padding").ints == Ints{2, 2});
  Program q = convProgram("conv2d.padding", {1, 3, 8, 8}, {4, 3, 2, 3}, {1, 4, 8, 8},
                          {pos("padding", Argument::string("same"))});
  edge::decomposeConvolution(q);
  const Graph &h = graphOf(q);
  REQUIRE(h.nodes.size() == 2);
  CHECK(h.nodes[0].target == "torch.ops.aten.constant_pad_nd.default");
  CHECK(arg(h.nodes[0], "pad").ints == Ints{0, 0, 0, 1}); // (left, right) of the width, then of the height
  const std::string padded = h.nodes[0].outputs.at(0).name;
  CHECK(h.tensorValues.find(padded)->sizes == std::vector<SymInt>{SymInt::of(1), SymInt::of(3), SymInt::of(9), SymInt::of(8)});
  CHECK(arg(h.nodes[1], "input").name == padded);
  CHECK(arg(h.nodes[1], "padding").ints == Ints{0, 1});
}

namespace {
Program linearProgram(const Ints &xs, bool bias, const Ints &outs) {
  GraphBuilder b;
  b.param("p_weight", "fc.weight", F32, {4, 3});
  if (bias) b.param("p_bias", "fc.bias", F32, {4});
  b.input("x", F32, xs);
  std::vector<NamedArgument> args = {pos("input", T("x")), pos("weight", T("p_weight"))};
  if (bias) args.push_back(pos("bias", T("p_bias")));
  b.aten("linear.default", args, "linear", F32, outs);
  b.output("linear");
  return programOf(b.ep);
}
} // namespace

// linear, t and matmul are rules (lib/Edge/decompositions.yaml); the views they
// create become _copy ops in replace-view-ops.
void decomposeLinearOps(Program &p) {
  edge::decomposeRules(p);
  edge::replaceViewOps(p);
}

TEST_CASE("linear with bias -> permute_copy + addmm", "[edge][linear]") {
  Program p = linearProgram({2, 3}, true, {2, 4});
  decomposeLinearOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].target == "torch.ops.aten.permute_copy.default");
  CHECK(argNames(g.nodes[0]) == Names{"self", "dims"});
  CHECK(arg(g.nodes[0], "self").name == "p_weight");
  CHECK(arg(g.nodes[0], "dims").ints == Ints{1, 0});
  CHECK(g.nodes[0].outputs[0].name == "wt");
  CHECK(sizesOf(g, "wt") == Ints{3, 4});
  CHECK(g.nodes[1].target == "torch.ops.aten.addmm.default");
  CHECK(argNames(g.nodes[1]) == Names{"self", "mat1", "mat2"});
  CHECK(arg(g.nodes[1], "self").name == "p_bias");
  CHECK(arg(g.nodes[1], "mat1").name == "x");
  CHECK(arg(g.nodes[1], "mat2").name == "wt");
  CHECK(g.nodes[1].outputs[0].name == "linear");
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("linear without bias -> permute_copy + mm", "[edge][linear]") {
  Program p = linearProgram({2, 3}, false, {2, 4});
  decomposeLinearOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[1].target == "torch.ops.aten.mm.default");
  CHECK(argNames(g.nodes[1]) == Names{"self", "mat2"});
  CHECK(arg(g.nodes[1], "self").name == "x");
  CHECK(arg(g.nodes[1], "mat2").name == "wt");
}

TEST_CASE("linear on a 3-D input flattens around addmm", "[edge][linear]") {
  Program p = linearProgram({2, 5, 3}, true, {2, 5, 4});
  decomposeLinearOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 4);
  CHECK(g.nodes[0].target == "torch.ops.aten.permute_copy.default");
  CHECK(g.nodes[1].target == "torch.ops.aten.view_copy.default");
  CHECK(arg(g.nodes[1], "self").name == "x");
  CHECK(arg(g.nodes[1], "size").ints == Ints{10, 3});
  CHECK(g.nodes[1].outputs[0].name == "x2");
  CHECK(sizesOf(g, "x2") == Ints{10, 3});
  CHECK(g.nodes[2].target == "torch.ops.aten.addmm.default");
  CHECK(arg(g.nodes[2], "mat1").name == "x2");
  CHECK(g.nodes[2].outputs[0].name == "y2");
  CHECK(sizesOf(g, "y2") == Ints{10, 4});
  CHECK(g.nodes[3].target == "torch.ops.aten.view_copy.default");
  CHECK(arg(g.nodes[3], "self").name == "y2");
  CHECK(arg(g.nodes[3], "size").ints == Ints{2, 5, 4});
  CHECK(g.nodes[3].outputs[0].name == "linear");
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("t -> permute_copy, matmul -> mm / bmm / folded mm", "[edge][linear]") {
  GraphBuilder b;
  b.input("a", F32, {2, 3}).input("v", F32, {3}).input("c", F32, {4, 2, 3}).input("d", F32, {4, 3, 5});
  b.input("m", F32, {3, 2});
  b.aten("t.default", {pos("self", T("a"))}, "t", F32, {3, 2});
  b.aten("t.default", {pos("self", T("v"))}, "t_1", F32, {3});
  b.aten("matmul.default", {pos("self", T("a")), pos("other", T("t"))}, "matmul", F32, {2, 2});
  b.aten("matmul.default", {pos("self", T("c")), pos("other", T("d"))}, "matmul_1", F32, {4, 2, 5});
  b.aten("matmul.default", {pos("self", T("v")), pos("other", T("m"))}, "matmul_2", F32, {2});
  b.output("t_1").output("matmul").output("matmul_1").output("matmul_2");
  Program p = programOf(b.ep);
  decomposeLinearOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 10);
  CHECK(g.nodes[0].target == "torch.ops.aten.permute_copy.default");
  CHECK(arg(g.nodes[0], "dims").ints == Ints{1, 0});
  CHECK(g.nodes[0].outputs[0].name == "t");
  CHECK(arg(g.nodes[1], "dims").ints == Ints{0});
  CHECK(g.nodes[2].target == "torch.ops.aten.mm.default");
  CHECK(argNames(g.nodes[2]) == Names{"self", "mat2"});
  CHECK(arg(g.nodes[2], "mat2").name == "t");
  // Batched operands with equal batch dims fold into bmm between views.
  CHECK(g.nodes[5].target == "torch.ops.aten.bmm.default");
  CHECK(sizesOf(g, g.nodes[5].outputs[0].name) == Ints{4, 2, 5});
  CHECK(g.nodes[6].outputs[0].name == "matmul_1");
  // vector @ matrix: a 1-row matrix through mm, viewed back to a vector.
  CHECK(arg(g.nodes[7], "size").ints == Ints{1, 3});
  CHECK(g.nodes[8].target == "torch.ops.aten.mm.default");
  CHECK(arg(g.nodes[9], "size").ints == Ints{2});
  CHECK(g.nodes[9].outputs[0].name == "matmul_2");
}

TEST_CASE("matmul with broadcast batch dims expands both operands", "[edge][linear]") {
  GraphBuilder b;
  b.input("a", F32, {2, 1, 4, 3}).input("c", F32, {5, 3, 6});
  b.aten("matmul.default", {pos("self", T("a")), pos("other", T("c"))}, "mm", F32, {2, 5, 4, 6});
  b.output("mm");
  Program p = programOf(b.ep);
  decomposeLinearOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 6);
  CHECK(g.nodes[0].target == "torch.ops.aten.expand_copy.default");
  CHECK(arg(g.nodes[0], "size").ints == Ints{2, 5, 4, 3});
  CHECK(arg(g.nodes[1], "size").ints == Ints{2, 5, 3, 6});
  CHECK(arg(g.nodes[2], "size").ints == Ints{10, 4, 3});
  CHECK(g.nodes[4].target == "torch.ops.aten.bmm.default");
  CHECK(arg(g.nodes[5], "size").ints == Ints{2, 5, 4, 6});
}

TEST_CASE("reshape and flatten become view_copy", "[edge][shape]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3, 4});
  b.aten("reshape.default", {pos("self", T("x")), pos("shape", Argument::ints_({6, -1}))}, "reshape", F32, {6, 4});
  b.aten("flatten.using_ints", {pos("self", T("x")), pos("start_dim", Argument::integer(1))}, "flatten", F32,
         {2, 12});
  b.output("reshape").output("flatten");
  Program p = programOf(b.ep);
  edge::decomposeShapeOps(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].target == "torch.ops.aten.view_copy.default");
  CHECK(argNames(g.nodes[0]) == Names{"self", "size"});
  CHECK(arg(g.nodes[0], "size").ints == Ints{6, -1});
  CHECK(g.nodes[1].target == "torch.ops.aten.view_copy.default");
  CHECK(arg(g.nodes[1], "size").ints == Ints{2, 12});
  CHECK(g.nodes[1].outputs[0].name == "flatten");
}

TEST_CASE("dropout and contiguous are removed, uses redirected", "[edge][shape]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("dropout.default", {pos("input", T("x")), pos("p", Argument::real(0.5)), pos("train", Argument::boolean(false))},
         "dropout", F32, {4});
  b.aten("relu.default", {pos("self", T("dropout"))}, "relu", F32, {4});
  b.aten("contiguous.default", {pos("self", T("relu"))}, "contiguous", F32, {4});
  b.output("contiguous");
  Program p = programOf(b.ep);
  edge::decomposeShapeOps(p);
  const ExportedProgram &ep = methodOf(p);
  REQUIRE(ep.graph.nodes.size() == 1);
  CHECK(ep.graph.nodes[0].target == "torch.ops.aten.relu.default");
  CHECK(arg(ep.graph.nodes[0], "self").name == "x");
  CHECK(ep.graph.outputs.at(0).name == "relu");
  CHECK(ep.signature.outputSpecs.at(0).arg.name == "relu");
  CHECK_FALSE(ep.graph.tensorValues.contains("dropout"));
  CHECK_FALSE(ep.graph.tensorValues.contains("contiguous"));
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("chained identities resolve to the first real value", "[edge][shape]") {
  // dropout -> contiguous -> detach: every use ends at x, even the graph output.
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("dropout.default", {pos("input", T("x")), pos("p", Argument::real(0.1)), pos("train", Argument::boolean(false))},
         "dropout", F32, {4});
  b.aten("contiguous.default", {pos("self", T("dropout"))}, "contiguous", F32, {4});
  b.aten("neg.default", {pos("self", T("contiguous"))}, "neg", F32, {4});
  b.aten("detach.default", {pos("self", T("contiguous"))}, "detach", F32, {4});
  b.output("neg").output("detach");
  Program p = programOf(b.ep);
  edge::decomposeShapeOps(p);
  const ExportedProgram &ep = methodOf(p);
  REQUIRE(ep.graph.nodes.size() == 1);
  CHECK(arg(ep.graph.nodes[0], "self").name == "x");
  CHECK(ep.graph.outputs.at(1).name == "x");
  CHECK(ep.signature.outputSpecs.at(1).arg.name == "x");
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("dropout in training mode is refused", "[edge][shape]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.aten("dropout.default", {pos("input", T("x")), pos("p", Argument::real(0.5)), pos("train", Argument::boolean(true))},
         "dropout", F32, {4});
  b.output("dropout");
  Program p = programOf(b.ep);
  CHECK(errorOf([&] { edge::decomposeShapeOps(p); }) ==
        "node dropout: dropout with train=True cannot be lowered; export the model in eval() mode");
}

TEST_CASE("relu6 -> hardtanh, silu -> sigmoid * x, softmax.int -> _softmax", "[edge][activation]") {
  GraphBuilder b;
  b.input("x", F32, {2, 5});
  b.aten("relu6.default", {pos("self", T("x"))}, "relu6", F32, {2, 5});
  b.aten("silu.default", {pos("self", T("relu6"))}, "silu", F32, {2, 5});
  b.aten("softmax.int", {pos("self", T("silu")), pos("dim", Argument::integer(1))}, "softmax", F32, {2, 5});
  b.aten("log_softmax.int", {pos("self", T("softmax")), pos("dim", Argument::integer(-1))}, "log_softmax", F32,
         {2, 5});
  b.output("log_softmax");
  Program p = programOf(b.ep);
  edge::decomposeActivations(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 5);
  CHECK(g.nodes[0].target == "torch.ops.aten.hardtanh.default");
  CHECK(argNames(g.nodes[0]) == Names{"self", "min_val", "max_val"});
  CHECK(arg(g.nodes[0], "min_val").kind == ArgKind::Float);
  CHECK(arg(g.nodes[0], "min_val").floatValue == 0.0);
  CHECK(arg(g.nodes[0], "max_val").floatValue == 6.0);
  CHECK(g.nodes[0].outputs[0].name == "relu6");

  CHECK(g.nodes[1].target == "torch.ops.aten.sigmoid.default");
  CHECK(arg(g.nodes[1], "self").name == "relu6");
  CHECK(g.nodes[1].outputs[0].name == "sigmoid");
  CHECK(sizesOf(g, "sigmoid") == Ints{2, 5});
  CHECK(g.nodes[2].target == "torch.ops.aten.mul.Tensor");
  CHECK(arg(g.nodes[2], "self").name == "relu6");
  CHECK(arg(g.nodes[2], "other").name == "sigmoid");
  CHECK(g.nodes[2].outputs[0].name == "silu");

  CHECK(g.nodes[3].target == "torch.ops.aten._softmax.default");
  CHECK(argNames(g.nodes[3]) == Names{"self", "dim", "half_to_float"});
  CHECK(arg(g.nodes[3], "dim").intValue == 1);
  CHECK(arg(g.nodes[3], "half_to_float").kind == ArgKind::Bool);
  CHECK(arg(g.nodes[3], "half_to_float").intValue == 0);
  CHECK(g.nodes[4].target == "torch.ops.aten._log_softmax.default");
  CHECK(arg(g.nodes[4], "dim").intValue == -1);
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("softmax with a dtype is refused", "[edge][activation]") {
  GraphBuilder b;
  b.input("x", F32, {2, 5});
  b.aten("softmax.int",
         {pos("self", T("x")), pos("dim", Argument::integer(1)), pos("dtype", Argument::scalarType(ScalarType::Double))},
         "softmax", ScalarType::Double, {2, 5});
  b.output("softmax");
  Program p = programOf(b.ep);
  CHECK(errorOf([&] { edge::decomposeActivations(p); }) ==
        "node softmax: softmax with an explicit dtype is not supported");
}

TEST_CASE("batch_norm in eval mode -> _native_batch_norm_legit_no_training", "[edge][batchnorm]") {
  GraphBuilder b;
  b.param("p_w", "bn.weight", F32, {3}).param("p_b", "bn.bias", F32, {3});
  b.input("b_mean", F32, {3}, InputKind::Buffer, "bn.running_mean");
  b.input("b_var", F32, {3}, InputKind::Buffer, "bn.running_var");
  b.input("x", F32, {1, 3, 4, 4});
  b.aten("batch_norm.default",
         {pos("input", T("x")), pos("weight", T("p_w")), pos("bias", T("p_b")), pos("running_mean", T("b_mean")),
          pos("running_var", T("b_var")), pos("training", Argument::boolean(false)),
          pos("momentum", Argument::real(0.1)), pos("eps", Argument::real(1e-3)),
          pos("cudnn_enabled", Argument::boolean(true))},
         "batch_norm", F32, {1, 3, 4, 4});
  b.output("batch_norm");
  Program p = programOf(b.ep);
  edge::decomposeBatchNorm(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 1);
  const Node &n = g.nodes[0];
  CHECK(n.target == "torch.ops.aten._native_batch_norm_legit_no_training.default");
  CHECK(argNames(n) == Names{"input", "weight", "bias", "running_mean", "running_var", "momentum", "eps"});
  CHECK(arg(n, "running_var").name == "b_var");
  CHECK(arg(n, "eps").floatValue == 1e-3);
  REQUIRE(n.outputs.size() == 3);
  CHECK(n.outputs[0].name == "batch_norm");
  CHECK(n.outputs[1].name == "batch_norm_unused_1");
  CHECK(n.outputs[2].name == "batch_norm_unused_2");
  CHECK(sizesOf(g, "batch_norm_unused_1") == Ints{0});
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));

  // training=True reaching this pass (the rule needs affine weights and running
  // statistics) cannot be lowered.
  Program q = programOf(b.ep);
  graphOf(q).nodes[0].input("training")->arg = Argument::boolean(true);
  CHECK(errorOf([&] { edge::decomposeBatchNorm(q); }) ==
        "node batch_norm: batch_norm with training=True is lowered only with weight, bias and running statistics; "
        "export the model in eval() mode");
}

TEST_CASE("replace-view-ops swaps views for their _copy ops", "[edge][views]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("view.default", {pos("self", T("x")), pos("size", Argument::ints_({3, 2}))}, "view", F32, {3, 2});
  b.aten("permute.default", {pos("self", T("view")), pos("dims", Argument::ints_({1, 0}))}, "permute", F32, {2, 3});
  b.aten("select.int", {pos("self", T("permute")), pos("dim", Argument::integer(0)), pos("index", Argument::integer(1))},
         "select", F32, {3});
  b.aten("_unsafe_view.default", {pos("self", T("select")), pos("size", Argument::ints_({3}))}, "uview", F32, {3});
  b.aten("add.Tensor", {pos("self", T("uview")), pos("other", T("uview"))}, "add", F32, {3});
  b.output("add");
  Program p = programOf(b.ep);
  edge::replaceViewOps(p);
  const Graph &g = graphOf(p);
  CHECK(g.nodes[0].target == "torch.ops.aten.view_copy.default");
  CHECK(g.nodes[1].target == "torch.ops.aten.permute_copy.default");
  CHECK(g.nodes[2].target == "torch.ops.aten.select_copy.int");
  CHECK(g.nodes[3].target == "torch.ops.aten.view_copy.default");
  CHECK(g.nodes[4].target == "torch.ops.aten.add.Tensor");
  // Arguments are untouched.
  CHECK(arg(g.nodes[2], "index").intValue == 1);
}
