//===- tests/IR/VerifierTest.cpp - Stage invariants -----------------------===//
//
// One valid program, then each verifier rule broken on purpose; every case
// checks the message and the location the user would be pointed at.
//
//===----------------------------------------------------------------------===//
#include "IR/Verifier.h"
#include "GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace irtest;

namespace {

const char *kAdd = "torch.ops.aten.add.Tensor";
const char *kMul = "torch.ops.aten.mul.Tensor";

/// forward(x, y) = (x + y) * y on 2x2 floats.
ExportedProgram addMul() {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2, 2}).input("y", ScalarType::Float, {2, 2});
  b.call(kAdd, {pos("self", T("x")), pos("other", T("y"))}, "add", ScalarType::Float, {2, 2});
  b.call(kMul, {pos("self", T("add")), pos("other", T("y"))}, "mul", ScalarType::Float, {2, 2});
  b.output("mul");
  return b.ep;
}

} // namespace

TEST_CASE("a well-formed program verifies", "[verifier]") {
  Program p = programOf(addMul());
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
  CHECK_NOTHROW(verifyMethodStructure(methodOf(p), "forward"));
}

TEST_CASE("verifier: use before definition", "[verifier]") {
  ExportedProgram ep = addMul();
  std::swap(ep.graph.nodes[0], ep.graph.nodes[1]);
  CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (mul)/inputs/0: uses 'add' before it is defined "
        "(argument 'self'; graph not in topological order or value missing)");
}

TEST_CASE("verifier: a value defined twice", "[verifier]") {
  ExportedProgram ep = addMul();
  ep.graph.nodes[1].outputs[0] = T("add");
  ep.graph.outputs[0] = T("add");
  ep.signature.outputSpecs[0].arg = T("add");
  CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
        "/methods/forward/graph_module/graph/nodes/1 (add): value 'add' is defined twice");
  // A node redefining a placeholder is caught the same way.
  ExportedProgram ep2 = addMul();
  ep2.graph.nodes[0].outputs[0] = T("x");
  CHECK(errorOf([&] { verifyMethodStructure(ep2, "forward"); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (x): value 'x' is defined twice");
}

TEST_CASE("verifier: missing tensor_values entry", "[verifier]") {
  ExportedProgram ep = addMul();
  ep.graph.tensorValues.erase("add");
  CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (add): value 'add' has no entry in "
        "tensor_values/sym_*_values");
  ExportedProgram ep2 = addMul();
  ep2.graph.tensorValues.erase("y");
  CHECK(errorOf([&] { verifyMethodStructure(ep2, "forward"); }) ==
        "/methods/forward/graph_module/graph/inputs/1: value 'y' has no entry in tensor_values/sym_*_values");
}

TEST_CASE("verifier: a name in two value tables", "[verifier]") {
  // Code that copies a value's metadata takes the first table holding the name.
  ExportedProgram ep = addMul();
  ep.graph.symIntValues.set("add", SymInt{});
  CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
        "/methods/forward/graph_module/graph/sym_int_values/add: value 'add' is in both tensor_values and "
        "sym_int_values; a value has one kind, so its name belongs in one table");
  // Two symbolic tables, neither of them tensor_values.
  ExportedProgram ep2 = addMul();
  ep2.graph.symIntValues.set("s", SymInt{});
  ep2.graph.symFloatValues.set("s", SymFloat{});
  CHECK(errorOf([&] { verifyMethodStructure(ep2, "forward"); }) ==
        "/methods/forward/graph_module/graph/sym_float_values/s: value 's' is in both sym_int_values and "
        "sym_float_values; a value has one kind, so its name belongs in one table");
  ExportedProgram ep3 = addMul();
  ep3.graph.symBoolValues.set("b", SymBool{});
  ep3.graph.customObjValues.set("b", CustomObjValue{});
  CHECK(errorOf([&] { verifyMethodStructure(ep3, "forward"); }) ==
        "/methods/forward/graph_module/graph/custom_obj_values/b: value 'b' is in both sym_bool_values and "
        "custom_obj_values; a value has one kind, so its name belongs in one table");
  // Distinct names in every table verify.
  ExportedProgram ok = addMul();
  ok.graph.symIntValues.set("s", SymInt{});
  ok.graph.symFloatValues.set("f", SymFloat{});
  CHECK_NOTHROW(verifyMethodStructure(ok, "forward"));
}

