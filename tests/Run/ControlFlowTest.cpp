//===- tests/Run/ControlFlowTest.cpp - cond, JumpFalse/Move, sym ops ------===//
//
// Control flow at both levels: torch.ops.higher_order.cond with subgraphs in
// a graph program, and the .pte layout the emitter gives cond (JumpFalseCall
// over the true branch, MoveCalls into the shared output, an unconditional
// JumpFalse over the false branch); symbolic ints from sym_size through
// _operator arithmetic to an int output.
//
//===----------------------------------------------------------------------===//
#include "Run/Interpreter.h"
#include "Run/TensorData.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::run;
using namespace irtest;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

Value tensorOf(ScalarType dtype, std::vector<int64_t> sizes, std::vector<double> values) {
  Tensor t = Tensor::make(dtype, std::move(sizes));
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

/// A branch graph a -> op(a, a).
std::shared_ptr<Graph> branch(const std::string &op) {
  GraphBuilder b;
  b.input("a", F32, {2});
  b.edge(op, {pos("self", T("a")), pos("other", T("a"))}, "r", F32, {2});
  b.output("r");
  return std::make_shared<Graph>(b.ep.graph);
}

Argument graphArg(std::shared_ptr<Graph> g, std::string name) {
  Argument a;
  a.kind = ArgKind::Graph;
  a.mutableGraph() = std::move(g);
  a.mutableGraphName() = std::move(name);
  return a;
}

pte::Tensor pteTensor(ScalarType dtype, std::vector<int32_t> sizes) {
  pte::Tensor t;
  t.scalarType = dtype;
  t.sizes = sizes;
  for (size_t i = 0; i < sizes.size(); ++i) t.dimOrder.push_back(uint8_t(i));
  return t;
}

} // namespace

TEST_CASE("run: cond runs the branch its predicate picks", "[run][cond]") {
  GraphBuilder b;
  b.input("p", ScalarType::Bool, {1}).input("x", F32, {2});
  b.call("torch.ops.higher_order.cond",
         {pos("", T("p")), pos("", graphArg(branch("add.Tensor"), "true_graph_0")),
          pos("", graphArg(branch("mul.Tensor"), "false_graph_0")), pos("", Argument::tensors({"x"}))},
         "c", F32, {2});
  b.output("c");
  auto exe = makeGraphExecutable(programOf(b.ep, Stage::Edge));
  Value x = tensorOf(F32, {2}, {3, 4});
  RunResult t = exe->run("forward", {tensorOf(ScalarType::Bool, {1}, {1}), x}, RunOptions{});
  CHECK(toDoubles(t.outputs.at(0).toTensor()) == std::vector<double>{6, 8});
  RunResult f = exe->run("forward", {tensorOf(ScalarType::Bool, {1}, {0}), x}, RunOptions{});
  CHECK(toDoubles(f.outputs.at(0).toTensor()) == std::vector<double>{9, 16});
  CHECK_THROWS_WITH(exe->run("forward", {tensorOf(ScalarType::Bool, {2}, {0, 1}), x}, RunOptions{}),
                    Catch::Contains("input 'p' has size 2 in dim 0; the method takes 1"));
}

