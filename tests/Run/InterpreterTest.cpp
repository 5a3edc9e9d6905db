//===- tests/Run/InterpreterTest.cpp - graph and .pte executors ----------===//
//
// The executors on small programs built here and lowered by the real passes:
// edge, planned and .pte runs agree; a memory plan that overlaps two live
// tensors gives wrong numbers; the runtime's load and kernel checks (arena
// bounds, argument counts, missing kernels, dim orders) refuse bad programs.
//
//===----------------------------------------------------------------------===//
#include "Emit/Emitter.h"
#include "Plan/PlanPasses.h"
#include "Run/Compare.h"
#include "Run/Interpreter.h"
#include "Run/TensorData.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::run;
using namespace irtest;
using exir::emit::emitProgram;

namespace {

constexpr ScalarType F32 = ScalarType::Float;

Program planned(Program p, const std::string &algorithm = "greedy") {
  plan::viewsToAliases(p);
  plan::toOutVariant(p);
  plan::PlanningOptions options;
  options.algorithm = algorithm;
  plan::planProgram(p, options);
  return p;
}

Value floats(std::vector<int64_t> sizes, std::vector<double> values) {
  Tensor t = Tensor::make(F32, std::move(sizes));
  fillFromDoubles(t, values);
  return Value::of(std::move(t));
}

std::vector<double> run1(Executable &exe, const std::vector<Value> &inputs, size_t output = 0) {
  RunResult r = exe.run("forward", inputs, RunOptions{});
  REQUIRE(r.outputs.size() > output);
  return toDoubles(r.outputs[output].toTensor());
}

/// forward(x, y): a = x + y; b = a * y; c = b + x; return c  (2x2 floats).
/// `a` dies at the mul, so a good plan may reuse its bytes for `c` only.
Program chainProgram() {
  GraphBuilder b;
  b.input("x", F32, {2, 2}).input("y", F32, {2, 2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "a", F32, {2, 2});
  b.edge("mul.Tensor", {pos("self", T("a")), pos("other", T("y"))}, "b", F32, {2, 2});
  b.edge("add.Tensor", {pos("self", T("b")), pos("other", T("x"))}, "c", F32, {2, 2});
  b.output("c");
  return programOf(b.ep, Stage::Edge);
}

const std::vector<Value> chainInputs = {floats({2, 2}, {1, 2, 3, 4}), floats({2, 2}, {10, 20, 30, 40})};
const std::vector<double> chainExpected = {111, 442, 993, 1764};

} // namespace

TEST_CASE("run: edge, planned and .pte runs of one program agree", "[run]") {
  Program edge = chainProgram();
  Program plan = planned(edge);
  auto edgeExe = makeGraphExecutable(edge);
  auto planExe = makeGraphExecutable(plan);
  auto pteExe = makePteExecutable(emitProgram(plan));
  CHECK(run1(*edgeExe, chainInputs) == chainExpected);
  CHECK(run1(*planExe, chainInputs) == chainExpected);
  CHECK(run1(*pteExe, chainInputs) == chainExpected);
  CHECK(edgeExe->kind() == "edge program");
  CHECK(planExe->kind() == "planned program");
  auto infos = pteExe->inputs("forward");
  REQUIRE(infos.size() == 2);
  CHECK(infos[1].sizes == std::vector<int64_t>{2, 2});
}

TEST_CASE("run: a plan that overlaps two live tensors gives wrong numbers", "[run]") {
  Program plan = planned(chainProgram());
  Method &m = *plan.methods.find("forward");
  // Put b's out buffer (the alloc of the mul) on top of the input x, which is
  // live until the last add reads it.
  auto aliases = plan::storageAliases(m.program.graph);
  std::string bStorage = plan::storageRoot(aliases, "b");
  const Allocation *x = m.plan->allocations.find("x");
  REQUIRE(x);
  REQUIRE(m.plan->allocations.contains(bStorage));
  m.plan->allocations.set(bStorage, *x);

  Program edge = chainProgram();
  auto edgeExe = makeGraphExecutable(edge);
  std::vector<double> good = run1(*edgeExe, chainInputs);
  // The bad plan still fits its arenas, so nothing refuses it: the numbers differ.
  auto planExe = makeGraphExecutable(plan);
  std::vector<double> graphBad = run1(*planExe, chainInputs);
  auto pteExe = makePteExecutable(emitProgram(plan));
  std::vector<double> pteBad = run1(*pteExe, chainInputs);
  CHECK(graphBad != good);
  CHECK(pteBad == graphBad);
  Tolerance tol;
  CHECK(compareValues(floats({2, 2}, pteBad), floats({2, 2}, good), tol));
}

TEST_CASE("run: arenas are poisoned, so an unwritten planned output is not zeros", "[run]") {
  GraphBuilder b;
  b.input("x", F32, {2, 2}).input("y", F32, {2, 2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "z", F32, {2, 2});
  b.output("z");
  pte::Program pte = emitProgram(planned(programOf(b.ep, Stage::Edge)));
  // Drop the only instruction: the output is never written.
  pte.executionPlan[0].chains[0].instructions.pop_back();
  auto exe = makePteExecutable(pte);
  RunOptions options;
  options.poison = 0x5A;
  RunResult r = exe->run("forward", chainInputs, options);
  const Tensor &out = r.outputs[0].toTensor();
  for (size_t i = 0; i < out.nbytes(); ++i) CHECK(out.data[i] == options.poison);
}

TEST_CASE("run: planned tensors outside their arena are refused", "[run]") {
  Program plan = planned(chainProgram());
  pte::Program pte = emitProgram(plan);
  auto &values = pte.executionPlan[0].values;
  auto &sizes = pte.executionPlan[0].nonConstBufferSizes;
  SECTION(".pte: offset past the buffer") {
    for (auto &v : values)
      if (auto *t = std::get_if<pte::Tensor>(&v); t && t->allocationInfo) {
        t->allocationInfo = pte::AllocationDetails::at(1, uint64_t(sizes[1]) - 8);
        break;
      }
    auto exe = makePteExecutable(pte);
    CHECK_THROWS_WITH(exe->run("forward", chainInputs, RunOptions{}), Catch::Contains("MemoryAllocationFailed"));
  }
  SECTION(".pte: memory_id 0") {
    for (auto &v : values)
      if (auto *t = std::get_if<pte::Tensor>(&v); t && t->allocationInfo) {
        t->allocationInfo->memoryId = 0;
        break;
      }
    auto exe = makePteExecutable(pte);
    CHECK_THROWS_WITH(exe->run("forward", chainInputs, RunOptions{}), Catch::Contains("memory_id 0"));
  }
  SECTION("graph: an intermediate left out of the plan") {
    auto &allocations = plan.methods.find("forward")->plan->allocations;
    auto aliases = plan::storageAliases(plan.methods.find("forward")->program.graph);
    allocations.erase(plan::storageRoot(aliases, "a"));
    auto exe = makeGraphExecutable(plan);
    CHECK_THROWS_WITH(exe->run("forward", chainInputs, RunOptions{}), Catch::Contains("has no placement in the memory plan"));
  }
  SECTION("graph: an arena too small for the plan") {
    plan.methods.find("forward")->plan->bufferSizes[1] = 16;
    auto exe = makeGraphExecutable(plan);
    CHECK_THROWS_WITH(exe->run("forward", chainInputs, RunOptions{}), Catch::Contains("does not fit in arena 1"));
  }
}

TEST_CASE("run: KernelCalls are checked as the runtime checks them at load", "[run]") {
  pte::Program pte = emitProgram(planned(chainProgram()));
  auto &plan = pte.executionPlan[0];
  auto &call = std::get<pte::KernelCall>(plan.chains[0].instructions[0]);
  SECTION("argument count") {
    call.args.pop_back();
    CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", chainInputs, RunOptions{}),
                      Catch::Contains("aten::add.out has 4 arguments; its schema takes 4 plus the return slot"));
  }
  SECTION("a missing kernel") {
    plan.operators[size_t(call.opIndex)].name = "aten::no_such_op";
    CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", chainInputs, RunOptions{}),
                      Catch::Contains("OperatorMissing") && Catch::Contains("aten::no_such_op.out"));
  }
  SECTION("an intermediate with no memory") {
    for (auto &v : plan.values)
      if (auto *t = std::get_if<pte::Tensor>(&v); t && t->allocationInfo) {
        t->allocationInfo.reset(); // the first planned tensor is input x: make it an intermediate
        break;
      }
    plan.inputs.erase(plan.inputs.begin());
    CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", {chainInputs[1]}, RunOptions{}),
                      Catch::Contains("the runtime gives it no memory"));
  }
  SECTION("an external constant") {
    pte::ExtraTensorInfo extra;
    extra.fullyQualifiedName = "linear.weight";
    extra.location = pte::TensorDataLocation::External;
    std::get<pte::Tensor>(plan.values[0]).extraTensorInfo = extra;
    CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", chainInputs, RunOptions{}),
                      Catch::Contains("'linear.weight' is an external constant"));
  }
  SECTION("wrong input dtype and size") {
    std::vector<Value> bad = chainInputs;
    bad[0] = floats({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", bad, RunOptions{}), Catch::Contains("static shape"));
  }
}

TEST_CASE("run: a permute_copy whose output has dim order [1, 0] is refused", "[run]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.edge("permute_copy.default", {pos("self", T("x")), pos("dims", Argument::ints_({1, 0}))}, "p", F32, {3, 2});
  b.output("p");
  Program plan = planned(programOf(b.ep, Stage::Edge));
  pte::Program pte = emitProgram(plan);
  std::vector<Value> in = {floats({2, 3}, {1, 2, 3, 4, 5, 6})};
  CHECK(run1(*makePteExecutable(pte), in) == std::vector<double>{1, 4, 2, 5, 3, 6});
  int32_t out = pte.executionPlan[0].outputs.at(0);
  std::get<pte::Tensor>(pte.executionPlan[0].values[size_t(out)]).dimOrder = {1, 0};
  CHECK_THROWS_WITH(makePteExecutable(pte)->run("forward", in, RunOptions{}), Catch::Contains("dim order"));
  // The same in the planned program: strides that make the result column-major.
  Graph &g = plan.methods.find("forward")->program.graph;
  for (const char *name : {"p", "alloc"}) {
    TensorMeta m = *g.tensorValues.find(name);
    m.strides = {SymInt::of(1), SymInt::of(3)};
    g.tensorValues.set(name, m);
  }
  CHECK_THROWS_WITH(makeGraphExecutable(plan)->run("forward", in, RunOptions{}), Catch::Contains("dim order"));
}

TEST_CASE("run: dynamic inputs run below their upper bound", "[run]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "y", F32, {4});
  b.output("y");
  // Make dim 0 symbolic with bound 4.
  SymInt s = SymInt::symbol("s0");
  for (const char *n : {"x", "y"}) {
    TensorMeta m = *b.ep.graph.tensorValues.find(n);
    m.sizes[0] = s;
    b.ep.graph.tensorValues.set(n, m);
  }
  RangeConstraint range;
  range.minVal = 1;
  range.maxVal = 4;
  b.ep.rangeConstraints.set("s0", range);
  Program edge = programOf(b.ep, Stage::Edge);
  Program plan = planned(edge);
  std::vector<Value> small = {floats({2}, {1, 2})};
  std::vector<std::unique_ptr<Executable>> exes;
  exes.push_back(makeGraphExecutable(edge));
  exes.push_back(makeGraphExecutable(plan));
  exes.push_back(makePteExecutable(emitProgram(plan)));
  for (auto &exe : exes) {
    RunResult r = exe->run("forward", small, RunOptions{});
    CHECK(r.outputs[0].toTensor().sizes == std::vector<int64_t>{2});
    CHECK(toDoubles(r.outputs[0].toTensor()) == std::vector<double>{2, 4});
    CHECK_THROWS_WITH(exe->run("forward", {floats({5}, {1, 2, 3, 4, 5})}, RunOptions{}), Catch::Contains("bound"));
  }
}

TEST_CASE("run: an op with a Tensor[] result binds every element", "[run]") {
  GraphBuilder b;
  b.input("x", F32, {4});
  Node &split = b.edge("split_copy.Tensor", {pos("self", T("x")), pos("split_size", Argument::integer(2))}, "s0", F32, {2});
  split.outputs = {Argument::tensors({"s0", "s1"})};
  b.ep.graph.tensorValues.set("s1", meta(F32, {2}));
  b.edge("sub.Tensor", {pos("self", T("s1")), pos("other", T("s0"))}, "d", F32, {2});
  b.output("d");
  auto exe = makeGraphExecutable(programOf(b.ep, Stage::Edge));
  CHECK(run1(*exe, {floats({4}, {1, 2, 10, 20})}) == std::vector<double>{9, 18});
}
