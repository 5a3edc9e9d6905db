//===- tests/Partition/LoweringTest.cpp - The three delegation flows ------===//
//
// Flow 3 on the seed's Foo (the printed structure: who calls what with which
// inputs), owned constants leaving the signature, tag rules, flow 1 on several
// methods, flow 2 on the seed's ComposedModule including signature checks,
// the delegate verifier catching a tampered call, and blob storage (inline
// vs. sidecar, one copy per distinct blob).
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"
#include "Partition/Lowering.h"
#include "Partition/LoweringDetail.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/Hash.h"
#include "Support/FileIO.h"
#include "../IR/GraphBuilder.h"

#include "PartitionTestUtil.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <set>
#include <unistd.h>

using namespace exir;
using namespace exir::partition;
using irtest::GraphBuilder;
using irtest::pos;
using irtest::T;
using ST = ScalarType;

namespace {

using partitiontest::edgeProgramOf;

std::vector<std::string> tensorArgs(const Node &n) {
  std::vector<std::string> out;
  for (const auto &in : n.inputs) in.arg.collectTensorNames(out);
  return out;
}

std::vector<std::string> inputNames(const ExportedProgram &ep) {
  std::vector<std::string> out;
  for (const auto &in : ep.graph.inputs) out.push_back(in.name);
  return out;
}

std::vector<std::string> outputNames(const Node &n) {
  std::vector<std::string> out;
  for (const auto &o : n.outputs) o.collectTensorNames(out);
  return out;
}

/// A temporary directory removed at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    path = std::filesystem::temp_directory_path() / ("exir-partition-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

} // namespace

TEST_CASE("Foo with AddMulPartitionerDemo: the seed's delegated program", "[lowering]") {
  Program p = edgeProgramOf("foo.pt2");
  LoweringReport report;
  partitionProgram(p, *makeAddMulPartitionerDemo(), {}, report);
  CHECK(p.stage == Stage::Delegated);
  const Graph &g = p.methods.find("forward")->program.graph;
  REQUIRE(g.nodes.size() == 3);
  const Node &first = g.nodes[0], &sub = g.nodes[1], &second = g.nodes[2];
  CHECK(first.target == kDelegateTarget);
  CHECK(first.inputs[0].arg.name == "lowered_module_1");
  CHECK(first.name == std::optional<std::string>("executorch_call_delegate_1"));
  CHECK(tensorArgs(first) == std::vector<std::string>{"a", "x", "b"});
  CHECK(outputNames(first) == std::vector<std::string>{"getitem_1"});
  CHECK(tensorArgs(sub) == std::vector<std::string>{"getitem_1", "a"});
  CHECK(second.inputs[0].arg.name == "lowered_module_0");
  CHECK(second.name == std::optional<std::string>("executorch_call_delegate"));
  CHECK(tensorArgs(second) == std::vector<std::string>{"aten_sub_tensor", "x", "b"});
  CHECK(outputNames(second) == std::vector<std::string>{"getitem"});
  CHECK(g.outputs[0].name == "getitem");
  CHECK(p.methods.find("forward")->program.signature.outputSpecs[0].arg.name == "getitem");
  // Values inside the delegates are gone from the parent; results have metadata.
  CHECK_FALSE(g.tensorValues.contains("aten_mm_default"));
  CHECK(g.tensorValues.contains("getitem_1"));
  // Debug handles: the calls get the next free handles.
  CHECK(*second.metadata.find("debug_handle") == "9");
  CHECK(*first.metadata.find("debug_handle") == "10");

  const Delegate &d0 = *p.delegates.find("lowered_module_0");
  CHECK(inputNames(*d0.original) == std::vector<std::string>{"aten_sub_tensor", "x", "b"});
  CHECK(d0.original->graph.outputs[0].name == "aten_add_tensor_1");
  CHECK(d0.compileSpecs == std::vector<CompileSpec>{{"max_value", "\x04"}});
  CHECK(*d0.processed.inlineBytes ==
        "2version:0#op:demo::aten.mm.default, numel:4, dtype:torch.float32<debug_handle>7#"
        "op:demo::aten.add.Tensor, numel:4, dtype:torch.float32<debug_handle>8#");
  const Delegate &d1 = *p.delegates.find("lowered_module_1");
  CHECK(inputNames(*d1.original) == std::vector<std::string>{"a", "x", "b"});
  CHECK(report.delegatesCreated.size() == 2);
  verifyDelegatedProgram(p);
}

