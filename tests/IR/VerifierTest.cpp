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
