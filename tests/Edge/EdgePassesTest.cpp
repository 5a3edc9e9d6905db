//===- tests/Edge/EdgePassesTest.cpp - to_edge passes and the pipeline ----===//
//
// scalar-to-tensor (lifted constants and their placement), to-edge-ops
// (targets and torch.fx-style names), dim-order-ops, debug handles, the
// core-ATen check with its --allow-non-core escape hatch, and the whole
// toEdge pipeline on a small graph.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <sstream>

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

std::vector<std::string> inputNames(const ExportedProgram &ep) {
  std::vector<std::string> names;
  for (const auto &a : ep.graph.inputs) names.push_back(a.name);
  return names;
}

std::vector<std::string> outputNames(const Graph &g) {
  std::vector<std::string> names;
  for (const auto &n : g.nodes) names.push_back(n.outputs.empty() ? "" : n.displayName());
  return names;
}

} // namespace

TEST_CASE("scalar-to-tensor lifts scalars in Tensor positions", "[edge][scalar]") {
  GraphBuilder b;
  b.param("p_w", "w", F32, {3});
  b.input("x", F32, {3});
  b.aten("add.Tensor", {pos("self", T("x")), pos("other", Argument::real(1.0))}, "add", F32, {3});
  b.aten("mul.Tensor", {pos("self", T("add")), pos("other", Argument::integer(2))}, "mul", F32, {3});
  // add.Scalar takes a Scalar: nothing to lift.
  b.aten("add.Scalar", {pos("self", T("mul")), pos("other", Argument::real(3.0))}, "add_1", F32, {3});
  b.aten("mul.Tensor", {pos("self", T("add_1")), pos("other", T("p_w"))}, "mul_1", F32, {3});
  b.output("mul_1");
  Program p = programOf(b.ep);
  edge::scalarToTensor(p);
  const ExportedProgram &ep = methodOf(p);

  // Lifted constants go after the parameter and before the user input.
  CHECK(inputNames(ep) == Names{"p_w", "_lifted_tensor_constant0", "_lifted_tensor_constant1", "x"});
  REQUIRE(ep.signature.inputSpecs.size() == 4);
  CHECK(ep.signature.inputSpecs[1].kind == InputKind::TensorConstant);
  CHECK(ep.signature.inputSpecs[1].target == "_lifted_tensor_constant0");
  CHECK(ep.signature.inputSpecs[1].arg.name == "_lifted_tensor_constant0");
  CHECK(ep.signature.inputSpecs[3].kind == InputKind::UserInput);

  CHECK(arg(ep.graph.nodes[0], "other").name == "_lifted_tensor_constant0");
  CHECK(arg(ep.graph.nodes[1], "other").name == "_lifted_tensor_constant1");
  CHECK(arg(ep.graph.nodes[2], "other").kind == ArgKind::Float);

  const ConstantTensor *c0 = p.constants.find("_lifted_tensor_constant0");
  REQUIRE(c0);
  CHECK(c0->dtype == ScalarType::Float);
  CHECK(c0->sizes.empty());
  REQUIRE(c0->data.inlineBytes);
  CHECK(*c0->data.inlineBytes == std::string("\x00\x00\x80\x3f", 4)); // 1.0f little-endian
  CHECK(c0->data.length == 4);
  // An int next to a float32 tensor takes part as float32 (PyTorch's wrapped-number rule).
  const ConstantTensor *c1 = p.constants.find("_lifted_tensor_constant1");
  REQUIRE(c1);
  CHECK(c1->dtype == ScalarType::Float);
  CHECK(*c1->data.inlineBytes == std::string("\x00\x00\x00\x40", 4)); // 2.0f
  const TensorMeta *meta = ep.graph.tensorValues.find("_lifted_tensor_constant0");
  REQUIRE(meta);
  CHECK(meta->sizes.empty());
  CHECK(meta->dtype == ScalarType::Float);
  CHECK_NOTHROW(verifyProgram(p, Stage::Aten));
}