TEST_CASE("owned constants leave the signature and stay in the table", "[lowering]") {
  GraphBuilder b;
  b.param("p_w", "w", ST::Float, {2}).input("x", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("p_w"))}, "a", ST::Float, {2});
  b.edge("mul.Tensor", {pos("self", T("a")), pos("other", T("x"))}, "m", ST::Float, {2});
  b.output("m");
  Program p = irtest::programOf(b.ep, Stage::Edge);
  p.constants.set("w", ConstantTensor{ST::Float, {2}, {1}, 0, DataRef{"", 0, 8, std::string(8, '\0'), "", {}, {}}});
  LoweringReport report;
  partitionProgram(p, *makeNodeListPartitioner("a", DelegationSpec{"BackendWithCompilerDemo", {}, {}}), {}, report);
  const ExportedProgram &ep = p.methods.find("forward")->program;
  CHECK(inputNames(ep) == std::vector<std::string>{"x"});
  REQUIRE(ep.signature.inputSpecs.size() == 1);
  CHECK(ep.signature.inputSpecs[0].kind == InputKind::UserInput);
  CHECK(tensorArgs(ep.graph.nodes[0]) == std::vector<std::string>{"x"});
  const ExportedProgram &original = *p.delegates.find("lowered_module_0")->original;
  CHECK(inputNames(original) == std::vector<std::string>{"p_w", "x"});
  CHECK(original.signature.inputSpecs[0].kind == InputKind::Parameter);
  CHECK(original.signature.inputSpecs[0].target == "w");
  CHECK(p.constants.contains("w"));
  verifyDelegatedProgram(p);
  // The delegate-owned constant must exist in the table.
  p.constants.erase("w");
  CHECK(irtest::errorOf([&] { verifyDelegatedProgram(p); }).find("owns constant 'w'") != std::string::npos);
}

TEST_CASE("a constant shared with an untagged node stays a top-level input", "[lowering]") {
  GraphBuilder b;
  b.param("p_w", "w", ST::Float, {2}).input("x", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("p_w"))}, "a", ST::Float, {2});
  b.edge("mul.Tensor", {pos("self", T("a")), pos("other", T("p_w"))}, "m", ST::Float, {2});
  b.output("m");
  Program p = irtest::programOf(b.ep, Stage::Edge);
  LoweringReport report;
  partitionProgram(p, *makeNodeListPartitioner("a", DelegationSpec{"BackendWithCompilerDemo", {}, {}}), {}, report);
  const ExportedProgram &ep = p.methods.find("forward")->program;
  CHECK(inputNames(ep) == std::vector<std::string>{"p_w", "x"});
  CHECK(tensorArgs(ep.graph.nodes[0]) == std::vector<std::string>{"x", "p_w"});
}

TEST_CASE("a partition whose outputs are used between its nodes moves the users after the call", "[lowering]") {
  // a = x + x; u = a * x (not delegated, but between); c = a + x.  {a, c} is convex.
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "a", ST::Float, {2});
  b.edge("mul.Tensor", {pos("self", T("a")), pos("other", T("x"))}, "u", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("a")), pos("other", T("x"))}, "c", ST::Float, {2});
  b.output("u").output("c");
  Program p = irtest::programOf(b.ep, Stage::Edge);
  LoweringReport report;
  partitionProgram(p, *makeNodeListPartitioner("a,c", DelegationSpec{"BackendWithCompilerDemo", {}, {}}), {}, report);
  const Graph &g = p.methods.find("forward")->program.graph;
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].target == kDelegateTarget);
  CHECK(outputNames(g.nodes[0]) == std::vector<std::string>{"getitem", "getitem_1"});
  CHECK(tensorArgs(g.nodes[1]) == std::vector<std::string>{"getitem", "x"});
  CHECK(g.outputs[1].name == "getitem_1");
  verifyDelegatedProgram(p);
}

