//===- tests/Partition/SpecPartitionerTest.cpp - Backends described in YAML ===//
//
// What a spec file supports (ops and dtype rows in the edge.yaml DSL), its
// options (sizes, fusion mode, owned constants), and its errors, which carry
// the spec file's name and the right line.
//
//===----------------------------------------------------------------------===//
#include "Partition/Fusion.h"
#include "Partition/PartitionerRegistry.h"
#include "Partition/SpecPartitioner.h"
#include "Support/Error.h"
#include "../IR/GraphBuilder.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::partition;
using irtest::GraphBuilder;
using irtest::pos;
using irtest::T;
using ST = ScalarType;

namespace {

const char *kAddFloat = R"(backend_id: BackendWithCompilerDemo
compile_specs: [max_value=4]
ops:
- func: aten::add.Tensor
  namespace: edge
  inherits: aten::add.Tensor
  type_alias:
    T0: [Float]
  type_constraint:
  - {self: T0, other: T0, __ret_0: T0}
)";

std::string specError(const std::string &text) {
  return irtest::errorOf([&] { parseSpecPartitioner(text, "npu.yaml"); });
}

std::vector<std::string> tagsOf(const PartitionResult &r) { return r.nodeTags; }

} // namespace

TEST_CASE("a node is supported when its op and dtypes match the spec", "[spec]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2}).input("i", ST::Long, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "fadd", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("i")), pos("other", T("i"))}, "iadd", ST::Long, {2});
  b.edge("sub.Tensor", {pos("self", T("fadd")), pos("other", T("x"))}, "fsub", ST::Float, {2});
  b.output("fsub").output("iadd");
  auto partitioner = parseSpecPartitioner(kAddFloat, "npu.yaml");
  CHECK(partitioner->name() == "npu.yaml");
  PartitionResult r = partitioner->partition(b.ep);
  CHECK(tagsOf(r) == std::vector<std::string>{"tag0", "", ""});
  REQUIRE(r.partitionTags.size() == 1);
  const DelegationSpec &spec = *r.partitionTags.find("tag0");
  CHECK(spec.backendId == "BackendWithCompilerDemo");
  CHECK(spec.preprocessorId() == "BackendWithCompilerDemo");
  CHECK(spec.compileSpecs == std::vector<CompileSpec>{{"max_value", "\x04"}});
  // The dependencies it built come with the result, for the lowering to reuse.
  NodeDependencies deps = NodeDependencies::of(b.ep.graph);
  REQUIRE(r.dependencies);
  CHECK(r.dependencies->users == deps.users);
  CHECK(r.dependencies->producers == deps.producers);
  CHECK(r.dependencies->feedsOutput == deps.feedsOutput);
  // So does upstream's demo partitioner (fadd and iadd, fused into one as torch fuses them).
  PartitionResult demo = makeAddMulPartitionerDemo()->partition(b.ep);
  CHECK(tagsOf(demo) == std::vector<std::string>{"tag1", "tag1", ""});
  REQUIRE(demo.dependencies);
  CHECK(demo.dependencies->users == deps.users);
  CHECK(demo.dependencies->producers == deps.producers);
}

TEST_CASE("spec options: preprocess, sizes, fusion, owned constants", "[spec]") {
  GraphBuilder b;
  b.param("p_w", "w", ST::Float, {2}).input("x", ST::Float, {2}).input("y", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("x")), pos("other", T("p_w"))}, "a", ST::Float, {2});
  b.edge("add.Tensor", {pos("self", T("y")), pos("other", T("y"))}, "c", ST::Float, {2});
  b.edge("mul.Tensor", {pos("self", T("a")), pos("other", T("c"))}, "m", ST::Float, {2});
  b.output("m");

  std::string base = std::string("backend_id: MyNpu\npreprocess: ExirSubgraphJson\n") +
                     (std::string(kAddFloat).substr(std::string(kAddFloat).find("ops:")));
  {
    PartitionResult r = parseSpecPartitioner(base, "npu.yaml")->partition(b.ep);
    // Connected fusion (the default): the two adds are not joined.
    CHECK(tagsOf(r) == std::vector<std::string>{"tag1", "tag0", ""});
    REQUIRE(r.partitionTags.find("tag0"));
    const DelegationSpec &spec = *r.partitionTags.find("tag0");
    CHECK(spec.backendId == "MyNpu");
    CHECK(spec.preprocessorId() == "ExirSubgraphJson");
    // The parameter is used only by the first add, so its delegate owns it.
    CHECK(r.inputTags == std::vector<std::string>{"tag1", "", ""});
  }
  {
    PartitionResult r = parseSpecPartitioner("fusion: upstream\nown_constants: false\n" + base, "npu.yaml")->partition(b.ep);
    CHECK(tagsOf(r) == std::vector<std::string>{"tag1", "tag1", ""});
    CHECK(r.inputTags == std::vector<std::string>{"", "", ""});
  }
  {
    PartitionResult r =
        parseSpecPartitioner("fusion: upstream\nmax_partition_size: 1\n" + base, "npu.yaml")->partition(b.ep);
    CHECK(r.partitionTags.size() == 2);
  }
  {
    PartitionResult r =
        parseSpecPartitioner("fusion: upstream\nmin_partition_size: 3\n" + base, "npu.yaml")->partition(b.ep);
    CHECK(r.partitionTags.empty());
    CHECK(tagsOf(r) == std::vector<std::string>{"", "", ""});
  }
}