TEST_CASE("verifier: empty target and undefined output", "[verifier]") {
  ExportedProgram ep = addMul();
  ep.graph.nodes[1].target.clear();
  CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
        "/methods/forward/graph_module/graph/nodes/1 (mul): node has an empty target");
  ExportedProgram ep2 = addMul();
  ep2.graph.outputs[0] = T("ghost");
  CHECK(errorOf([&] { verifyMethodStructure(ep2, "forward"); }) ==
        "/methods/forward/graph_module/graph/outputs/0: graph output 'ghost' is not defined");
}

TEST_CASE("verifier: signature does not match the graph", "[verifier]") {
  SECTION("input count") {
    ExportedProgram ep = addMul();
    ep.signature.inputSpecs.pop_back();
    CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
          "/methods/forward/graph_module/signature/input_specs: graph signature has 1 input specs but the "
          "graph has 2 inputs");
  }
  SECTION("input name") {
    ExportedProgram ep = addMul();
    std::swap(ep.signature.inputSpecs[0], ep.signature.inputSpecs[1]);
    CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
          "/methods/forward/graph_module/signature/input_specs/0: input spec names 'y' but graph input 0 is 'x'");
  }
  SECTION("output count") {
    ExportedProgram ep = addMul();
    ep.signature.outputSpecs.push_back(ep.signature.outputSpecs[0]);
    CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
          "/methods/forward/graph_module/signature/output_specs: graph signature has 2 output specs but the "
          "graph has 1 outputs");
  }
  SECTION("output name") {
    ExportedProgram ep = addMul();
    ep.signature.outputSpecs[0].arg = T("add");
    CHECK(errorOf([&] { verifyMethodStructure(ep, "forward"); }) ==
          "/methods/forward/graph_module/signature/output_specs/0: output spec names 'add' but graph output 0 "
          "is 'mul'");
  }
}

TEST_CASE("verifier: stage rules", "[verifier]") {
  SECTION("stage mismatch") {
    Program p = programOf(addMul(), Stage::Aten);
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) == "expected a program of stage 'edge', got 'aten'");
  }
  SECTION("no methods") {
    Program p;
    CHECK(errorOf([&] { verifyProgram(p, Stage::Aten); }) == "/methods: program has no methods");
  }
  SECTION("edge op in an ATen program") {
    Program p = programOf(addMul(), Stage::Aten);
    graphOf(p).nodes[1].target = edgeTarget("aten", "mul", "Tensor");
    CHECK(errorOf([&] { verifyProgram(p, Stage::Aten); }) ==
          "/methods/forward/graph_module/graph/nodes/1 (mul): edge/executorch op "
          "'executorch.exir.dialects.edge.ops.aten.mul.Tensor' in an ATen-dialect program");
  }
  SECTION("ATen op in an edge program") {
    Program p = programOf(addMul(), Stage::Edge);
    graphOf(p).nodes[0].target = edgeTarget("aten", "add", "Tensor");
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/1 (mul): op 'torch.ops.aten.mul.Tensor' is not in the edge "
          "namespace (executorch.exir.dialects.edge.ops.*)");
    graphOf(p).nodes[1].target = edgeTarget("aten", "mul", "Tensor");
    CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
  }
  SECTION("alloc in an edge program") {
    Program p = programOf(addMul(), Stage::Edge);
    graphOf(p).nodes[0].target = edgeTarget("aten", "add", "Tensor");
    graphOf(p).nodes[1].target = kAllocTarget;
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/1 (mul): memory.alloc in a program that is not planned");
  }
}

