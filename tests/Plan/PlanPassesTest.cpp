//===- tests/Plan/PlanPassesTest.cpp - Out variants, aliases, planning ----===//
//
// The IR-level half of exir-plan on graphs of a few nodes: out-variant
// conversion (allocs, their names and spec strings, multi-output ops, errors),
// storage aliases, upper bounds of symbolic sizes, views turned into aliases,
// and planProgram (what is planned under which options, aliases sharing
// placements, arena sizes against the lower bound).
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;
using Names = std::vector<std::string>;

namespace {

constexpr ScalarType F32 = ScalarType::Float;
const std::string kS0 = "Symbol('s0', integer=True, positive=True)";

const Argument &arg(const Node &n, const std::string &name) {
  const NamedArgument *a = n.input(name);
  REQUIRE(a);
  return a->arg;
}

std::vector<std::string> targetsOf(const Graph &g) {
  std::vector<std::string> out;
  for (const auto &n : g.nodes) out.push_back(n.target);
  return out;
}

/// forward(x, y) = x + y on 2x2 floats, edge dialect.
Program addProgram() {
  GraphBuilder b;
  b.input("x", F32, {2, 2}).input("y", F32, {2, 2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "aten_add_tensor", F32, {2, 2});
  b.output("aten_add_tensor");
  return programOf(b.ep, Stage::Edge);
}

/// forward(x) = abs(neg(relu(x))) on 4 floats, edge dialect.
Program chainProgram() {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.edge("relu.default", {pos("self", T("x"))}, "a", F32, {4});
  b.edge("neg.default", {pos("self", T("a"))}, "b", F32, {4});
  b.edge("abs.default", {pos("self", T("b"))}, "c", F32, {4});
  b.output("c");
  return programOf(b.ep, Stage::Edge);
}

const Allocation &allocationOf(const Program &p, const std::string &value) {
  const MemoryPlan &plan = *p.methods.find("forward")->plan;
  const Allocation *a = plan.allocations.find(value);
  INFO(value);
  REQUIRE(a);
  return *a;
}

} // namespace

TEST_CASE("toOutVariant inserts one alloc per out argument", "[plan][out]") {
  Program p = addProgram();
  plan::toOutVariant(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 2);
  const Node &alloc = g.nodes[0];
  CHECK(alloc.target == "executorch.exir.memory.alloc");
  REQUIRE(alloc.inputs.size() == 1);
  CHECK(alloc.inputs[0].arg.kind == ArgKind::String);
  CHECK(alloc.inputs[0].arg.name == "(2, 2);7");
  CHECK(alloc.outputs.at(0).name == "alloc");
  REQUIRE(g.tensorValues.find("alloc"));
  CHECK(sizesOf(g, "alloc") == std::vector<int64_t>{2, 2});

  const Node &add = g.nodes[1];
  CHECK(add.target == "torch.ops.aten.add.out");
  CHECK(argNames(add) == Names{"self", "other", "out"});
  CHECK(arg(add, "out").name == "alloc");
  CHECK(add.input("out")->kind == ArgumentPassing::Keyword);
  CHECK(add.outputs.at(0).name == "aten_add_tensor"); // results keep their names
}

TEST_CASE("toOutVariant names allocs alloc, alloc_1, ... and spells specs", "[plan][out]") {
  GraphBuilder b;
  b.input("x", F32, {4}).input("i", ScalarType::Long, {3, 1});
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {4});
  b.edge("neg.default", {pos("self", T("i"))}, "n", ScalarType::Long, {3, 1});
  b.edge("eq.Scalar", {pos("self", T("r")), pos("other", Argument::integer(0))}, "e", ScalarType::Bool, {4});
  b.edge("sum.default", {pos("self", T("r"))}, "s", F32, {});
  b.output("n").output("e").output("s");
  Program p = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 8);
  CHECK(targetsOf(g) == Names{kAllocTarget, "torch.ops.aten.relu.out", kAllocTarget, "torch.ops.aten.neg.out",
                              kAllocTarget, "torch.ops.aten.eq.Scalar_out", kAllocTarget, "torch.ops.aten.sum.out"});
  CHECK(g.nodes[0].outputs[0].name == "alloc");
  CHECK(g.nodes[0].inputs[0].arg.name == "(4,);7");
  CHECK(g.nodes[2].outputs[0].name == "alloc_1");
  CHECK(g.nodes[2].inputs[0].arg.name == "(3, 1);5");
  CHECK(g.nodes[4].outputs[0].name == "alloc_2");
  CHECK(g.nodes[4].inputs[0].arg.name == "(4,);12");
  CHECK(g.nodes[6].outputs[0].name == "alloc_3");
  CHECK(g.nodes[6].inputs[0].arg.name == "();7");
  CHECK(arg(g.nodes[3], "out").name == "alloc_1");
}