TEST_CASE("scalar-to-tensor skips names already taken", "[edge][scalar]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  b.aten("add.Tensor", {pos("self", T("x")), pos("other", Argument::boolean(true))}, "add", F32, {3});
  b.output("add");
  Program p = programOf(b.ep);
  p.constants.set("_lifted_tensor_constant0", ConstantTensor{});
  edge::scalarToTensor(p);
  const ConstantTensor *c = p.constants.find("_lifted_tensor_constant1");
  REQUIRE(c);
  CHECK(c->dtype == ScalarType::Float); // True next to a float32 tensor is 1.0f
  CHECK(*c->data.inlineBytes == std::string("\x00\x00\x80\x3f", 4));
  CHECK(inputNames(methodOf(p)) == Names{"_lifted_tensor_constant1", "x"});
}

TEST_CASE("scalar-to-tensor lifts a number in the dtype the op computes in", "[edge][scalar]") {
  GraphBuilder b;
  b.input("i", ScalarType::Int, {3});
  b.input("m", ScalarType::Bool, {3});
  // int32 * 2 stays int32; int32 * 0.5 computes in float32; bool * 3 in int64.
  b.aten("mul.Tensor", {pos("self", T("i")), pos("other", Argument::integer(2))}, "a", ScalarType::Int, {3});
  b.aten("mul.Tensor", {pos("self", T("i")), pos("other", Argument::real(0.5))}, "b", F32, {3});
  b.aten("mul.Tensor", {pos("self", T("m")), pos("other", Argument::integer(3))}, "c", ScalarType::Long, {3});
  b.output("a");
  Program p = programOf(b.ep);
  edge::scalarToTensor(p);
  const ConstantTensor *a = p.constants.find("_lifted_tensor_constant0");
  const ConstantTensor *f = p.constants.find("_lifted_tensor_constant1");
  const ConstantTensor *l = p.constants.find("_lifted_tensor_constant2");
  REQUIRE((a && f && l));
  CHECK(a->dtype == ScalarType::Int);
  CHECK(*a->data.inlineBytes == std::string("\x02\0\0\0", 4));
  CHECK(f->dtype == ScalarType::Float);
  CHECK(l->dtype == ScalarType::Long);
}

TEST_CASE("to-edge-ops renames targets and nodes", "[edge][naming]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  b.aten("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "add", F32, {3});
  b.aten("add.Tensor", {pos("self", T("add")), pos("other", T("x"))}, "add_1", F32, {3});
  b.aten("relu.default", {pos("self", T("add_1"))}, "relu", F32, {3});
  b.output("relu");
  Program p = programOf(b.ep);
  edge::toEdgeOps(p);
  const ExportedProgram &ep = methodOf(p);
  CHECK(ep.graph.nodes[0].target == "executorch.exir.dialects.edge.ops.aten.add.Tensor");
  CHECK(ep.graph.nodes[2].target == "executorch.exir.dialects.edge.ops.aten.relu.default");
  CHECK(outputNames(ep.graph) == Names{"aten_add_tensor", "aten_add_tensor_1", "aten_relu_default"});
  CHECK(arg(ep.graph.nodes[1], "self").name == "aten_add_tensor");
  CHECK(arg(ep.graph.nodes[2], "self").name == "aten_add_tensor_1");
  CHECK(ep.graph.outputs[0].name == "aten_relu_default");
  CHECK(ep.signature.outputSpecs[0].arg.name == "aten_relu_default");
  // tensor_values keeps its order with the new keys.
  std::vector<std::string> keys;
  for (const auto &[k, v] : ep.graph.tensorValues) keys.push_back(k);
  CHECK(keys == Names{"x", "aten_add_tensor", "aten_add_tensor_1", "aten_relu_default"});
  p.stage = Stage::Edge;
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
}