TEST_CASE("run: a .pte cond (JumpFalseCall / MoveCall) runs one branch", "[run][cond]") {
  // values: 0 x, 1 y, 2 pred, 3 true-branch result, 4 false-branch result,
  // 5 Int alpha, 6 the shared output, 7 Bool false (the jump over the false branch).
  pte::Program program;
  pte::ExecutionPlan plan;
  plan.name = "forward";
  plan.values = {pteTensor(F32, {2}), pteTensor(F32, {2}), pte::Bool{false}, pteTensor(F32, {2}),
                 pteTensor(F32, {2}), pte::Int{1},        pteTensor(F32, {2}), pte::Bool{false}};
  // The branch results are planned (unplanned intermediates have no memory in the runtime).
  std::get<pte::Tensor>(plan.values[3]).allocationInfo = pte::AllocationDetails::at(1, 0);
  std::get<pte::Tensor>(plan.values[4]).allocationInfo = pte::AllocationDetails::at(1, 16);
  plan.inputs = {0, 1, 2};
  plan.outputs = {6};
  plan.operators = {{"aten::add", "out"}, {"aten::mul", "out"}};
  plan.nonConstBufferSizes = {0, 32};
  pte::Chain chain;
  chain.instructions = {
      pte::JumpFalseCall{2, 4},
      pte::KernelCall{0, {0, 1, 5, 3, 3}},
      pte::MoveCall{3, 6},
      pte::JumpFalseCall{7, 6},
      pte::KernelCall{1, {0, 1, 4, 4}},
      pte::MoveCall{4, 6},
  };
  plan.chains = {chain};
  program.executionPlan = {plan};
  auto exe = makePteExecutable(program);
  Value x = tensorOf(F32, {2}, {3, 4}), y = tensorOf(F32, {2}, {5, 6});
  RunResult t = exe->run("forward", {x, y, Value::of(true)}, RunOptions{});
  CHECK(toDoubles(t.outputs.at(0).toTensor()) == std::vector<double>{8, 10});
  RunResult f = exe->run("forward", {x, y, Value::of(false)}, RunOptions{});
  CHECK(toDoubles(f.outputs.at(0).toTensor()) == std::vector<double>{15, 24});

  SECTION("a JumpFalse loop hits the instruction budget") {
    program.executionPlan[0].chains[0].instructions.push_back(pte::JumpFalseCall{7, 0});
    RunOptions options;
    options.maxInstructions = 1000;
    CHECK_THROWS_WITH(makePteExecutable(program)->run("forward", {x, y, Value::of(true)}, options),
                      Catch::Contains("more than 1000 instructions"));
  }
  SECTION("a JumpFalse on a non-bool is refused") {
    std::get<pte::JumpFalseCall>(program.executionPlan[0].chains[0].instructions[0]).condValueIndex = 5;
    CHECK_THROWS_WITH(makePteExecutable(program)->run("forward", {x, y, Value::of(true)}, RunOptions{}),
                      Catch::Contains("not a Bool"));
  }
}

TEST_CASE("run: sym_size and _operator arithmetic give symbolic ints", "[run][sym]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  TensorMeta m = *b.ep.graph.tensorValues.find("x");
  m.sizes[0] = SymInt::symbol("s0");
  b.ep.graph.tensorValues.set("x", m);
  RangeConstraint range;
  range.minVal = 1;
  range.maxVal = 8;
  b.ep.rangeConstraints.set("s0", range);
  auto symArg = [](const std::string &name) {
    Argument a;
    a.kind = ArgKind::SymInt;
    SymArg s;
    s.isName = true;
    s.name = name;
    a.syms.push_back(s);
    return a;
  };
  Node size;
  size.target = "torch.ops.aten.sym_size.int";
  size.inputs = {pos("self", T("x")), pos("dim", Argument::integer(0))};
  size.outputs = {symArg("n")};
  Node twice;
  twice.target = "_operator.mul";
  twice.inputs = {pos("", symArg("n")), pos("", Argument::integer(2))};
  twice.outputs = {symArg("n2")};
  b.ep.graph.nodes = {size, twice};
  b.ep.graph.symIntValues.set("n", SymInt::symbol("s0"));
  b.ep.graph.symIntValues.set("n2", SymInt::symbol("2*s0"));
  b.ep.graph.outputs = {symArg("n2")};
  OutputSpec spec;
  spec.arg = symArg("n2");
  b.ep.signature.outputSpecs = {spec};
  auto exe = makeGraphExecutable(programOf(b.ep, Stage::Edge));
  RunResult r = exe->run("forward", {tensorOf(F32, {5}, {1, 2, 3, 4, 5})}, RunOptions{});
  REQUIRE(r.outputs.size() == 1);
  CHECK(r.outputs[0].toInt() == 10);
}

TEST_CASE("run: .pte sym-int prim ops write their return slot", "[run][sym]") {
  // sym_size(x, 0) * 3 with the emitter's placeholder returns (Int 0).
  pte::Program program;
  pte::ExecutionPlan plan;
  plan.name = "forward";
  pte::Tensor x = pteTensor(F32, {4});
  x.shapeDynamism = pte::TensorShapeDynamism::DynamicBound;
  plan.values = {x, pte::Int{0}, pte::Int{0}, pte::Int{3}, pte::Int{0}};
  plan.inputs = {0};
  plan.outputs = {4};
  plan.operators = {{"aten::sym_size", "int"}, {"executorch_prim::mul", "Scalar"}};
  plan.nonConstBufferSizes = {0, 0};
  pte::Chain chain;
  chain.instructions = {pte::KernelCall{0, {0, 1, 2}}, pte::KernelCall{1, {2, 3, 4}}};
  plan.chains = {chain};
  program.executionPlan = {plan};
  RunResult r = makePteExecutable(program)->run("forward", {tensorOf(F32, {3}, {1, 2, 3})}, RunOptions{});
  REQUIRE(r.outputs.size() == 1);
  CHECK(r.outputs[0].toInt() == 9);
}
