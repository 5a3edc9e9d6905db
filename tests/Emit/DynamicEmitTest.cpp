//===- tests/Emit/DynamicEmitTest.cpp - sym ints, lists, cond in the .pte --===//
//
// What upstream's emitter writes for the constructs of real torch.export
// programs (pte-format.md §3.2, §3.5, §3.6): Python sym ops as
// executorch_prim::*.Scalar KernelCalls with a placeholder Int return, dynamic
// views as et_view, tensors with symbolic sizes DYNAMIC_BOUND at their upper
// bound, list outputs as TensorList out arguments, and cond inlined into the
// single chain with JumpFalseCall / MoveCall.
//
//===----------------------------------------------------------------------===//
#include "Emit/Emitter.h"
#include "IR/Verifier.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;
using exir::pte::test::valueAs;

namespace {

constexpr ScalarType F32 = ScalarType::Float;
const std::string kS0 = "Symbol('s0', integer=True, positive=True)";

pte::ExecutionPlan emitted(Program p) {
  plan::removeGraphAsserts(p);
  plan::viewsToAliases(p);
  plan::toOutVariant(p);
  plan::PlanningOptions options;
  options.algorithm = "greedy";
  plan::planProgram(p, options);
  verifyProgram(p, Stage::Planned);
  return emit::emitProgram(p).executionPlan.at(0);
}

template <typename I> const I &instruction(const pte::ExecutionPlan &plan, size_t i) {
  INFO("instruction " << i);
  REQUIRE(plan.chains.size() == 1);
  REQUIRE(i < plan.chains[0].instructions.size());
  const I *call = std::get_if<I>(&plan.chains[0].instructions[i]);
  REQUIRE(call);
  return *call;
}

std::string operatorName(const pte::ExecutionPlan &plan, int32_t index) {
  const pte::Operator &op = plan.operators.at(size_t(index));
  return op.name + (op.overload.empty() ? "" : "." + op.overload);
}

/// forward(x: f32[s0, 4]) = neg(relu(x).view(sym_size(relu, 0) * 4)), s0 in [1, 8].
Program symIntProgram() {
  GraphBuilder b;
  b.input("x", F32, {8, 4});
  b.edge("relu.default", {pos("self", T("x"))}, "r", F32, {8, 4});
  b.ep.graph.nodes.push_back(symNode("torch.ops.aten.sym_size.int", {pos("self", T("r")), pos("dim", Argument::integer(0))},
                                     symName(ArgKind::SymInt, "n0")));
  b.ep.graph.nodes.push_back(symNode("_operator.mul", {pos("a", symName(ArgKind::SymInt, "n0")), pos("b", Argument::integer(4))},
                                     symName(ArgKind::SymInt, "mul")));
  Argument size;
  size.kind = ArgKind::SymInts;
  size.syms.push_back(SymArg{true, "mul", 0, 0});
  b.edge("view_copy.default", {pos("self", T("r")), pos("size", size)}, "v", F32, {32});
  b.edge("neg.default", {pos("self", T("v"))}, "n", F32, {32});
  b.output("n");
  for (const char *name : {"x", "r"}) b.ep.graph.tensorValues.find(name)->sizes[0] = SymInt::symbol(kS0);
  for (const char *name : {"v", "n"})
    b.ep.graph.tensorValues.find(name)->sizes[0] = SymInt::symbol("Mul(Integer(4), " + kS0 + ")");
  b.ep.graph.symIntValues.set("n0", SymInt::symbol(kS0));
  b.ep.graph.symIntValues.set("mul", SymInt::symbol("Mul(Integer(4), " + kS0 + ")"));
  b.ep.rangeConstraints.set("s0", RangeConstraint{1, 8});
  return programOf(b.ep, Stage::Edge);
}

} // namespace

TEST_CASE("emitter: sym_size, prim mul.Scalar and et_view with DYNAMIC_BOUND tensors", "[emit][sym]") {
  pte::ExecutionPlan plan = emitted(symIntProgram());
  // values: 0 x, 1 alloc(relu), 2 Int dim, 3 Int ret(sym_size), 4 Int 4, 5 Int ret(mul),
  //         6 IntList[5], 7 view out, 8 alloc(neg)
  const auto &x = valueAs<pte::Tensor>(plan, 0);
  CHECK(x.shapeDynamism == pte::TensorShapeDynamism::DynamicBound);
  CHECK(x.sizes == std::vector<int32_t>{8, 4});
  REQUIRE(plan.chains[0].instructions.size() == 5);
  const auto &relu = instruction<pte::KernelCall>(plan, 0);
  CHECK(operatorName(plan, relu.opIndex) == "aten::relu.out");
  const auto &symSize = instruction<pte::KernelCall>(plan, 1);
  CHECK(operatorName(plan, symSize.opIndex) == "aten::sym_size.int");
  REQUIRE(symSize.args.size() == 3);
  CHECK(symSize.args[0] == relu.args.back());
  CHECK(valueAs<pte::Int>(plan, symSize.args[1]).intVal == 0);
  CHECK(valueAs<pte::Int>(plan, symSize.args[2]).intVal == 0); // placeholder return
  const auto &mul = instruction<pte::KernelCall>(plan, 2);
  CHECK(operatorName(plan, mul.opIndex) == "executorch_prim::mul.Scalar");
  REQUIRE(mul.args.size() == 3);
  CHECK(mul.args[0] == symSize.args[2]); // the sym int value sym_size wrote
  CHECK(valueAs<pte::Int>(plan, mul.args[1]).intVal == 4);
  CHECK(mul.args[2] != mul.args[0]);
  const auto &view = instruction<pte::KernelCall>(plan, 3);
  CHECK(operatorName(plan, view.opIndex) == "executorch_prim::et_view.default");
  REQUIRE(view.args.size() == 3);
  CHECK(view.args[0] == relu.args.back());
  CHECK(valueAs<pte::IntList>(plan, view.args[1]).items == std::vector<int64_t>{mul.args[2]});
  const auto &out = valueAs<pte::Tensor>(plan, view.args[2]);
  CHECK(out.shapeDynamism == pte::TensorShapeDynamism::DynamicBound);
  CHECK(out.sizes == std::vector<int32_t>{32});
  const auto &base = valueAs<pte::Tensor>(plan, relu.args.back());
  CHECK(out.allocationInfo == base.allocationInfo);
  const auto &neg = instruction<pte::KernelCall>(plan, 4);
  CHECK(neg.args.at(0) == view.args[2]);
}

