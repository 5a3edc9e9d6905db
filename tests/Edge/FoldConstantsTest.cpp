//===- tests/Edge/FoldConstantsTest.cpp - fold-constants ------------------===//
//
// Shape ops on constants become constant views (same storage, other sizes and
// strides); auto mode folds only what does not grow the emitted constants.
//
//===----------------------------------------------------------------------===//
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

ConstantTensor weight(const std::vector<int64_t> &sizes, uint64_t offset = 0) {
  ConstantTensor c;
  c.dtype = F32;
  c.sizes = sizes;
  uint64_t n = 1;
  for (int64_t s : sizes) n *= uint64_t(s);
  c.data.file = "/weights.bin";
  c.data.offset = offset;
  c.data.length = n * 4;
  return c;
}

std::vector<std::string> inputNames(const ExportedProgram &ep) {
  std::vector<std::string> names;
  for (const auto &a : ep.graph.inputs) names.push_back(a.name);
  return names;
}

std::vector<std::string> targets(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &n : g.nodes) out.push_back(n.target.substr(n.target.rfind(".aten.") + 6));
  return out;
}

/// linear as exir-edge lowers it: mm(x, permute_copy(W, [1, 0])).
Program linearProgram() {
  GraphBuilder b;
  b.param("p_w", "fc.weight", F32, {4, 3});
  b.input("x", F32, {2, 3});
  b.edge("permute_copy.default", {pos("self", T("p_w")), pos("dims", Argument::ints_({1, 0}))}, "wt", F32, {3, 4});
  b.edge("mm.default", {pos("self", T("x")), pos("mat2", T("wt"))}, "y", F32, {2, 4});
  b.output("y");
  Program p = programOf(b.ep, Stage::Edge);
  p.constants.set("fc.weight", weight({4, 3}));
  return p;
}

} // namespace

TEST_CASE("fold-constants turns a linear's weight transpose into a constant view", "[edge][fold]") {
  Program p = linearProgram();
  edge::foldConstants(p);
  const ExportedProgram &ep = methodOf(p);
  CHECK(targets(ep.graph) == Names{"mm.default"});
  CHECK(inputNames(ep) == Names{"c_fc_weight_prop", "x"});
  REQUIRE(ep.signature.inputSpecs.size() == 2);
  CHECK(ep.signature.inputSpecs[0].kind == InputKind::TensorConstant);
  CHECK(ep.signature.inputSpecs[0].target == "fc.weight_prop");
  CHECK(ep.graph.nodes[0].input("mat2")->arg.name == "c_fc_weight_prop");
  CHECK_FALSE(ep.graph.tensorValues.contains("wt"));
  // The source weight had no other user: it leaves the table and the graph.
  CHECK_FALSE(p.constants.contains("fc.weight"));
  CHECK_FALSE(ep.graph.tensorValues.contains("p_w"));
  const ConstantTensor *c = p.constants.find("fc.weight_prop");
  REQUIRE(c);
  CHECK(c->sizes == Ints{3, 4});
  CHECK(c->strides == Ints{1, 3});
  CHECK(c->data == weight({4, 3}).data);
  CHECK(sizesOf(ep.graph, "c_fc_weight_prop") == Ints{3, 4});
  verifyProgram(p, Stage::Edge);
}

TEST_CASE("fold-constants: never leaves the program alone", "[edge][fold]") {
  Program p = linearProgram();
  Program before = p;
  edge::foldConstantsWith(p, edge::FoldConstantsMode::Never);
  CHECK(p == before);
}