TEST_CASE("spec errors name the file and the line", "[spec]") {
  std::string unknownOp = kAddFloat;
  unknownOp.replace(unknownOp.find("inherits: aten::add.Tensor"), 26, "inherits: aten::frobnicate");
  CHECK(specError(unknownOp) ==
        "'npu.yaml': line 4: entry 'aten::add.Tensor' inherits unknown operator 'aten::frobnicate'");
  std::string badDtype = kAddFloat;
  badDtype.replace(badDtype.find("[Float]"), 7, "[Floot]");
  CHECK(specError(badDtype) == "'npu.yaml': line 8: unknown dtype 'Floot' in alias 'T0'");
  std::string badRow = kAddFloat;
  badRow.replace(badRow.find("other: T0, "), 11, "");
  CHECK(specError(badRow) == "'npu.yaml': line 10: row leaves out tensor 'other' of aten::add.Tensor");
  // Keys after `ops` do not confuse the line numbers or the edge.yaml parser.
  CHECK(specError(unknownOp + "min_partition_size: 2\n") ==
        "'npu.yaml': line 4: entry 'aten::add.Tensor' inherits unknown operator 'aten::frobnicate'");
  CHECK_NOTHROW(parseSpecPartitioner(std::string(kAddFloat) + "fusion: upstream\n", "npu.yaml"));

  CHECK(specError("backend_id: MyNpu\nops: []\n").find(
            "'npu.yaml': line 1: unknown backend id 'MyNpu' (registered backends: BackendWithCompilerDemo, "
            "ExirSubgraphJson; a new backend can name one of them under 'preprocess:'") == 0);
  CHECK(specError("ops: []\n") == "'npu.yaml': the spec names no 'backend_id'");
  CHECK(specError("backend_id: BackendWithCompilerDemo\nops: []\n") ==
        "'npu.yaml': line 2: 'ops' must be a non-empty list of edge.yaml entries");
  CHECK(specError("backend_id: BackendWithCompilerDemo\n") ==
        "'npu.yaml': 'ops' must be a non-empty list of edge.yaml entries");
  CHECK(specError("backend_id: BackendWithCompilerDemo\nfusion: greedy\n") ==
        "'npu.yaml': line 2: 'fusion' must be 'connected' or 'upstream', not 'greedy'");
  CHECK(specError("backend_id: BackendWithCompilerDemo\nmin_partition_size: many\n") ==
        "'npu.yaml': line 2: 'min_partition_size' must be an integer");
  CHECK(specError("backend_id: BackendWithCompilerDemo\nmin_partition_size: 3\nmax_partition_size: 2\n") ==
        "'npu.yaml': max_partition_size is smaller than min_partition_size");
  CHECK(specError("backend_id: BackendWithCompilerDemo\ncompile_specs: [max_value]\n")
            .find("'npu.yaml': line 2: malformed compile spec 'max_value': no '='") == 0);
  CHECK(specError("backend: BackendWithCompilerDemo\n").find("'npu.yaml': line 1: unknown key 'backend'") == 0);
  CHECK(specError("- just\n- a list\n") == "'npu.yaml': a partitioner spec must be a mapping (backend_id, ops, ...)");
  CHECK(specError("backend_id: [\n").find("'npu.yaml': line ") == 0);
}

TEST_CASE("partitioner registry spellings", "[spec]") {
  const PartitionerRegistry &registry = PartitionerRegistry::builtin();
  CHECK(registry.create("AddMulPartitionerDemo")->name() == "AddMulPartitionerDemo");
  CHECK(registry.create("nodes:a,b;c", "BackendWithCompilerDemo")->name() == "nodes");
  CHECK(irtest::errorOf([&] { registry.create("nodes:a"); }) ==
        "partitioner 'nodes:...' needs --backend ID to name the backend");
  CHECK(irtest::errorOf([&] { registry.create("nodes:a;;b", "X"); }) == "partitioner 'nodes:a;;b': an empty group");
  CHECK(irtest::errorOf([&] { registry.create("Nope"); }).find("unknown partitioner 'Nope'") == 0);
  CHECK(irtest::errorOf([&] { registry.create("/no/such/spec.yaml"); }).find("'/no/such/spec.yaml'") == 0);
}