TEST_CASE("emitter: a Python sym op without a prim op is refused", "[emit][sym]") {
  Program p = symIntProgram();
  graphOf(p).nodes[2].target = "_operator.pow";
  CHECK(errorOf([&] { emitted(p); }) ==
        "/methods/forward/graph_module/graph/nodes/3 (mul): symbolic op _operator.pow has no ExecuTorch prim op");
}

TEST_CASE("emitter: split_with_sizes_copy.out takes a TensorList of the allocs", "[emit][list]") {
  pte::ExecutionPlan plan = emitted(programOf(splitWithSizesMethod(), Stage::Edge));
  // values: 0 x, 1 alloc, 2 alloc_1, 3 Int 2, 4 Int 4, 5 IntList, 6 Int dim, 7 TensorList out, 8 alloc_2
  const auto &call = instruction<pte::KernelCall>(plan, 0);
  CHECK(operatorName(plan, call.opIndex) == "aten::split_with_sizes_copy.out");
  REQUIRE(call.args.size() == 5);
  CHECK(valueAs<pte::IntList>(plan, call.args[1]).items.size() == 2);
  CHECK(valueAs<pte::Int>(plan, call.args[2]).intVal == 0);
  CHECK(valueAs<pte::TensorList>(plan, call.args[3]).items == std::vector<int32_t>{1, 2});
  CHECK(call.args[4] == call.args[3]);
  CHECK(plan.outputs.at(0) == 1);
  CHECK(instruction<pte::KernelCall>(plan, 1).args.at(0) == 2);
}

TEST_CASE("emitter: cond is inlined with JumpFalseCall and MoveCall", "[emit][cond]") {
  pte::ExecutionPlan plan = emitted(programOf(condMethod(), Stage::Edge));
  // values: 0 x, 1 alloc(sum), 2 Null dtype, 3 alloc_1(gt), 4 Int 0, 5 getitem,
  //         6 alloc(relu), 7 Bool false, 8 alloc(sigmoid)
  REQUIRE(plan.chains[0].instructions.size() == 8);
  CHECK(operatorName(plan, instruction<pte::KernelCall>(plan, 0).opIndex) == "aten::sum.out");
  const auto &gt = instruction<pte::KernelCall>(plan, 1);
  CHECK(operatorName(plan, gt.opIndex) == "aten::gt.Scalar_out");
  int32_t getitem = plan.outputs.at(0);
  CHECK(valueAs<pte::Tensor>(plan, getitem).sizes == std::vector<int32_t>{2, 4});
  const auto &jf1 = instruction<pte::JumpFalseCall>(plan, 2);
  CHECK(jf1.condValueIndex == gt.args.back());
  CHECK(jf1.destinationInstruction == 6);
  const auto &relu = instruction<pte::KernelCall>(plan, 3);
  CHECK(operatorName(plan, relu.opIndex) == "aten::relu.out");
  CHECK(relu.args.at(0) == 0); // the branch input is the cond operand x
  const auto &moveTrue = instruction<pte::MoveCall>(plan, 4);
  CHECK(moveTrue.moveFrom == relu.args.back());
  CHECK(moveTrue.moveTo == getitem);
  const auto &jf2 = instruction<pte::JumpFalseCall>(plan, 5);
  CHECK(valueAs<pte::Bool>(plan, jf2.condValueIndex).boolVal == false);
  CHECK(jf2.destinationInstruction == 8);
  const auto &sigmoid = instruction<pte::KernelCall>(plan, 6);
  CHECK(operatorName(plan, sigmoid.opIndex) == "aten::sigmoid.out");
  const auto &moveFalse = instruction<pte::MoveCall>(plan, 7);
  CHECK(moveFalse.moveFrom == sigmoid.args.back());
  CHECK(moveFalse.moveTo == getitem);
  // The branch outputs share the branch region at offset 0; getitem is the method's own.
  const auto &reluOut = valueAs<pte::Tensor>(plan, relu.args.back());
  const auto &sigmoidOut = valueAs<pte::Tensor>(plan, sigmoid.args.back());
  REQUIRE(reluOut.allocationInfo);
  REQUIRE(sigmoidOut.allocationInfo);
  CHECK(reluOut.allocationInfo == sigmoidOut.allocationInfo);
  CHECK(valueAs<pte::Tensor>(plan, getitem).allocationInfo != reluOut.allocationInfo);
}