TEST_CASE("fold-constants: auto keeps a transpose of a weight with another user", "[edge][fold]") {
  // Tied weights: the embedding reads W as it is, the output projection its
  // transpose. Folding would emit W twice (as is and transposed).
  GraphBuilder b;
  b.param("p_w", "emb.weight", F32, {5, 3});
  b.input("x", F32, {2, 3});
  b.edge("permute_copy.default", {pos("self", T("p_w")), pos("dims", Argument::ints_({1, 0}))}, "wt", F32, {3, 5});
  b.edge("mm.default", {pos("self", T("x")), pos("mat2", T("wt"))}, "y", F32, {2, 5});
  b.edge("add.Tensor", {pos("self", T("y")), pos("other", T("p_w"))}, "z", F32, {5, 3});
  b.output("z");
  Program p = programOf(b.ep, Stage::Edge);
  p.constants.set("emb.weight", weight({5, 3}));
  Program before = p;
  edge::foldConstants(p);
  CHECK(p == before);

  edge::foldConstantsWith(p, edge::FoldConstantsMode::Always);
  CHECK(targets(graphOf(p)) == Names{"mm.default", "add.Tensor"});
  CHECK(p.constants.contains("emb.weight"));
  CHECK(inputNames(methodOf(p)) == Names{"p_w", "c_emb_weight_prop", "x"});
}

TEST_CASE("fold-constants: auto keeps a transpose of a storage another constant shares", "[edge][fold]") {
  Program p = linearProgram();
  // A second FQN over the same bytes (tied parameters), used by the graph.
  ExportedProgram &ep = methodOf(p);
  InputSpec tied;
  tied.kind = InputKind::Parameter;
  tied.arg = Argument::tensor("p_tied");
  tied.target = "tied.weight";
  ep.signature.inputSpecs.insert(ep.signature.inputSpecs.begin(), tied);
  ep.graph.inputs.insert(ep.graph.inputs.begin(), Argument::tensor("p_tied"));
  ep.graph.tensorValues.set("p_tied", meta(F32, {4, 3}));
  ep.graph.outputs.push_back(Argument::tensor("p_tied"));
  OutputSpec out;
  out.arg = Argument::tensor("p_tied");
  ep.signature.outputSpecs.push_back(out);
  p.constants.set("tied.weight", weight({4, 3}));
  Program before = p;
  edge::foldConstants(p);
  CHECK(p == before);
}

TEST_CASE("fold-constants: a reshape of a contiguous weight shares its bytes", "[edge][fold]") {
  GraphBuilder b;
  b.param("p_w", "w", F32, {2, 6});
  b.input("x", F32, {3, 4});
  b.edge("view_copy.default", {pos("self", T("p_w")), pos("size", Argument::ints_({-1, 4}))}, "v", F32, {3, 4});
  b.edge("unsqueeze_copy.default", {pos("self", T("v")), pos("dim", Argument::integer(0))}, "u", F32, {1, 3, 4});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("u"))}, "y", F32, {1, 3, 4});
  b.edge("add.Tensor", {pos("self", T("y")), pos("other", T("v"))}, "z", F32, {1, 3, 4});
  b.output("z");
  Program p = programOf(b.ep, Stage::Edge);
  p.constants.set("w", weight({2, 6}, 64));
  edge::foldConstants(p);
  const ExportedProgram &ep = methodOf(p);
  // Both views have the same bytes as w: free even though v has two users.
  CHECK(targets(ep.graph) == Names{"add.Tensor", "add.Tensor"});
  CHECK(inputNames(ep) == Names{"c_w_prop", "c_w_prop_1", "x"});
  CHECK(ep.graph.nodes[1].input("other")->arg.name == "c_w_prop");
  CHECK_FALSE(p.constants.contains("w"));
  CHECK(p.constants.find("w_prop")->sizes == Ints{3, 4});
  CHECK(p.constants.find("w_prop_1")->sizes == Ints{1, 3, 4});
  CHECK(p.constants.find("w_prop_1")->strides == Ints{12, 4, 1});
  CHECK(p.constants.find("w_prop_1")->data.offset == 64);
  verifyProgram(p, Stage::Edge);
}

