//===- tests/Partition/BackendTest.cpp - Backends, registry, compile specs ===//
//
// BackendWithCompilerDemo's blob byte for byte (the seed's LowerableModule,
// lowered from the real seed model through exir-edge's pipeline), its refusal
// of unsupported ops, the registry, and every compile-spec spelling.
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"
#include "Partition/Backend.h"
#include "Partition/Lowering.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/Hash.h"
#include "../IR/GraphBuilder.h"

#include "PartitionTestUtil.h"

#include <catch2/catch.hpp>

using namespace exir;
using namespace exir::partition;
using irtest::GraphBuilder;
using irtest::pos;
using irtest::T;
using ST = ScalarType;

namespace {

using partitiontest::edgeProgramOf;

std::string blobOf(const Delegate &d) {
  REQUIRE(d.processed.inlineBytes);
  return *d.processed.inlineBytes;
}

} // namespace

TEST_CASE("LowerableModule lowered whole gives the seed's exact blob", "[backend]") {
  Program p = edgeProgramOf("lowerable_sin.pt2");
  LoweringReport report;
  lowerWholeProgram(p, "BackendWithCompilerDemo", {}, {}, report);
  REQUIRE(p.delegates.size() == 1);
  const Delegate &d = *p.delegates.find("lowered_module_0");
  CHECK(blobOf(d) == "1version:0#op:demo::aten.sin.default, numel:1, dtype:torch.float32<debug_handle>2#");
  CHECK(d.backendId == "BackendWithCompilerDemo");
  CHECK(d.compileSpecs.empty());
  CHECK(sha256Hex(blobOf(d)) == "87a11db524a9694fb03c543c00be1af75dfd8c1fa9d9f2d40f6f2cde666ece31");
  CHECK(d.processed.sha256.empty()); // taken only when the blob goes to a sidecar
  // Upstream passes [] and so do we, with a warning about the runtime.
  REQUIRE(report.warnings.size() == 1);
  CHECK(report.warnings[0].find("compile_specs[0]") != std::string::npos);
  verifyDelegatedProgram(p);
}

TEST_CASE("demo records: numel, dtype, debug handle, op name", "[backend]") {
  GraphBuilder b;
  b.input("a", ST::Float, {2, 3}).input("c", ST::Half, {3, 4});
  b.edge("mm.default", {pos("self", T("a")), pos("mat2", T("a"))}, "mm", ST::Float, {2, 3})
      .metadata.set("debug_handle", "7");
  b.edge("add.Tensor", {pos("self", T("c")), pos("other", T("c"))}, "add", ST::Half, {3, 4});
  const Graph &g = b.ep.graph;
  CHECK(demoBackendRecord(g, g.nodes[0]) == "op:demo::aten.mm.default, numel:6, dtype:torch.float32<debug_handle>7#");
  // No handle: upstream writes -1.
  CHECK(demoBackendRecord(g, g.nodes[1]) == "op:demo::aten.add.Tensor, numel:12, dtype:torch.float16<debug_handle>-1#");
  b.output("add");
  auto result = makeBackendWithCompilerDemo()->preprocess(b.ep, {CompileSpec{"max_value", "\x04"}});
  CHECK(result.processedBytes ==
        "2version:0#op:demo::aten.mm.default, numel:6, dtype:torch.float32<debug_handle>7#"
        "op:demo::aten.add.Tensor, numel:12, dtype:torch.float16<debug_handle>-1#");
  CHECK(result.warnings.empty());
}

TEST_CASE("the demo backend refuses what upstream's refuses", "[backend]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  b.edge("sub.Tensor", {pos("self", T("x")), pos("other", T("x"))}, "sub", ST::Float, {2});
  b.output("sub");
  std::string message = irtest::errorOf([&] { makeBackendWithCompilerDemo()->preprocess(b.ep, {}); });
  CHECK(message.find("node sub: BackendWithCompilerDemo cannot lower aten::sub.Tensor") != std::string::npos);
}

TEST_CASE("registry: lookup, duplicates and unknown ids", "[backend]") {
  const BackendRegistry &builtin = BackendRegistry::builtin();
  CHECK(builtin.ids() == std::vector<std::string>{"BackendWithCompilerDemo", "ExirSubgraphJson"});
  CHECK(builtin.find("BackendWithCompilerDemo") != nullptr);
  CHECK(builtin.find("Nope") == nullptr);
  CHECK(irtest::errorOf([&] { builtin.require("Nope"); }) ==
        "unknown backend id 'Nope' (registered backends: BackendWithCompilerDemo, ExirSubgraphJson)");
  BackendRegistry mine;
  mine.add(makeSubgraphJsonBackend());
  CHECK_THROWS_AS(mine.add(makeSubgraphJsonBackend()), Error);
}

TEST_CASE("compile spec spellings", "[backend]") {
  CHECK(parseCompileSpec("max_value=4") == CompileSpec{"max_value", std::string(1, '\x04')});
  CHECK(parseCompileSpec("k=0").value == std::string(1, '\0'));
  CHECK(parseCompileSpec("k=u8:255").value == "\xff");
  CHECK(parseCompileSpec("k=i32:-2").value == std::string("\xfe\xff\xff\xff", 4));
  CHECK(parseCompileSpec("k=i64:258").value == std::string("\x02\x01\0\0\0\0\0\0", 8));
  CHECK(parseCompileSpec("k=str:a=b:c").value == "a=b:c");
  CHECK(parseCompileSpec("k=hex:00Ff10").value == std::string("\x00\xff\x10", 3));
  CHECK(parseCompileSpec("k=b64:BA==").value == "\x04");
  CHECK(describeCompileSpecValue("\x04") == "4");
  CHECK(describeCompileSpecValue("npu-1") == "str:npu-1");
  CHECK(describeCompileSpecValue(std::string("\x01\x02", 2)) == "hex:0102");

  auto error = [](const std::string &text) { return irtest::errorOf([&] { parseCompileSpec(text); }); };
  CHECK(error("max_value").find("malformed compile spec 'max_value': no '='") == 0);
  CHECK(error("=4").find("empty key") != std::string::npos);
  CHECK(error("k=").find("empty value") != std::string::npos);
  CHECK(error("k=256").find("256 is out of range 0..255") != std::string::npos);
  CHECK(error("k=-1").find("-1 is out of range 0..255") != std::string::npos);
  CHECK(error("k=four").find("'four' is not an integer 0-255 and has no type prefix") != std::string::npos);
  CHECK(error("k=i32:4294967296").find("out of range") != std::string::npos);
  CHECK(error("k=hex:abc").find("even") != std::string::npos);
  CHECK(error("k=hex:zz").find("'zz' is not hex") != std::string::npos);
  CHECK(error("k=b64:@@").find("invalid base64") != std::string::npos);
  CHECK(error("k=f32:1.0").find("unknown value type 'f32:'") != std::string::npos);
}

TEST_CASE("ExirSubgraphJson stores the subgraph as torch.export JSON", "[backend]") {
  GraphBuilder b;
  b.input("x", ST::Float, {2});
  b.edge("sin.default", {pos("self", T("x"))}, "s", ST::Float, {2});
  b.output("s");
  std::string blob = makeSubgraphJsonBackend()->preprocess(b.ep, {}).processedBytes;
  CHECK(blob.rfind("{\"graph_module\": {\"graph\": {", 0) == 0);
  CHECK(blob.find("executorch.exir.dialects.edge.ops.aten.sin.default") != std::string::npos);
}
