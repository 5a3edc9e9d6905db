//===- tests/Plan/DynamicPlanTest.cpp - sym ints, lists and cond in planning ===//
//
// exir-plan on the constructs of real torch.export programs: runtime asserts
// and the sym ops feeding them removed, list-output ops (split, unbind) turned
// into out variants with one alloc per element, unbacked nonzero sizes bounded,
// and cond branches planned in their own region before the method's tensors,
// with the plan verifier checking branch storage against the method's.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

const MemoryPlan &planOf(const Program &p) { return *p.methods.find("forward")->plan; }

Program plannedCond() {
  Program p = programOf(condMethod(), Stage::Edge);
  plan::toOutVariant(p);
  plan::PlanningOptions options;
  options.algorithm = "greedy";
  plan::planProgram(p, options);
  return p;
}

} // namespace

TEST_CASE("removeGraphAsserts drops asserts and the sym ops only they use", "[plan][sym]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.ep.graph.nodes.push_back(symNode("torch.ops.aten.sym_size.int", {pos("self", T("x")), pos("dim", Argument::integer(0))},
                                     symName(ArgKind::SymInt, "n")));
  b.ep.graph.nodes.push_back(symNode("_operator.ge", {pos("a", symName(ArgKind::SymInt, "n")), pos("b", Argument::integer(1))},
                                     symName(ArgKind::SymBool, "ge")));
  Node check;
  check.target = "torch.ops.aten._assert_scalar.default";
  check.inputs = {pos("self", symName(ArgKind::SymBool, "ge")), pos("assert_msg", Argument::string("n >= 1"))};
  b.ep.graph.nodes.push_back(check);
  b.ep.graph.nodes.push_back(symNode("_operator.mul", {pos("a", symName(ArgKind::SymInt, "n")), pos("b", Argument::integer(2))},
                                     symName(ArgKind::SymInt, "kept")));
  b.ep.graph.symIntValues.set("n", SymInt::of(4));
  b.ep.graph.symIntValues.set("kept", SymInt::of(8));
  b.ep.graph.symBoolValues.set("ge", SymBool{});
  b.output("x");
  b.ep.graph.outputs.push_back(symName(ArgKind::SymInt, "kept"));
  OutputSpec spec;
  spec.arg = symName(ArgKind::SymInt, "kept");
  b.ep.signature.outputSpecs.push_back(spec);
  Program p = programOf(b.ep, Stage::Edge);
  REQUIRE_NOTHROW(verifyProgram(p, Stage::Edge)); // sym ops and asserts are edge-dialect citizens
  plan::removeGraphAsserts(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].target == "torch.ops.aten.sym_size.int");
  CHECK(g.nodes[1].target == "_operator.mul");
  CHECK_FALSE(g.symBoolValues.contains("ge"));
  CHECK(g.symIntValues.contains("n"));
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
}

TEST_CASE("toOutVariant: list outputs get one alloc per element", "[plan][out][list]") {
  Program p = programOf(splitWithSizesMethod(), Stage::Edge);
  plan::toOutVariant(p);
  const Graph &g = graphOf(p);
  REQUIRE(g.nodes.size() == 5);
  CHECK(g.nodes[0].target == kAllocTarget);
  CHECK(g.nodes[0].inputs[0].arg.name == "(2, 4);7");
  CHECK(g.nodes[1].inputs[0].arg.name == "(4, 4);7");
  CHECK(g.nodes[2].target == "torch.ops.aten.split_with_sizes_copy.out");
  const NamedArgument *out = g.nodes[2].input("out");
  REQUIRE(out);
  CHECK(out->arg.kind == ArgKind::Tensors);
  CHECK(out->arg.names == std::vector<std::string>{"alloc", "alloc_1"});
  auto aliases = plan::storageAliases(g);
  CHECK(aliases.at("getitem") == "alloc");
  CHECK(aliases.at("getitem_1") == "alloc_1");
  plan::planProgram(p, {});
  CHECK(*planOf(p).allocations.find("getitem") == *planOf(p).allocations.find("alloc"));
  CHECK_FALSE(*planOf(p).allocations.find("getitem") == *planOf(p).allocations.find("getitem_1"));
  CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  CHECK_NOTHROW(plan::verifyMemoryPlan(p));
}