TEST_CASE("to-edge-ops renames every use in a graph big enough to be swept on two threads", "[edge][naming]") {
  // Past 4096 nodes the uses are renamed by two threads, each over half the
  // nodes: every use must still name its value's new name. Each node reads
  // the node before it, one 100 back, and the graph input.
  constexpr int kNodes = 6000;
  GraphBuilder b;
  b.input("x", F32, {3});
  auto old = [](int i) { return i < 0 ? std::string("x") : "add_" + std::to_string(i); };
  for (int i = 0; i < kNodes; ++i)
    b.aten("add.Tensor", {pos("self", T(old(i - 1))), pos("other", T(old(i >= 100 ? i - 100 : -1)))}, old(i), F32,
           {3});
  b.output(old(kNodes - 1));
  Program p = programOf(b.ep);
  edge::toEdgeOps(p);
  const Graph &g = graphOf(p);
  auto renamed = [](int i) {
    return i < 0 ? std::string("x") : i == 0 ? std::string("aten_add_tensor") : "aten_add_tensor_" + std::to_string(i);
  };
  int wrong = 0;
  for (int i = 0; i < kNodes; ++i) {
    const Node &n = g.nodes[size_t(i)];
    wrong += n.outputs[0].name != renamed(i);
    wrong += arg(n, "self").name != renamed(i - 1);
    wrong += arg(n, "other").name != renamed(i >= 100 ? i - 100 : -1);
  }
  CHECK(wrong == 0);
  CHECK(g.outputs[0].name == renamed(kNodes - 1));
  p.stage = Stage::Edge;
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));
}

TEST_CASE("to-edge-ops keeps sym ops and higher-order ops", "[edge][naming]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  b.symSize("x", 0, "sym_size_int");
  b.call("torch.ops.higher_order.executorch_call_delegate", {pos("lowered", Argument::string("lowered_module_0")),
                                                             pos("x", T("x"))},
         "delegate", F32, {3});
  b.aten("neg.default", {pos("self", T("delegate"))}, "neg", F32, {3});
  Program p = programOf(b.ep);
  edge::toEdgeOps(p);
  const Graph &g = graphOf(p);
  CHECK(g.nodes[0].target == "torch.ops.aten.sym_size.int");
  CHECK(g.nodes[1].target == "torch.ops.higher_order.executorch_call_delegate");
  CHECK(g.nodes[1].outputs[0].name == "delegate");
  CHECK(g.nodes[2].target == "executorch.exir.dialects.edge.ops.aten.neg.default");
  CHECK(g.nodes[2].outputs[0].name == "aten_neg_default");
}

namespace {
/// An edge program with one memory-format op on a rank-4 input.
Program memoryFormatProgram(const std::string &op, std::optional<int64_t> memoryFormat,
                            const std::vector<int64_t> &inputStrides = {}) {
  GraphBuilder b;
  b.input("x", F32, {1, 3, 4, 4});
  if (!inputStrides.empty()) {
    auto &strides = b.ep.graph.tensorValues.find("x")->strides;
    for (size_t i = 0; i < strides.size(); ++i) strides[i] = SymInt::of(inputStrides[i]);
  }
  std::vector<NamedArgument> args = {pos("self", T("x"))};
  if (op == "_to_copy.default") args.push_back(kw("dtype", Argument::scalarType(ScalarType::Half)));
  if (memoryFormat) {
    Argument mf;
    mf.kind = ArgKind::MemoryFormat;
    mf.intValue = *memoryFormat;
    args.push_back(kw("memory_format", mf));
  }
  b.edge(op, args, "out", F32, {1, 3, 4, 4});
  b.output("out");
  return programOf(b.ep, Stage::Edge);
}
} // namespace

TEST_CASE("dim-order-ops: _to_copy with channels_last -> dim_order [0, 2, 3, 1]", "[edge][dimorder]") {
  Program p = memoryFormatProgram("_to_copy.default", kMemoryFormatChannelsLast);
  edge::dimOrderOps(p);
  const Node &n = graphOf(p).nodes.at(0);
  CHECK(n.target == "executorch.exir.dialects.edge.ops.dim_order_ops._to_dim_order_copy.default");
  CHECK(argNames(n) == Names{"self", "dtype", "dim_order"});
  CHECK(arg(n, "dim_order").ints == Ints{0, 2, 3, 1});
  CHECK(n.input("dim_order")->kind == ArgumentPassing::Keyword);
  CHECK(arg(n, "dtype").intValue == int64_t(ScalarType::Half));
}