TEST_CASE("tag rules", "[lowering]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "a", ST::Float, {2});
  b.output("a");
  Program p = irtest::programOf(b.ep, Stage::Edge);

  struct Fixed : Partitioner {
    PartitionResult result;
    std::string name() const override { return "fixed"; }
    PartitionResult partition(const ExportedProgram &) const override { return result; }
  } fixed;
  fixed.result.nodeTags = {"tagX"};
  fixed.result.inputTags = {""};
  LoweringReport report;
  CHECK(irtest::errorOf([&] { partitionProgram(p, fixed, {}, report); }) ==
        "method forward, node a: node is tagged 'tagX', which the partitioner gave no backend for");
  fixed.result.partitionTags.set("tagX", DelegationSpec{"BackendWithCompilerDemo", {}, {}});
  fixed.result.inputTags = {"tagX"};
  CHECK(irtest::errorOf([&] { partitionProgram(p, fixed, {}, report); }) ==
        "method forward: graph input 'x' is tagged but only parameters, buffers and constants can be owned by a "
        "delegate");
  fixed.result.inputTags = {""};
  LoweringOptions options;
  options.backendOverride = "Nope";
  CHECK(irtest::errorOf([&] { partitionProgram(p, fixed, options, report); }).find("unknown backend id 'Nope'") == 0);
  options.backendOverride = "ExirSubgraphJson";
  options.compileSpecOverride = std::vector<CompileSpec>{{"k", "v"}};
  partitionProgram(p, fixed, options, report);
  const Delegate &d = *p.delegates.find("lowered_module_0");
  CHECK(d.backendId == "ExirSubgraphJson");
  CHECK(d.compileSpecs == std::vector<CompileSpec>{{"k", "v"}});
}

TEST_CASE("flow 1 on several methods, whole-module refusals", "[lowering]") {
  Program p = edgeProgramOf("lowerable_sin.pt2");
  Method again = *p.methods.find("forward");
  p.methods.set("again", again);
  LoweringReport report;
  lowerWholeProgram(p, "BackendWithCompilerDemo", {CompileSpec{"max_value", "\x04"}}, {}, report);
  CHECK(report.warnings.empty());
  REQUIRE(p.delegates.size() == 2);
  CHECK(p.methods.find("forward")->program.graph.nodes[0].inputs[0].arg.name == "lowered_module_0");
  CHECK(p.methods.find("again")->program.graph.nodes[0].inputs[0].arg.name == "lowered_module_1");
  CHECK(p.delegates.find("lowered_module_0")->processed.sha256 ==
        p.delegates.find("lowered_module_1")->processed.sha256);
  verifyDelegatedProgram(p);

  Program foo = edgeProgramOf("foo.pt2");
  LoweringOptions only;
  only.methods = {"nope"};
  CHECK(irtest::errorOf([&] { lowerWholeProgram(foo, "BackendWithCompilerDemo", {}, only, report); }) ==
        "--method 'nope': the program has no such method");
  CHECK(irtest::errorOf([&] { lowerWholeProgram(foo, "Nope", {}, {}, report); }).find("unknown backend id") == 0);
  // Already delegated methods are not lowered whole again.
  CHECK(irtest::errorOf([&] { lowerWholeProgram(p, "BackendWithCompilerDemo", {}, {}, report); })
            .find("already calls a delegate") != std::string::npos);
}