TEST_CASE("toOutVariant: unbind_copy.int -> unbind_copy.int_out", "[plan][out][list]") {
  GraphBuilder b;
  b.input("y", F32, {2, 3});
  Node unbind;
  unbind.target = edgeTarget("aten", "unbind_copy", "int");
  unbind.inputs = {pos("self", T("y"))};
  unbind.outputs.push_back(Argument::tensors({"a", "b"}));
  b.ep.graph.tensorValues.set("a", meta(F32, {3}));
  b.ep.graph.tensorValues.set("b", meta(F32, {3}));
  b.ep.graph.nodes.push_back(unbind);
  b.output("a").output("b");
  Program p = programOf(b.ep, Stage::Edge);
  plan::toOutVariant(p);
  CHECK(graphOf(p).nodes.back().target == "torch.ops.aten.unbind_copy.int_out");
  CHECK(graphOf(p).nodes.back().input("out")->arg.names.size() == 2);
}

TEST_CASE("nonzero: an unbacked size gets at most N rows, or a refusal naming it", "[plan][symbolic]") {
  GraphBuilder b;
  b.input("x", ScalarType::Bool, {2, 3});
  b.edge("nonzero.default", {pos("self", T("x"))}, "nz", ScalarType::Long, {0, 2});
  b.ep.graph.tensorValues.find("nz")->sizes[0] = SymInt::symbol("Symbol('u0', integer=True)");
  b.output("nz");
  Program p = programOf(b.ep, Stage::Edge);
  CHECK(errorOf([&] { plan::upperBound(graphOf(p).tensorValues.find("nz")->sizes[0], methodOf(p)); }) ==
        "cannot bound symbolic size 'Symbol('u0', integer=True)': unbacked symbol 'u0' (a data-dependent size) has "
        "no upper bound; bound it in the model before export, e.g. torch._check(n <= MAX)");
  plan::boundDataDependentSizes(p);
  REQUIRE(methodOf(p).rangeConstraints.find("u0"));
  CHECK(methodOf(p).rangeConstraints.find("u0")->maxVal == 6);
  // A bound torch recorded is kept.
  methodOf(p).rangeConstraints.find("u0")->maxVal = 4;
  plan::boundDataDependentSizes(p);
  CHECK(methodOf(p).rangeConstraints.find("u0")->maxVal == 4);
  plan::toOutVariant(p);
  plan::planProgram(p, {});
  CHECK(graphOf(p).nodes[0].inputs[0].arg.name == "(4, 2);5");
}

TEST_CASE("cond branches are out-variant converted and planned before the method", "[plan][cond]") {
  Program p = plannedCond();
  const Graph &g = graphOf(p);
  const Node &cond = g.nodes.back();
  REQUIRE(cond.target == "torch.ops.higher_order.cond");
  const Graph &t = *cond.inputs[1].arg.graph();
  REQUIRE(t.nodes.size() == 2);
  CHECK(t.nodes[0].target == kAllocTarget);
  CHECK(t.nodes[1].target == "torch.ops.aten.relu.out");
  const MemoryPlan &plan = planOf(p);
  // Each branch's storage is planned under its path; both branches share one region.
  const Allocation *relu = plan.allocations.find("true_graph_0/relu");
  const Allocation *sigmoid = plan.allocations.find("false_graph_0/sigmoid");
  REQUIRE(relu);
  REQUIRE(sigmoid);
  CHECK(*relu == *plan.allocations.find("true_graph_0/alloc"));
  CHECK(relu->offset == 0);
  CHECK(sigmoid->offset == 0);
  CHECK_FALSE(plan.allocations.contains("true_graph_0/x")); // bound to the operand
  // The method's own tensors come after the 32-byte region.
  for (const char *name : {"x", "getitem", "alloc", "alloc_1"}) {
    INFO(name);
    REQUIRE(plan.allocations.find(name));
    CHECK(plan.allocations.find(name)->offset >= 32);
  }
  CHECK(plan.bufferSizes.at(1) >= 32 + 32 + 32);
  // Lower bound: x, gt and getitem live at the cond (32 + 16 + 32) plus a branch's 32.
  CHECK(plan.lowerBounds.at(1) == 112);
  CHECK(plan.bufferSizes.at(1) >= plan.lowerBounds.at(1));
  CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  CHECK_NOTHROW(plan::verifyMemoryPlan(p));
}