TEST_CASE("toOutVariant converts in place when the node list has room", "[plan][out]") {
  // A sym op (kept), two single-result ops and a two-result op: four allocs
  // go in among five nodes, inside the list's own storage.
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.symSize("x", 0, "sym_size_int");
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {2, 3});
  Node &max = b.edge("max.dim", {pos("self", T("r")), pos("dim", Argument::integer(1))}, "values", F32, {2});
  max.outputs.push_back(T("indices"));
  b.ep.graph.tensorValues.set("indices", meta(ScalarType::Long, {2}));
  b.edge("neg.default", {pos("self", T("values"))}, "n", F32, {2});
  b.output("n").output("indices");
  Program p = programOf(b.ep, Stage::Edge);
  Graph &g = graphOf(p);
  g.nodes.reserve(2 * g.nodes.size());
  const Node *storage = g.nodes.data();
  plan::toOutVariant(p);
  CHECK(g.nodes.data() == storage);
  CHECK(targetsOf(g) == Names{"torch.ops.aten.sym_size.int", kAllocTarget, "torch.ops.aten.relu.out", kAllocTarget,
                              kAllocTarget, "torch.ops.aten.max.dim_max", kAllocTarget, "torch.ops.aten.neg.out"});
  CHECK(arg(g.nodes[2], "out").name == "alloc");
  CHECK(arg(g.nodes[5], "max").name == "alloc_1");
  CHECK(arg(g.nodes[5], "max_values").name == "alloc_2");
  CHECK(arg(g.nodes[7], "out").name == "alloc_3");
  CHECK(g.nodes[0].outputs.at(0).syms.at(0).name == "sym_size_int");
  CHECK(g.nodes[7].outputs.at(0).name == "n");
}

TEST_CASE("toOutVariant: a multi-output op gets one alloc per result", "[plan][out]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  Node &max = b.edge("max.dim", {pos("self", T("x")), pos("dim", Argument::integer(1))}, "values", F32, {2});
  max.outputs.push_back(T("indices"));
  b.ep.graph.tensorValues.set("indices", meta(ScalarType::Long, {2}));
  b.output("values").output("indices");
  Program p = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[0].inputs[0].arg.name == "(2,);7");
  CHECK(g.nodes[1].inputs[0].arg.name == "(2,);5");
  const Node &call = g.nodes[2];
  CHECK(call.target == "torch.ops.aten.max.dim_max");
  CHECK(argNames(call) == Names{"self", "dim", "max", "max_values"});
  CHECK(arg(call, "max").name == "alloc");
  CHECK(arg(call, "max_values").name == "alloc_1");

  auto aliases = plan::storageAliases(g);
  CHECK(aliases.size() == 2);
  CHECK(aliases.at("values") == "alloc");
  CHECK(aliases.at("indices") == "alloc_1");
}

TEST_CASE("toOutVariant leaves sym ops, out variants and higher-order ops alone", "[plan][out]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.symSize("x", 0, "sym_size_int");
  b.call("torch.ops.higher_order.executorch_call_delegate",
         {pos("lowered", Argument::string("lowered_module_0")), pos("x", T("x"))}, "d", F32, {4});
  Program p = programOf(b.ep, Stage::Edge);
  Graph before = graphOf(p);
  plan::toOutVariant(p);
  CHECK(graphOf(p) == before);
}