TEST_CASE("verifier: one method checked without a program around it", "[verifier]") {
  // verifyMethod is what the delegate check uses on each original module: the
  // same rules and locations as verifyProgram on a program holding that method.
  ExportedProgram ep = addMul();
  CHECK_NOTHROW(verifyMethod(ep, "forward", Stage::Aten));
  CHECK(errorOf([&] { verifyMethod(ep, "forward", Stage::Edge); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (add): op 'torch.ops.aten.add.Tensor' is not in the edge "
        "namespace (executorch.exir.dialects.edge.ops.*)");
  ep.graph.nodes[0].target = edgeTarget("aten", "add", "Tensor");
  ep.graph.nodes[1].target = edgeTarget("aten", "mul", "Tensor");
  CHECK_NOTHROW(verifyMethod(ep, "forward", Stage::Edge));
  ep.graph.nodes[0].inputs[0].arg = Argument::tensor("nowhere");
  Program p = programOf(ep, Stage::Edge);
  std::string expected = errorOf([&] { verifyProgram(p, Stage::Edge); });
  CHECK(expected.find("nowhere") != std::string::npos);
  CHECK(errorOf([&] { verifyMethod(ep, "forward", Stage::Edge); }) == expected);
  std::string renamed = errorOf([&] { verifyMethod(ep, "sub", Stage::Edge); });
  CHECK(renamed.rfind("/methods/sub/graph_module/graph/nodes/0", 0) == 0);
  CHECK_THROWS_AS(verifyMethod(ep, "forward", Stage::Planned), InternalError);
}

TEST_CASE("verifier: planned programs need a valid plan", "[verifier]") {
  Program p = programOf(addMul(), Stage::Planned);
  SECTION("no plan") {
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/memory_plans/forward: planned program has no memory plan");
  }
  MemoryPlan plan;
  plan.bufferSizes = {0, 64};
  plan.allocations.set("add", Allocation{1, 0});
  SECTION("valid plan") {
    p.methods.find("forward")->plan = plan;
    CHECK_NOTHROW(verifyProgram(p, Stage::Planned));
  }
  SECTION("functional edge op left") {
    p.methods.find("forward")->plan = plan;
    graphOf(p).nodes[0].target = edgeTarget("aten", "add", "Tensor");
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/methods/forward/graph_module/graph/nodes/0 (add): functional edge op "
          "'executorch.exir.dialects.edge.ops.aten.add.Tensor' left in a planned program (expected its out variant)");
  }
  SECTION("reserved entry") {
    plan.bufferSizes = {16, 64};
    p.methods.find("forward")->plan = plan;
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/memory_plans/forward/buffer_sizes: buffer_sizes must start with the reserved entry 0");
  }
  SECTION("mem_id out of range") {
    plan.allocations.set("mul", Allocation{2, 0});
    p.methods.find("forward")->plan = plan;
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/memory_plans/forward/allocations/mul: mem_id 2 is not an arena of this plan");
  }
  SECTION("unknown tensor") {
    plan.allocations.set("ghost", Allocation{1, 16});
    p.methods.find("forward")->plan = plan;
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/memory_plans/forward/allocations/ghost: allocation for unknown tensor 'ghost'");
  }
}

TEST_CASE("verifier: sym ops and runtime asserts stay ATen ops in the edge dialect", "[verifier][sym]") {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {4});
  Node size;
  size.target = "torch.ops.aten.sym_size.int";
  size.inputs = {pos("self", T("x")), pos("dim", Argument::integer(0))};
  size.outputs.push_back(symName(ArgKind::SymInt, "n"));
  Node ge;
  ge.target = "_operator.ge";
  ge.inputs = {pos("a", symName(ArgKind::SymInt, "n")), pos("b", Argument::integer(1))};
  ge.outputs.push_back(symName(ArgKind::SymBool, "ge"));
  Node check;
  check.target = "torch.ops.aten._assert_scalar.default";
  check.inputs = {pos("self", symName(ArgKind::SymBool, "ge")), pos("assert_msg", Argument::string("n >= 1"))};
  b.ep.graph.nodes = {size, ge, check};
  b.ep.graph.symIntValues.set("n", SymInt::of(4));
  b.ep.graph.symBoolValues.set("ge", SymBool{});
  b.output("x");
  Program p = programOf(b.ep, Stage::Edge);
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
  SECTION("a sym value used before it is defined") {
    std::swap(graphOf(p).nodes[0], graphOf(p).nodes[1]);
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/0 (ge)/inputs/0: uses 'n' before it is defined (argument 'a'; "
          "graph not in topological order or value missing)");
  }
  SECTION("a sym value without metadata") {
    graphOf(p).symBoolValues.erase("ge");
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/1 (ge): value 'ge' has no entry in tensor_values/sym_*_values");
  }
  SECTION("other ATen ops are still refused") {
    graphOf(p).nodes[0].target = "torch.ops.aten.sym_sizes.int";
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }).find("is not in the edge namespace") != std::string::npos);
  }
  SECTION("asserts are gone once planned") {
    p.stage = Stage::Planned;
    p.methods.find("forward")->plan = MemoryPlan{"greedy", 16, {0, 0}, {0, 0}, {}};
    CHECK(errorOf([&] { verifyProgram(p, Stage::Planned); }) ==
          "/methods/forward/graph_module/graph/nodes/2: runtime assert 'torch.ops.aten._assert_scalar.default' left "
          "in a planned program (exir-plan removes them)");
  }
}