TEST_CASE("the plan verifier checks branch storage against the method's", "[plan][cond][verify]") {
  Program p = plannedCond();
  MemoryPlan &plan = *p.methods.find("forward")->plan;
  SECTION("a branch tensor over the live operand") {
    Allocation x = *plan.allocations.find("x");
    plan.allocations.set("true_graph_0/relu", x);
    plan.allocations.set("true_graph_0/alloc", x);
    CHECK(errorOf([&] { plan::verifyMemoryPlan(p); }).find("overlap in memory") != std::string::npos);
  }
  SECTION("a branch tensor without allocation") {
    plan.allocations.erase("false_graph_0/sigmoid");
    plan.allocations.erase("false_graph_0/alloc");
    CHECK(errorOf([&] { plan::verifyMemoryPlan(p); }).find("tensor 'false_graph_0/alloc' is produced inside the graph "
                                                           "but has no allocation") != std::string::npos);
  }
  SECTION("an allocation for a value no graph has") {
    plan.allocations.set("true_graph_0/nothing", Allocation{1, 0});
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/memory_plans/forward/allocations/true_graph_0/nothing: allocation for unknown tensor "
          "'true_graph_0/nothing'");
  }
}

TEST_CASE("dynamic views become memory.view aliases of their base", "[plan][views][symbolic]") {
  GraphBuilder b;
  b.input("x", F32, {8, 4});
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {8, 4});
  Argument size;
  size.kind = ArgKind::SymInts;
  size.syms.push_back(SymArg{true, "mul", 0, 0});
  b.edge("view_copy.default", {pos("self", T("r")), pos("size", size)}, "v", F32, {32});
  b.edge("neg.default", {pos("self", T("v"))}, "n", F32, {32});
  b.output("n");
  const std::string s0 = "Symbol('s0', integer=True, positive=True)";
  for (const char *name : {"x", "r"}) b.ep.graph.tensorValues.find(name)->sizes[0] = SymInt::symbol(s0);
  for (const char *name : {"v", "n"})
    b.ep.graph.tensorValues.find(name)->sizes[0] = SymInt::symbol("Mul(Integer(4), " + s0 + ")");
  b.ep.rangeConstraints.set("s0", RangeConstraint{1, 8});
  // mul = sym_size(r, 0) * 4, defined before the view.
  auto &nodes = b.ep.graph.nodes;
  nodes.insert(nodes.begin() + 1, symNode("torch.ops.aten.sym_size.int", {pos("self", T("r")), pos("dim", Argument::integer(0))},
                                          symName(ArgKind::SymInt, "n0")));
  nodes.insert(nodes.begin() + 2, symNode("_operator.mul", {pos("a", symName(ArgKind::SymInt, "n0")), pos("b", Argument::integer(4))},
                                          symName(ArgKind::SymInt, "mul")));
  b.ep.graph.symIntValues.set("n0", SymInt::symbol(s0));
  b.ep.graph.symIntValues.set("mul", SymInt::symbol("Mul(Integer(4), " + s0 + ")"));
  Program p = programOf(b.ep, Stage::Edge);
  REQUIRE_NOTHROW(verifyProgram(p, Stage::Edge));
  plan::viewsToAliases(p);
  CHECK(graphOf(p).nodes[3].target == kViewTarget);
  plan::toOutVariant(p);
  plan::planProgram(p, {});
  CHECK(*planOf(p).allocations.find("v") == *planOf(p).allocations.find("r"));
  CHECK(planOf(p).bufferSizes.at(1) >= 8 * 4 * 4); // planned at the upper bound s0 = 8
  CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  CHECK_NOTHROW(plan::verifyMemoryPlan(p));
}