TEST_CASE("toOutVariant errors name the node", "[plan][out]") {
  GraphBuilder b;
  b.param("p_a", "act.weight", F32, {1});
  b.input("x", F32, {4});
  b.edge("prelu.default", {pos("self", T("x")), pos("weight", T("p_a"))}, "aten_prelu_default", F32, {4});
  b.output("aten_prelu_default");
  Program p = programOf(b.ep, Stage::Edge);
  CHECK(errorOf([&] { plan::toOutVariant(p); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (aten_prelu_default): operator aten::prelu has no out variant, "
        "so it cannot be memory-planned");
  graphOf(p).nodes[0].target = edgeTarget("aten", "frobnicate", "default");
  CHECK(errorOf([&] { plan::toOutVariant(p); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (aten_prelu_default): operator aten::frobnicate is unknown to "
        "the operator table");
}

TEST_CASE("storageRoot follows alias chains", "[plan][alias]") {
  std::unordered_map<std::string, std::string> aliases = {{"view", "relu"}, {"relu", "alloc"}};
  CHECK(plan::storageRoot(aliases, "view") == "alloc");
  CHECK(plan::storageRoot(aliases, "relu") == "alloc");
  CHECK(plan::storageRoot(aliases, "x") == "x");
  std::unordered_map<std::string, std::string> cycle = {{"a", "b"}, {"b", "a"}};
  CHECK_THROWS_AS(plan::storageRoot(cycle, "a"), InternalError);
}

TEST_CASE("upperBound of sympy expressions", "[plan][symbolic]") {
  ExportedProgram ep;
  ep.rangeConstraints.set("s0", RangeConstraint{2, 10});
  ep.rangeConstraints.set("s1", RangeConstraint{3, 4});
  ep.rangeConstraints.set("s2", RangeConstraint{1, std::nullopt});
  auto bound = [&](const std::string &expr) { return plan::upperBound(SymInt::symbol(expr), ep); };
  CHECK(plan::upperBound(SymInt::of(7), ep) == 7);
  CHECK(bound(kS0) == 10);
  CHECK(bound("s0") == 10); // plain str() form of older files
  CHECK(bound("Mul(Integer(2), " + kS0 + ")") == 20);
  CHECK(bound("Add(" + kS0 + ", Integer(3))") == 13);
  CHECK(bound("Add(" + kS0 + ", Integer(-1))") == 9);
  CHECK(bound("Mul(" + kS0 + ", Symbol('s1', integer=True, positive=True))") == 40);
  CHECK(bound("FloorDiv(" + kS0 + ", Integer(2))") == 5);
  // The divisor's lower bound gives the largest quotient: 10 / 3.
  CHECK(bound("FloorDiv(" + kS0 + ", Symbol('s1', integer=True, positive=True))") == 3);
  CHECK(bound("Max(Integer(4), " + kS0 + ")") == 10);
  CHECK(bound("Min(Integer(4), " + kS0 + ")") == 4);

  CHECK(errorOf([&] { bound("Symbol('s2', integer=True, positive=True)"); }) ==
        "cannot bound symbolic size 'Symbol('s2', integer=True, positive=True)': symbol 's2' has no upper bound "
        "(unbounded dynamic dim)");
  CHECK(errorOf([&] { bound("Add(s9, Integer(1))"); }) ==
        "cannot bound symbolic size 'Add(s9, Integer(1))': symbol 's9' has no range constraint");
  CHECK(errorOf([&] { bound("Pow(" + kS0 + ", Integer(2))"); }) ==
        "cannot bound symbolic size 'Pow(" + kS0 + ", Integer(2))': unsupported function 'Pow'");
}

TEST_CASE("toOutVariant sizes allocs of dynamic shapes at their upper bound", "[plan][symbolic]") {
  GraphBuilder b;
  b.input("x", F32, {1, 3});
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {1, 3});
  b.output("r");
  for (const char *name : {"x", "r"})
    b.ep.graph.tensorValues.find(name)->sizes[0] = SymInt::symbol("Mul(Integer(2), " + kS0 + ")");
  b.ep.rangeConstraints.set("s0", RangeConstraint{1, 8});
  Program p = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(p);
  CHECK(graphOf(p).nodes[0].inputs[0].arg.name == "(16, 3);7");
  // Planning uses the same bound: 16 * 3 floats = 192 bytes each.
  auto details = plan::planProgram(p, {});
  REQUIRE(details["forward"].items.size() == 2);
  CHECK(details["forward"].items[0].size == 192);
  CHECK(details["forward"].items[1].size == 192);
}

TEST_CASE("planProgram places inputs, allocs and their aliases", "[plan][planning]") {
  Program p = addProgram();
  plan::toOutVariant(p);
  auto details = plan::planProgram(p, {});
  CHECK(p.stage == Stage::Planned);
  CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  const MemoryPlan &plan = *p.methods.find("forward")->plan;
  // Everything is live at once: 3 x 16 bytes.
  CHECK(plan.bufferSizes == std::vector<uint64_t>{0, 48});
  CHECK(plan.lowerBounds == std::vector<uint64_t>{0, 48});
  CHECK(plan.alignment == 16);
  CHECK(plan.allocations.size() == 4);
  std::vector<uint64_t> offsets = {allocationOf(p, "x").offset, allocationOf(p, "y").offset,
                                   allocationOf(p, "alloc").offset};
  std::sort(offsets.begin(), offsets.end());
  CHECK(offsets == std::vector<uint64_t>{0, 16, 32});
  // The op's result uses its out argument's storage.
  CHECK(allocationOf(p, "aten_add_tensor") == allocationOf(p, "alloc"));

  const auto &items = details["forward"].items;
  REQUIRE(items.size() == 3);
  CHECK(items[0].name == "x");
  CHECK(items[0].start == 0);
  CHECK(items[0].end == 3);
  CHECK(items[2].name == "alloc");
  CHECK(items[2].start == 2);
  CHECK(items[2].end == 4); // the output time
}

TEST_CASE("planProgram options: unplanned inputs/outputs and arena ids", "[plan][planning]") {
  SECTION("inputs not planned") {
    Program p = addProgram();
    plan::toOutVariant(p);
    plan::PlanningOptions options;
    options.allocGraphInputs = false;
    plan::planProgram(p, options);
    const MemoryPlan &plan = *p.methods.find("forward")->plan;
    CHECK(plan.bufferSizes == std::vector<uint64_t>{0, 16});
    CHECK_FALSE(plan.allocations.contains("x"));
    CHECK_FALSE(plan.allocations.contains("y"));
    CHECK(allocationOf(p, "alloc").offset == 0);
  }
  SECTION("outputs not planned") {
    Program p = addProgram();
    plan::toOutVariant(p);
    plan::PlanningOptions options;
    options.allocGraphOutputs = false;
    plan::planProgram(p, options);
    const MemoryPlan &plan = *p.methods.find("forward")->plan;
    CHECK(plan.bufferSizes == std::vector<uint64_t>{0, 32});
    CHECK_FALSE(plan.allocations.contains("alloc"));
    CHECK_FALSE(plan.allocations.contains("aten_add_tensor"));
  }
  SECTION("inputs in their own arena") {
    Program p = addProgram();
    plan::toOutVariant(p);
    plan::PlanningOptions options;
    options.memIds = {{"inputs", 2}};
    plan::planProgram(p, options);
    const MemoryPlan &plan = *p.methods.find("forward")->plan;
    CHECK(plan.bufferSizes == std::vector<uint64_t>{0, 16, 32});
    CHECK(allocationOf(p, "x").memId == 2);
    CHECK(allocationOf(p, "alloc").memId == 1);
    CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  }
  SECTION("bad alignment") {
    Program p = addProgram();
    plan::toOutVariant(p);
    plan::PlanningOptions options;
    options.alignment = 24;
    CHECK(errorOf([&] { plan::planProgram(p, options); }) == "alignment 24 is not a power of two");
  }
}

TEST_CASE("planProgram reuses memory along a chain, naive does not", "[plan][planning]") {
  Program greedy = chainProgram();
  plan::toOutVariant(greedy);
  plan::PlanningOptions options;
  options.algorithm = "greedy";
  auto details = plan::planProgram(greedy, options);
  const MemoryPlan &plan = *greedy.methods.find("forward")->plan;
  CHECK(plan.algorithm == "greedy");
  CHECK(plan.lowerBounds[1] == 32);
  CHECK(plan.bufferSizes[1] == 32);
  CHECK(plan.bufferSizes[1] >= plan.lowerBounds[1]);
  std::string report = plan::planReport(greedy, details);
  CHECK_THAT(report, Catch::StartsWith("method forward: algorithm greedy, 4 planned tensors\n"
                                       "  arena 1: planned 32 bytes, lower bound 32 bytes, ratio 1.000\n"));

  Program naive = chainProgram();
  plan::toOutVariant(naive);
  options.algorithm = "naive";
  plan::planProgram(naive, options);
  const MemoryPlan &naivePlan = *naive.methods.find("forward")->plan;
  CHECK(naivePlan.bufferSizes[1] == 64);
  CHECK(naivePlan.lowerBounds[1] == 32);
}

TEST_CASE("planProgram never plans constants, mutable buffers per option", "[plan][planning]") {
  GraphBuilder b;
  b.param("p_w", "w", F32, {4});
  b.input("b_frozen", F32, {4}, InputKind::Buffer, "frozen");
  b.input("b_state", F32, {4}, InputKind::Buffer, "state");
  b.input("x", F32, {4});
  b.edge("mul.Tensor", {pos("self", T("x")), pos("other", T("p_w"))}, "m", F32, {4});
  b.edge("add.Tensor", {pos("self", T("m")), pos("other", T("b_frozen"))}, "a", F32, {4});
  b.edge("add.Tensor", {pos("self", T("b_state")), pos("other", T("a"))}, "s", F32, {4});
  b.output("s");
  b.ep.signature.outputSpecs[0].kind = OutputKind::BufferMutation;
  b.ep.signature.outputSpecs[0].target = "state";
  b.output("a");

  Program p = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(p);
  plan::PlanningOptions options;
  options.memIds = {{"buffers", 2}};
  plan::planProgram(p, options);
  const MemoryPlan &plan = *p.methods.find("forward")->plan;
  CHECK_FALSE(plan.allocations.contains("p_w"));
  CHECK_FALSE(plan.allocations.contains("b_frozen"));
  CHECK(allocationOf(p, "b_state").memId == 2);
  CHECK(allocationOf(p, "x").memId == 1);
  CHECK(plan.bufferSizes.at(2) == 16);

  Program q = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(q);
  options.allocMutableBuffers = false;
  plan::planProgram(q, options);
  CHECK_FALSE(q.methods.find("forward")->plan->allocations.contains("b_state"));
}

TEST_CASE("viewsToAliases turns inner static view_copy ops into memory.view", "[plan][views]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {2, 3});
  b.edge("view_copy.default", {pos("self", T("r")), pos("size", Argument::ints_({6}))}, "v", F32, {6});
  b.edge("neg.default", {pos("self", T("v"))}, "n", F32, {6});
  // Views of a graph input or producing a graph output stay copies.
  b.edge("view_copy.default", {pos("self", T("x")), pos("size", Argument::ints_({3, 2}))}, "vin", F32, {3, 2});
  b.edge("view_copy.default", {pos("self", T("n")), pos("size", Argument::ints_({3, 2}))}, "vout", F32, {3, 2});
  b.output("vin").output("vout");
  Program p = programOf(b.ep, Stage::Edge);
  plan::viewsToAliases(p);
  const Graph &g = graphOf(p);
  CHECK(g.nodes[1].target == "executorch.exir.memory.view");
  CHECK(g.nodes[3].target == "executorch.exir.dialects.edge.ops.aten.view_copy.default");
  CHECK(g.nodes[4].target == "executorch.exir.dialects.edge.ops.aten.view_copy.default");

  plan::toOutVariant(p);
  CHECK(graphOf(p).nodes.at(2).target == "executorch.exir.memory.view"); // after relu's alloc and relu.out
  auto aliases = plan::storageAliases(graphOf(p));
  CHECK(aliases.at("v") == "r");
  CHECK(plan::storageRoot(aliases, "v") == "alloc");
  plan::planProgram(p, {});
  CHECK(allocationOf(p, "v") == allocationOf(p, "alloc"));
  CHECK(allocationOf(p, "r") == allocationOf(p, "alloc"));
  CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
}