TEST_CASE("dim-order-ops: contiguous, preserve and absent formats", "[edge][dimorder]") {
  Program contiguous = memoryFormatProgram("clone.default", kMemoryFormatContiguous, {48, 1, 12, 3});
  edge::dimOrderOps(contiguous);
  CHECK(graphOf(contiguous).nodes[0].target ==
        "executorch.exir.dialects.edge.ops.dim_order_ops._clone_dim_order.default");
  CHECK(arg(graphOf(contiguous).nodes[0], "dim_order").ints == Ints{0, 1, 2, 3});

  // No format: the input's own order, read from its (channels-last) strides.
  Program absent = memoryFormatProgram("clone.default", std::nullopt, {48, 1, 12, 3});
  edge::dimOrderOps(absent);
  CHECK(arg(graphOf(absent).nodes[0], "dim_order").ints == Ints{0, 2, 3, 1});

  Program preserve = memoryFormatProgram("_to_copy.default", kMemoryFormatPreserve);
  edge::dimOrderOps(preserve);
  CHECK(arg(graphOf(preserve).nodes[0], "dim_order").ints == Ints{0, 1, 2, 3});
}

TEST_CASE("dim-order-ops: channels_last on a rank-3 tensor is refused", "[edge][dimorder]") {
  GraphBuilder b;
  b.input("x", F32, {3, 4, 4});
  Argument mf;
  mf.kind = ArgKind::MemoryFormat;
  mf.intValue = kMemoryFormatChannelsLast;
  b.edge("_to_copy.default", {pos("self", T("x")), kw("memory_format", mf)}, "out", F32, {3, 4, 4});
  b.output("out");
  Program p = programOf(b.ep, Stage::Edge);
  CHECK(errorOf([&] { edge::dimOrderOps(p); }) ==
        "node out: memory_format 2 cannot be expressed as a dim order for rank 3");
}

TEST_CASE("debug handles count placeholders first and keep existing ones", "[edge][debug]") {
  GraphBuilder b;
  b.input("x", F32, {3}).input("y", F32, {3});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("y"))}, "a", F32, {3});
  b.edge("sin.default", {pos("self", T("a"))}, "s", F32, {3}).metadata.set("debug_handle", "42");
  b.edge("neg.default", {pos("self", T("s"))}, "n", F32, {3});
  b.output("n");
  Program p = programOf(b.ep, Stage::Edge);
  edge::generateDebugHandles(p);
  const Graph &g = graphOf(p);
  CHECK(*g.nodes[0].metadata.find("debug_handle") == "3");
  CHECK(*g.nodes[1].metadata.find("debug_handle") == "42");
  CHECK(*g.nodes[2].metadata.find("debug_handle") == "5");
  // The handles' key is one record, not one string per node.
  CHECK(g.nodes[0].metadata.findItem("debug_handle")->first.sharesRecordWith(
      g.nodes[2].metadata.findItem("debug_handle")->first));
}