TEST_CASE("flow 2: ComposedModule gets the lowered sin module", "[lowering]") {
  Program sin = edgeProgramOf("lowerable_sin.pt2");
  LoweringReport report;
  lowerWholeProgram(sin, "BackendWithCompilerDemo", {CompileSpec{"max_value", "\x04"}}, {}, report);
  Program composed = edgeProgramOf("composed.pt2");
  CHECK(irtest::errorOf([&] { verifyDelegatedProgram(composed); }).find("pass --lowered lowered_module_0=FILE") !=
        std::string::npos);
  composeLoweredModule(composed, "lowered_module_0", sin, report);
  CHECK(composed.stage == Stage::Delegated);
  REQUIRE(composed.delegates.size() == 1);
  const Graph &g = composed.methods.find("forward")->program.graph;
  CHECK(g.nodes[0].inputs[0].arg.name == "lowered_module_0");
  CHECK(g.nodes[1].inputs[0].arg.name == "lowered_module_0");
  CHECK(*composed.delegates.find("lowered_module_0")->processed.inlineBytes ==
        "1version:0#op:demo::aten.sin.default, numel:1, dtype:torch.float32<debug_handle>2#");
  verifyDelegatedProgram(composed);
  // Composing the same module again is harmless; unused names are an error.
  CHECK(irtest::errorOf([&] { composeLoweredModule(composed, "lowered_module_7", sin, report); }) ==
        "no executorch_call_delegate in the program calls 'lowered_module_7'");

  // A lowered module whose input shape differs is refused at the call.
  Program wide = sin;
  wide.delegates.find("lowered_module_0")->original->graph.tensorValues.find("x")->sizes = {SymInt::of(4)};
  Program fresh = edgeProgramOf("composed.pt2");
  CHECK(irtest::errorOf([&] { composeLoweredModule(fresh, "lowered_module_0", wide, report); }) ==
        "/methods/forward/graph_module/graph/nodes/0 (executorch_call_delegate): delegate input 0 'x' is f32[1] but "
        "lowered_module_0 expects f32[4] ('x')");
}

TEST_CASE("the delegate verifier checks calls against the original subgraph", "[lowering]") {
  Program p = edgeProgramOf("foo.pt2");
  LoweringReport report;
  partitionProgram(p, *makeAddMulPartitionerDemo(), {}, report);
  Program outputs = p;
  outputs.methods.find("forward")->program.graph.tensorValues.find("getitem")->dtype = ST::Double;
  CHECK(irtest::errorOf([&] { verifyDelegatedProgram(outputs); }).find("delegate output 0 'getitem' is f64[2, 2]") !=
        std::string::npos);
  Program inputs = p;
  inputs.methods.find("forward")->program.graph.nodes[0].inputs.pop_back();
  CHECK(irtest::errorOf([&] { verifyDelegatedProgram(inputs); })
            .find("the call passes 2 inputs but lowered_module_1 takes 3") != std::string::npos);
  Program missing = p;
  missing.delegates.erase("lowered_module_0");
  CHECK(irtest::errorOf([&] { verifyDelegatedProgram(missing); })
            .find("calls lowered module 'lowered_module_0', which the program does not contain") != std::string::npos);
}

TEST_CASE("blob storage: inline when small, one sidecar copy per distinct blob", "[lowering]") {
  TempDir dir;
  std::string out = (dir.path / "two.json").string();
  Program p = edgeProgramOf("foo.pt2");
  Method again = *p.methods.find("forward");
  p.methods.set("again", again);
  LoweringReport report;
  partitionProgram(p, *makeAddMulPartitionerDemo(), {}, report);
  REQUIRE(p.delegates.size() == 4);

  Program inlined = p;
  storeDelegateBlobs(inlined, out, 4096);
  for (const auto &[name, d] : inlined.delegates) {
    CHECK(d.processed.inlineBytes);
    CHECK(d.processed.sha256.empty()); // inline blobs need no digest
  }
  CHECK_FALSE(std::filesystem::exists(out + ".blobs"));

  storeDelegateBlobs(p, out, 0);
  REQUIRE(std::filesystem::exists(out + ".blobs"));
  CHECK(fileSize(out + ".blobs") == 2 * 151);
  std::set<uint64_t> offsets;
  for (const auto &[name, d] : p.delegates) {
    CHECK_FALSE(d.processed.inlineBytes);
    CHECK(std::filesystem::path(d.processed.file).filename() == "two.json.blobs");
    offsets.insert(d.processed.offset);
    std::string bytes = readFileRange(d.processed.file, d.processed.offset, d.processed.length);
    CHECK(bytes.rfind("2version:0#", 0) == 0);
    CHECK(d.processed.sha256 == sha256Hex(bytes));
  }
  CHECK(offsets == std::set<uint64_t>{0, 151});
  // Writing over the same sidecar brings the old blobs back first; their
  // digests are taken again, not carried over.
  for (auto &[name, d] : p.delegates) d.processed.sha256 = std::string(64, '0');
  storeDelegateBlobs(p, out, 0);
  CHECK(fileSize(out + ".blobs") == 2 * 151);
  CHECK(readFileRange(out + ".blobs", 151, 11) == "2version:0#");
  for (const auto &[name, d] : p.delegates)
    CHECK(d.processed.sha256 == sha256Hex(readFileRange(d.processed.file, d.processed.offset, d.processed.length)));
  // Brought back inline by a larger limit, they carry no digest from before.
  Program reinlined = p;
  for (auto &[name, d] : reinlined.delegates) d.processed.sha256 = std::string(64, '0');
  storeDelegateBlobs(reinlined, out, 4096);
  for (const auto &[name, d] : reinlined.delegates) {
    CHECK(d.processed.inlineBytes);
    CHECK(d.processed.sha256.empty());
  }
  // Stdout output keeps blobs where they are.
  Program copy = p;
  storeDelegateBlobs(copy, "-", 0);
  CHECK(copy == p);
}