TEST_CASE("fold-constants: chains fold through, slices and selects move the offset", "[edge][fold]") {
  GraphBuilder b;
  b.param("p_w", "w", F32, {4, 6});
  b.input("x", F32, {3});
  b.edge("slice_copy.Tensor", {pos("self", T("p_w")), pos("dim", Argument::integer(1)), pos("start", Argument::integer(1)),
                               pos("end", Argument::integer(100)), pos("step", Argument::integer(2))},
         "s", F32, {4, 3});
  b.edge("select_copy.int", {pos("self", T("s")), pos("dim", Argument::integer(0)), pos("index", Argument::integer(-1))},
         "r", F32, {3});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("r"))}, "y", F32, {3});
  b.output("y");
  Program p = programOf(b.ep, Stage::Edge);
  p.constants.set("w", weight({4, 6}));
  edge::foldConstants(p);
  const ExportedProgram &ep = methodOf(p);
  CHECK(targets(ep.graph) == Names{"add.Tensor"});
  // The intermediate slice is no constant of its own.
  CHECK(inputNames(ep) == Names{"c_w_prop_1", "x"});
  CHECK_FALSE(ep.graph.tensorValues.contains("s"));
  CHECK_FALSE(ep.graph.tensorValues.contains("r"));
  CHECK_FALSE(p.constants.contains("w_prop"));
  const ConstantTensor *c = p.constants.find("w_prop_1");
  REQUIRE(c);
  CHECK(c->sizes == Ints{3});
  CHECK(c->strides == Ints{2});
  CHECK(c->storageOffset == 3 * 6 + 1);
  verifyProgram(p, Stage::Edge);
}

TEST_CASE("fold-constants: mutated buffers, user inputs and expands stay ops", "[edge][fold]") {
  GraphBuilder b;
  b.input("b_cache", F32, {2, 3}, InputKind::Buffer, "cache");
  b.param("p_bias", "bias", F32, {1, 3});
  b.input("x", F32, {3, 2});
  b.edge("permute_copy.default", {pos("self", T("b_cache")), pos("dims", Argument::ints_({1, 0}))}, "ct", F32, {3, 2});
  b.edge("permute_copy.default", {pos("self", T("x")), pos("dims", Argument::ints_({1, 0}))}, "xt", F32, {2, 3});
  // expand_copy makes 4x the bytes of its source: auto leaves it.
  b.edge("expand_copy.default", {pos("self", T("p_bias")), pos("size", Argument::ints_({4, 3}))}, "e", F32, {4, 3});
  b.edge("add.Tensor", {pos("self", T("ct")), pos("other", T("xt"))}, "y", F32, {3, 2});
  b.edge("add.Tensor", {pos("self", T("e")), pos("other", T("e"))}, "e2", F32, {4, 3});
  b.output("e2");
  b.output("y");
  ExportedProgram ep = b.ep;
  OutputSpec mutation;
  mutation.kind = OutputKind::BufferMutation;
  mutation.arg = Argument::tensor("y2");
  mutation.target = "cache";
  Program p = programOf(ep, Stage::Edge);
  p.constants.set("cache", weight({2, 3}));
  p.constants.set("bias", weight({1, 3}, 24));
  methodOf(p).signature.outputSpecs.push_back(mutation);
  methodOf(p).graph.outputs.push_back(Argument::tensor("y2"));
  methodOf(p).graph.tensorValues.set("y2", meta(F32, {3, 2}));
  Program before = p;
  edge::foldConstants(p);
  CHECK(p == before);
}

TEST_CASE("fold-constants: a broadcast folds under always, and constants without data stay", "[edge][fold]") {
  GraphBuilder b;
  b.param("p_bias", "bias", F32, {3});
  b.param("p_nodata", "nodata", F32, {3, 2});
  b.input("x", F32, {4, 3});
  b.edge("expand_copy.default", {pos("self", T("p_bias")), pos("size", Argument::ints_({4, -1}))}, "e", F32, {4, 3});
  b.edge("permute_copy.default", {pos("self", T("p_nodata")), pos("dims", Argument::ints_({1, 0}))}, "t", F32, {2, 3});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("e"))}, "y", F32, {4, 3});
  b.edge("mm.default", {pos("self", T("y")), pos("mat2", T("t"))}, "z", F32, {4, 3});
  b.output("z");
  Program p = programOf(b.ep, Stage::Edge);
  p.constants.set("bias", weight({3}));
  edge::foldConstantsWith(p, edge::FoldConstantsMode::Always);
  CHECK(targets(graphOf(p)) == Names{"permute_copy.default", "add.Tensor", "mm.default"});
  const ConstantTensor *c = p.constants.find("bias_prop");
  REQUIRE(c);
  CHECK(c->sizes == Ints{4, 3});
  CHECK(c->strides == Ints{0, 1});
}