TEST_CASE("checkAtenDialect refuses non-core and unknown ops", "[edge][core]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  b.aten("rand_like.default", {pos("self", T("x"))}, "rand_like", F32, {3})
      .metadata.set("stack_trace", "  File \"/m.py\", line 3, in forward\n    return self.act(x)\n");
  b.output("rand_like");
  Program p = programOf(b.ep);
  CHECK(errorOf([&] { edge::checkAtenDialect(p, {}); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (rand_like): operator aten::rand_like is not core ATen and has no "
        "decomposition (at File \"/m.py\", line 3, in forward return self.act(x) ); hint: decompose it before "
        "export, or pass --allow-non-core aten::rand_like if your runtime has a kernel for it");

  // --allow-non-core keeps it and records what was allowed.
  CHECK_NOTHROW(edge::checkAtenDialect(p, {"aten::rand_like"}));
  const std::string *allowed = methodOf(p).metadata.find("exir_allowed_non_core");
  REQUIRE(allowed);
  CHECK(*allowed == "aten::rand_like");

  Program q = programOf(b.ep);
  graphOf(q).nodes[0].target = "torch.ops.aten.frobnicate.default";
  graphOf(q).nodes[0].metadata.erase("stack_trace");
  CHECK(errorOf([&] { edge::checkAtenDialect(q, {}); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (rand_like): operator aten::frobnicate is unknown to the operator "
        "table; hint: pass --allow-non-core aten::frobnicate to keep it as it is");

  graphOf(q).nodes[0].target = "my_lib.my_function";
  CHECK(errorOf([&] { edge::checkAtenDialect(q, {}); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (rand_like): unknown call target 'my_lib.my_function'");

  // Core ops and custom namespaces pass.
  graphOf(q).nodes[0].target = "torch.ops.aten.mul.Tensor";
  CHECK_NOTHROW(edge::checkAtenDialect(q, {}));
  graphOf(q).nodes[0].target = "torch.ops.my_ns.fused.default";
  CHECK_NOTHROW(edge::checkAtenDialect(q, {}));
  CHECK(methodOf(q).metadata.find("exir_allowed_non_core") == nullptr);
}

TEST_CASE("toEdge lowers a small model end to end", "[edge][pipeline]") {
  GraphBuilder b;
  b.param("p_weight", "fc.weight", F32, {4, 3}).param("p_bias", "fc.bias", F32, {4});
  b.input("x", F32, {2, 3});
  b.aten("linear.default", {pos("input", T("x")), pos("weight", T("p_weight")), pos("bias", T("p_bias"))}, "linear",
         F32, {2, 4});
  b.aten("relu.default", {pos("self", T("linear"))}, "relu", F32, {2, 4});
  b.aten("add.Tensor", {pos("self", T("relu")), pos("other", Argument::real(1.0))}, "add", F32, {2, 4});
  b.output("add");
  Program p = programOf(b.ep);
  edge::EdgeOptions options;
  edge::toEdge(p, options);

  CHECK(p.stage == Stage::Edge);
  const ExportedProgram &ep = methodOf(p);
  CHECK(inputNames(ep) == Names{"p_weight", "p_bias", "_lifted_tensor_constant0", "x"});
  std::vector<std::string> targets;
  for (const auto &n : ep.graph.nodes) targets.push_back(n.target);
  CHECK(targets == Names{"executorch.exir.dialects.edge.ops.aten.permute_copy.default",
                         "executorch.exir.dialects.edge.ops.aten.addmm.default",
                         "executorch.exir.dialects.edge.ops.aten.relu.default",
                         "executorch.exir.dialects.edge.ops.aten.add.Tensor"});
  CHECK(outputNames(ep.graph) ==
        Names{"aten_permute_copy_default", "aten_addmm_default", "aten_relu_default", "aten_add_tensor"});
  CHECK(arg(ep.graph.nodes[1], "mat2").name == "aten_permute_copy_default");
  CHECK(arg(ep.graph.nodes[3], "other").name == "_lifted_tensor_constant0");
  CHECK(ep.signature.outputSpecs[0].arg.name == "aten_add_tensor");
  std::vector<std::string> handles;
  for (const auto &n : ep.graph.nodes) handles.push_back(n.metadata.find("debug_handle")->str());
  CHECK(handles == Names{"5", "6", "7", "8"});
  CHECK(p.constants.contains("_lifted_tensor_constant0"));
  CHECK_NOTHROW(verifyProgram(p, Stage::Edge));

  // to_edge needs an ATen program.
  CHECK(errorOf([&] { edge::toEdge(p, options); }) == "to_edge expects an ATen-dialect program, got stage 'edge'");
}

TEST_CASE("toEdge stops at a non-core op and names the check", "[edge][pipeline]") {
  GraphBuilder b;
  b.input("x", F32, {3});
  b.aten("rand_like.default", {pos("self", T("x"))}, "rand_like", F32, {3});
  b.output("rand_like");
  Program p = programOf(b.ep);
  edge::EdgeOptions options;
  CHECK_THAT(errorOf([&] { edge::toEdge(p, options); }),
             Catch::EndsWith("if your runtime has a kernel for it [pass check-aten-dialect]"));
  // Allowed, it is kept as an edge op.
  Program q = programOf(b.ep);
  options.allowNonCore = {"aten::rand_like"};
  edge::toEdge(q, options);
  CHECK(graphOf(q).nodes.at(0).target == "executorch.exir.dialects.edge.ops.aten.rand_like.default");
  CHECK(*methodOf(q).metadata.find("exir_allowed_non_core") == "aten::rand_like");
}

TEST_CASE("the edge pass registry follows Passes.def", "[edge][pipeline]") {
  std::vector<std::string> names;
  for (const auto &info : edge::edgePassRegistry()) names.push_back(info.name);
  CHECK(names == Names{"functionalize", "remove-asserts", "decompose-rules", "decompose-einsum", "decompose-rnn", "decompose-convolution", "decompose-shape-ops", "decompose-activations",
                       "decompose-batch-norm", "replace-view-ops", "normalize-layouts", "optional-tensor-lists", "scalar-to-tensor", "to-edge-ops", "dim-order-ops", "fold-constants",
                       "debug-handles"});
  auto pass = edge::edgePassRegistry().front().create();
  CHECK(pass->name() == "functionalize");
}

namespace {
/// The passes toEdge ran on `p`, in order, as --print-after all shows them.
Names passesToEdgeRan(Program p, edge::EdgeOptions options) {
  std::ostringstream printed;
  options.passManager.printAfter = {"all"};
  options.passManager.printStream = &printed;
  edge::toEdge(p, options);
  Names ran;
  std::istringstream lines(printed.str());
  const std::string prefix = "// ----- IR after ";
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix, 0) == 0) ran.push_back(line.substr(prefix.size(), line.find(" -----", prefix.size()) - prefix.size()));
  return ran;
}
} // namespace

TEST_CASE("toEdge runs toEdgePassOrder: Passes.def's order plus the pipeline-only steps", "[edge][pipeline]") {
  Names order = edge::toEdgePassOrder();
  CHECK(order == Names{"functionalize", "remove-asserts", "decompose-rules", "functionalize", "decompose-einsum",
                       "decompose-rnn", "decompose-convolution", "decompose-shape-ops", "decompose-activations",
                       "decompose-batch-norm", "check-aten-dialect", "replace-view-ops", "normalize-layouts",
                       "optional-tensor-lists", "scalar-to-tensor", "to-edge-ops", "dim-order-ops", "fold-constants",
                       "debug-handles"});
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.aten("relu.default", {pos("self", Argument::tensor("x"))}, "y", F32, {2, 3});
  b.output("y");
  edge::EdgeOptions options;
  CHECK(passesToEdgeRan(programOf(b.ep), options) == order);
  // Options only take passes out.
  options.skipDimOrder = true;
  options.foldConstants = edge::FoldConstantsMode::Never;
  Names fewer;
  for (const auto &name : order)
    if (name != "dim-order-ops" && name != "fold-constants") fewer.push_back(name);
  CHECK(passesToEdgeRan(programOf(b.ep), options) == fewer);
}

TEST_CASE("to-edge-ops and the edge verifier reach into cond branches", "[edge][cond]") {
  Program p = atenCondProgram();
  REQUIRE_NOTHROW(verifyProgram(p, Stage::Aten));
  edge::toEdgeOps(p);
  p.stage = Stage::Edge;
  const Node &cond = graphOf(p).nodes.back();
  CHECK(cond.target == "torch.ops.higher_order.cond");
  CHECK(cond.inputs[1].arg.graph()->nodes[0].target == "executorch.exir.dialects.edge.ops.aten.relu.default");
  CHECK(cond.inputs[2].arg.graph()->nodes[0].target == "executorch.exir.dialects.edge.ops.aten.sigmoid.default");
  edge::DtypeRules rules = edge::DtypeRules::load("");
  CHECK_NOTHROW(edge::verifyEdgeProgram(p, rules));
  // sigmoid of an int tensor returning int breaks edge.yaml, inside the false branch too.
  Graph &f = *graphOf(p).nodes.back().inputs[2].arg.graph();
  f.tensorValues.find("x")->dtype = ScalarType::Int;
  f.tensorValues.find("sigmoid")->dtype = ScalarType::Int;
  CHECK_THAT(errorOf([&] { edge::verifyEdgeProgram(p, rules); }),
             Catch::StartsWith("/methods/forward/graph_module/graph/nodes/2/inputs/2/arg/as_graph/graph/nodes/0 "
                               "(sigmoid): dtype constraint violated: aten::sigmoid: self=Int, __ret_0=Int"));
}

TEST_CASE("edge verifier on a big graph: dtype rules beside the structure, structural errors first",
          "[edge][verifier]") {
  // 5000 nodes: past the size at which the dtype rules are checked on a second thread.
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  std::string last = "x";
  for (int i = 0; i < 5000; ++i) {
    std::string name = "s" + std::to_string(i);
    b.edge("sigmoid.default", {pos("self", T(last))}, name, F32, {2, 3});
    last = name;
  }
  b.output(last);
  Program p = programOf(b.ep, Stage::Edge);
  edge::DtypeRules rules = edge::DtypeRules::load("");
  CHECK_NOTHROW(edge::verifyEdgeProgram(p, rules));
  // A dtype violation alone is reported, with its node.
  Graph &g = graphOf(p);
  REQUIRE(g.tensorValues.find("s9"));
  g.tensorValues.find("s9")->dtype = ScalarType::Int; // sigmoid: a float in, an int out
  CHECK_THAT(errorOf([&] { edge::verifyEdgeProgram(p, rules); }),
             Catch::StartsWith("/methods/forward/graph_module/graph/nodes/9 (s9): dtype constraint violated: "
                               "aten::sigmoid: self=Float, __ret_0=Int"));
  // With a structural error as well (later in node order), the structural one
  // is reported, as a sequential check reports it.
  g.nodes[4000].inputs[0].arg.name = "undefined_value";
  CHECK_THAT(errorOf([&] { edge::verifyEdgeProgram(p, rules); }),
             Catch::Contains("nodes/4000") && Catch::Contains("uses 'undefined_value' before it is defined"));
}

TEST_CASE("normalize-layouts: outputs follow their first input or become contiguous", "[edge][layout]") {
  GraphBuilder b;
  b.input("x", F32, {2, 3});
  b.input("c", F32, {1, 3, 2, 2});
  // eager: x.permute(1, 0) + 1 keeps the view's strides [1, 3]; permute_copy is contiguous.
  b.aten("permute_copy.default", {pos("self", T("x")), pos("dims", Argument::ints_({1, 0}))}, "p", F32, {3, 2});
  b.aten("add.Scalar", {pos("self", T("p")), pos("other", Argument::real(1.0))}, "a", F32, {3, 2});
  b.ep.graph.tensorValues.find("a")->strides = {SymInt::of(1), SymInt::of(3)};
  // channels-last asked for explicitly, then an elementwise op on it: both stay channels-last.
  Argument channelsLast;
  channelsLast.kind = ArgKind::MemoryFormat;
  channelsLast.intValue = kMemoryFormatChannelsLast;
  b.aten("_to_copy.default", {pos("self", T("c")), kw("memory_format", channelsLast)}, "cl", F32, {1, 3, 2, 2});
  b.aten("mul.Scalar", {pos("self", T("cl")), pos("other", Argument::real(2.0))}, "m", F32, {1, 3, 2, 2});
  const std::vector<SymInt> nhwc = {SymInt::of(12), SymInt::of(1), SymInt::of(6), SymInt::of(3)};
  b.ep.graph.tensorValues.find("cl")->strides = nhwc;
  b.ep.graph.tensorValues.find("m")->strides = nhwc;
  b.output("a").output("m");
  Program p = programOf(b.ep);
  edge::normalizeLayouts(p);
  const Graph &g = graphOf(p);
  CHECK(g.tensorValues.find("a")->dimOrder() == std::vector<int64_t>{0, 1});
  CHECK(g.tensorValues.find("cl")->dimOrder() == std::vector<int64_t>{0, 2, 3, 1});
  CHECK(g.tensorValues.find("m")->dimOrder() == std::vector<int64_t>{0, 2, 3, 1});
}