TEST_CASE("the next debug handle follows the largest numeric one", "[lowering]") {
  Graph g;
  auto handle = [&](const std::string &h) {
    Node n;
    n.target = "aten.relu.default";
    n.metadata.set("debug_handle", h);
    g.nodes.push_back(n);
  };
  CHECK(detail::maxDebugHandle(g) == 0);
  handle("3");
  handle("41");
  CHECK(detail::maxDebugHandle(g) == 41);
  // Forms stoll takes count too (leading blanks, a sign); others do not.
  handle(" 57");
  handle("+60");
  handle("x9");
  handle("");
  CHECK(detail::maxDebugHandle(g) == 60);
  handle("1200");
  CHECK(detail::maxDebugHandle(g) == 1200);
}

TEST_CASE("a large partition's boundary: outside values once each, in order of first use", "[lowering]") {
  // a0 = x0 + x1, a_k = a_{k-1} + x_{k+1}, then d = a_last + x5 (x5 again) and
  // e = d + w (w an owned input): more names than extractSubgraph keeps in a
  // plain list, so its sets switch to an index part way through.
  constexpr int kInputs = 40;
  GraphBuilder b;
  for (int i = 0; i < kInputs; ++i) b.input("x" + std::to_string(i), ST::Float, {2});
  b.input("w", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x0")), pos("other", T("x1"))}, "a0", ST::Float, {2});
  for (int k = 1; k + 1 < kInputs; ++k)
    b.edge("add.Tensor", {pos("self", T("a" + std::to_string(k - 1))), pos("other", T("x" + std::to_string(k + 1)))},
           "a" + std::to_string(k), ST::Float, {2});
  std::string last = "a" + std::to_string(kInputs - 2);
  b.edge("add.Tensor", {pos("self", T(last)), pos("other", T("x5"))}, "d", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("d")), pos("other", T("w"))}, "e", ST::Float, {2});
  b.output("a3").output("e");
  const ExportedProgram &ep = b.ep;
  std::vector<const Node *> nodes;
  for (const auto &n : ep.graph.nodes) nodes.push_back(&n);
  size_t owned = kInputs; // "w"
  detail::Subgraph sub = detail::extractSubgraph(ep, nodes, {owned}, [](const std::string &name) {
    return name == "a3" || name == "e";
  });
  std::vector<std::string> expectedInputs;
  for (int i = 0; i < kInputs; ++i) expectedInputs.push_back("x" + std::to_string(i));
  CHECK(sub.userInputs == expectedInputs);
  CHECK(sub.outputs == std::vector<std::string>{"a3", "e"});
  std::vector<std::string> graphInputs = inputNames(sub.program);
  REQUIRE(graphInputs.size() == kInputs + 1);
  CHECK(graphInputs.front() == "w"); // owned inputs first
  CHECK(sub.program.graph.nodes.size() == ep.graph.nodes.size());
  for (const auto &name : graphInputs) CHECK(sub.program.graph.tensorValues.find(name) != nullptr);
  CHECK(sub.program.graph.tensorValues.find("d") != nullptr);
}
