//===- tests/Edge/EdgeUtilTest.cpp - Helpers of the rewriting passes ------===//
//
// Argument lookup with defaults, the missing-argument error, node rewriting,
// renaming a value everywhere (keeping tensor_values order), redirecting uses,
// the user's frame of a stack trace and concrete int lists.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::edge;
using namespace irtest;
using Names = std::vector<std::string>;

namespace {
constexpr ScalarType F32 = ScalarType::Float;

ExportedProgram twoNodes() {
  GraphBuilder b;
  b.input("x", F32, {2});
  b.aten("relu.default", {pos("self", T("x"))}, "relu", F32, {2});
  b.aten("add.Tensor", {pos("self", T("relu")), pos("other", T("x")), kw("alpha", Argument::integer(3))}, "add", F32,
         {2});
  b.output("add");
  return b.ep;
}

std::vector<std::string> keys(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &[k, v] : g.tensorValues) out.push_back(k);
  return out;
}
} // namespace

TEST_CASE("argument lookup with schema defaults", "[edgeutil]") {
  ExportedProgram ep = twoNodes();
  const Node &add = ep.graph.nodes[1];
  CHECK(calls(add, "aten", "add", "Tensor"));
  CHECK_FALSE(calls(add, "aten", "add", "Scalar"));
  CHECK(targetOf(add).name == "add");
  REQUIRE(findArg(add, "alpha"));
  CHECK(findArg(add, "alpha")->intValue == 3);
  CHECK(findArg(add, "beta") == nullptr);
  CHECK(argOr(add, "alpha", Argument::integer(1)).intValue == 3);
  CHECK(argOr(ep.graph.nodes[0], "alpha", Argument::integer(1)).intValue == 1);
  CHECK(requireArg(add, "other").name == "x");
  CHECK(errorOf([&] { requireArg(add, "mat2"); }) == "node add (torch.ops.aten.add.Tensor) has no argument 'mat2'");
  CHECK(positional("a", Argument::none()).kind == ArgumentPassing::Positional);
  CHECK(keyword("a", Argument::none()).kind == ArgumentPassing::Keyword);
}

TEST_CASE("metadata helpers", "[edgeutil]") {
  ExportedProgram ep = twoNodes();
  CHECK(metaOf(ep.graph, "relu").sizes.size() == 1);
  CHECK(errorOf([&] { metaOf(ep.graph, "nope"); }) == "tensor value 'nope' has no metadata in tensor_values");
  std::string name = addTensorValue(ep.graph, "relu", makeMeta(ScalarType::Long, {SymInt::of(3), SymInt::of(4)}));
  CHECK(name == "relu_1");
  const TensorMeta &m = metaOf(ep.graph, "relu_1");
  CHECK(m.dtype == ScalarType::Long);
  REQUIRE(m.strides.size() == 2);
  CHECK(m.strides[0].value == 4);
  CHECK(m.strides[1].value == 1);
}

TEST_CASE("makeCall copies the origin's source metadata only", "[edgeutil]") {
  Node origin;
  origin.metadata.set("stack_trace", "trace");
  origin.metadata.set("nn_module_stack", "stack");
  origin.metadata.set("debug_handle", "7");
  Node n = makeCall("torch.ops.aten.neg.default", {positional("self", T("x"))}, "neg", &origin);
  CHECK(n.target == "torch.ops.aten.neg.default");
  CHECK(n.outputs.at(0).name == "neg");
  CHECK(*n.metadata.find("stack_trace") == "trace");
  CHECK(*n.metadata.find("nn_module_stack") == "stack");
  CHECK_FALSE(n.metadata.contains("debug_handle"));
}

TEST_CASE("rewriteNodes replaces and counts", "[edgeutil]") {
  ExportedProgram ep = twoNodes();
  size_t count = rewriteNodes(ep.graph, [](Graph &, Node &node) -> std::optional<std::vector<Node>> {
    if (!calls(node, "aten", "relu", "default")) return std::nullopt;
    return std::vector<Node>{makeCall("torch.ops.aten.abs.default", {positional("self", T("x"))}, "relu", &node),
                             makeCall("torch.ops.aten.neg.default", {positional("self", T("x"))}, "extra", &node)};
  });
  CHECK(count == 1);
  REQUIRE(ep.graph.nodes.size() == 3);
  CHECK(ep.graph.nodes[0].target == "torch.ops.aten.abs.default");
  CHECK(ep.graph.nodes[1].target == "torch.ops.aten.neg.default");
  CHECK(ep.graph.nodes[2].target == "torch.ops.aten.add.Tensor");
}