TEST_CASE("verifier: cond branches are verified as graphs of their own", "[verifier][cond]") {
  Program p = programOf(condMethod(), Stage::Edge);
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
  Node &cond = graphOf(p).nodes.back();
  SECTION("a branch taking more inputs than there are operands") {
    cond.inputs[2].arg.graph()->inputs.push_back(T("y"));
    cond.inputs[2].arg.graph()->tensorValues.set("y", meta(ScalarType::Float, {2}));
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/2/inputs/2/arg/as_graph/graph/inputs: cond branch "
          "'false_graph_0' takes 2 inputs but cond passes 1 operands");
  }
  SECTION("a branch returning a different number of values") {
    cond.inputs[1].arg.graph()->outputs.push_back(T("x"));
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/2/inputs/1/arg/as_graph/graph/outputs: cond branch "
          "'true_graph_0' returns 2 values but the cond node has 1 outputs");
  }
  SECTION("a branch using a value of the enclosing graph") {
    cond.inputs[1].arg.graph()->nodes[0].inputs[0].arg.name = "sum_1";
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/2/inputs/1/arg/as_graph/graph/nodes/0 (relu)/inputs/0: uses "
          "'sum_1' before it is defined (argument 'self'; graph not in topological order or value missing)");
  }
  SECTION("an ATen op inside a branch") {
    cond.inputs[1].arg.graph()->nodes[0].target = "torch.ops.aten.relu.default";
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/2/inputs/1/arg/as_graph/graph/nodes/0 (relu): op "
          "'torch.ops.aten.relu.default' is not in the edge namespace (executorch.exir.dialects.edge.ops.*)");
  }
  SECTION("a predicate that is not a tensor or bool") {
    cond.inputs[0].arg = Argument::integer(1);
    CHECK(errorOf([&] { verifyProgram(p, Stage::Edge); }) ==
          "/methods/forward/graph_module/graph/nodes/2 (getitem)/inputs/0: cond predicate must be a tensor or a "
          "bool, got as_int");
  }
}

TEST_CASE("verifier: a big graph reports the error a serial check meets first", "[verifier]") {
  // From 4096 tensor values the value tables are checked on a second thread
  // beside the nodes: a table error still wins over any node error, as it
  // comes first in a serial check.
  auto chain = [] {
    GraphBuilder b;
    b.input("x", ScalarType::Float, {2, 2});
    for (int i = 0; i < 5000; ++i)
      b.call(kAdd, {pos("self", T(i ? "v" + std::to_string(i - 1) : "x")), pos("other", T("x"))},
             "v" + std::to_string(i), ScalarType::Float, {2, 2});
    b.output("v4999");
    return b.ep;
  };
  ExportedProgram ok = chain();
  CHECK_NOTHROW(verifyMethodStructure(ok, "forward"));
  const std::string tableError =
      "/methods/forward/graph_module/graph/tensor_values/v4990/sizes/1: tensor 'v4990' has negative size -2 in dim 1";
  const std::string nodeError = "/methods/forward/graph_module/graph/nodes/3 (v3)/inputs/0: uses 'v9' before it is "
                                "defined (argument 'self'; graph not in topological order or value missing)";
  ExportedProgram table = chain();
  table.graph.tensorValues.find("v4990")->sizes[1] = SymInt::of(-2);
  ExportedProgram node = chain();
  node.graph.nodes[3].inputs[0].arg = T("v9");
  ExportedProgram both = table;
  both.graph.nodes[3].inputs[0].arg = T("v9");
  for (int round = 0; round < 20; ++round) {
    CHECK(errorOf([&] { verifyMethodStructure(table, "forward"); }) == tableError);
    CHECK(errorOf([&] { verifyMethodStructure(node, "forward"); }) == nodeError);
    CHECK(errorOf([&] { verifyMethodStructure(both, "forward"); }) == tableError);
  }
}