TEST_CASE("rewriteNodes removes and replaces in place, then grows the list", "[edgeutil]") {
  // relu is dropped (nodes move down in place), add becomes one node.
  ExportedProgram ep = twoNodes();
  size_t count = rewriteNodes(ep.graph, [](Graph &, Node &node) -> std::optional<std::vector<Node>> {
    if (calls(node, "aten", "relu", "default")) return std::vector<Node>{};
    return std::vector<Node>{makeCall("torch.ops.aten.sub.Tensor", {positional("self", T("x"))}, "add", &node)};
  });
  CHECK(count == 2);
  REQUIRE(ep.graph.nodes.size() == 1);
  CHECK(ep.graph.nodes[0].target == "torch.ops.aten.sub.Tensor");
  // A rewrite that grows the list after in-place removals keeps the order.
  ExportedProgram grown = twoNodes();
  count = rewriteNodes(grown.graph, [](Graph &, Node &node) -> std::optional<std::vector<Node>> {
    if (calls(node, "aten", "relu", "default")) return std::vector<Node>{};
    return std::vector<Node>{makeCall("torch.ops.aten.abs.default", {positional("self", T("x"))}, "abs", &node),
                             makeCall("torch.ops.aten.neg.default", {positional("self", T("abs"))}, "add", &node)};
  });
  CHECK(count == 2);
  REQUIRE(grown.graph.nodes.size() == 2);
  CHECK(grown.graph.nodes[0].target == "torch.ops.aten.abs.default");
  CHECK(grown.graph.nodes[1].target == "torch.ops.aten.neg.default");
  // Nothing rewritten: the list is left as it was.
  ExportedProgram same = twoNodes();
  CHECK(rewriteNodes(same.graph, [](Graph &, Node &) { return std::optional<std::vector<Node>>(); }) == 0);
  CHECK(same.graph.nodes == twoNodes().graph.nodes);
}

TEST_CASE("TargetCache parses each distinct target as parseTarget does", "[edgeutil]") {
  TargetCache targets;
  const OpTarget &add = targets("torch.ops.aten.add.Tensor");
  const OpTarget &edge = targets("executorch.exir.dialects.edge.ops.aten.permute_copy.default");
  CHECK(add.qualifiedName() == parseTarget("torch.ops.aten.add.Tensor").qualifiedName());
  CHECK(add.dialect == TargetDialect::Aten);
  CHECK(edge.dialect == TargetDialect::Edge);
  CHECK(edge.name == "permute_copy");
  CHECK(&targets("torch.ops.aten.add.Tensor") == &add); // parsed once
}

TEST_CASE("renameValue renames everywhere and keeps positions", "[edgeutil]") {
  ExportedProgram ep = twoNodes();
  renameValue(ep, "x", "input_x");
  renameValue(ep, "add", "aten_add_tensor");
  CHECK(ep.graph.inputs[0].name == "input_x");
  CHECK(ep.signature.inputSpecs[0].arg.name == "input_x");
  CHECK(ep.graph.nodes[0].inputs[0].arg.name == "input_x");
  CHECK(ep.graph.nodes[1].input("other")->arg.name == "input_x");
  CHECK(ep.graph.nodes[1].outputs[0].name == "aten_add_tensor");
  CHECK(ep.graph.outputs[0].name == "aten_add_tensor");
  CHECK(ep.signature.outputSpecs[0].arg.name == "aten_add_tensor");
  CHECK(keys(ep.graph) == Names{"input_x", "relu", "aten_add_tensor"});
}

TEST_CASE("replaceUses redirects uses, not definitions", "[edgeutil]") {
  ExportedProgram ep = twoNodes();
  replaceUses(ep, "relu", "x");
  CHECK(ep.graph.nodes[1].input("self")->arg.name == "x");
  CHECK(ep.graph.nodes[0].outputs[0].name == "relu");
  replaceUses(ep, "add", "relu");
  CHECK(ep.graph.outputs[0].name == "relu");
  CHECK(ep.signature.outputSpecs[0].arg.name == "relu");
  CHECK(ep.graph.nodes[1].outputs[0].name == "add");
}

TEST_CASE("FreshNames skips names any value table holds and never repeats one", "[edgeutil]") {
  Graph g;
  g.symBoolValues.set("v", SymBool{});
  g.customObjValues.set("v_1", CustomObjValue{"v_1", "torch.classes.m.C"});
  g.symFloatValues.set("v_2", SymFloat{});
  FreshNames fresh(g);
  CHECK(fresh("v") == "v_3");
  CHECK(fresh("v") == "v_4"); // v_3 was handed out, though no table holds it yet
  CHECK(fresh("w") == "w");
  g.symIntValues.set("x", SymInt::of(2));
  CHECK(fresh("x") == "x_1");
}

TEST_CASE("userFrame and concreteInts", "[edgeutil]") {
  Node n;
  CHECK(userFrame(n).empty());
  n.metadata.set("stack_trace", "  File \"/a.py\", line 1, in f\n    g()\n  File \"/b.py\", line 9, in forward\n"
                                "        return   x\n");
  CHECK(userFrame(n) == "File \"/b.py\", line 9, in forward return x ");

  CHECK(concreteInts(Argument::ints_({1, 2})) == std::vector<int64_t>{1, 2});
  CHECK(concreteInts(Argument::integer(4)) == std::vector<int64_t>{4});
  Argument syms;
  syms.kind = ArgKind::SymInts;
  syms.syms = {SymArg{false, "", 2, 0}, SymArg{false, "", 5, 0}};
  CHECK(concreteInts(syms) == std::vector<int64_t>{2, 5});
  syms.syms.push_back(SymArg{true, "s0", 0, 0});
  CHECK_FALSE(concreteInts(syms));
  CHECK_FALSE(concreteInts(Argument::real(1.0)));
}
