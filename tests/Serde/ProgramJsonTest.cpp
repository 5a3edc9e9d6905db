//===- tests/Serde/ProgramJsonTest.cpp - The stage artifact ---------------===//
#include "Serde/ExportJson.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <catch2/catch.hpp>

#include <filesystem>

using namespace exir;
namespace fs = std::filesystem;

namespace {

const std::string kInputs = EXIR_SOURCE_DIR "/testdata/lit/serde/Inputs/";

std::string scratchDir(const std::string &name) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "serde-test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return fs::absolute(dir).lexically_normal().string();
}

// A planned, delegated program exercising every artifact section.
Program sampleProgram(const std::string &dataDir) {
  ExportedProgram ep = readExportedProgramJsonFile(kInputs + "add_mul.json");
  Program p;
  p.stage = Stage::Planned;
  p.methods.set("forward", Method{ep, std::nullopt});
  p.methods.set("encode", Method{ep, std::nullopt});
  MemoryPlan plan;
  plan.algorithm = "greedy";
  plan.alignment = 16;
  plan.bufferSizes = {0, 96};
  plan.lowerBounds = {0, 64};
  plan.allocations.set("add", Allocation{1, 0});
  plan.allocations.set("mul", Allocation{1, 48});
  p.methods.find("forward")->plan = plan;

  writeFileAtomically(dataDir + "/weights.bin", std::string(64, '\x7f'));
  ConstantTensor w;
  w.dtype = ScalarType::Float;
  w.sizes = {2, 3};
  w.strides = {3, 1};
  w.data.file = dataDir + "/weights.bin";
  w.data.offset = 16;
  w.data.length = 24;
  w.data.sha256 = "00ff";
  p.constants.set("linear.weight", w);
  ConstantTensor scalar;
  scalar.dtype = ScalarType::Long;
  scalar.data.inlineBytes = std::string("\x02\0\0\0\0\0\0\0", 8);
  scalar.data.length = 8;
  p.constants.set("_lifted_tensor_constant0", scalar);

  Delegate d;
  d.backendId = "BackendWithCompilerDemo";
  d.compileSpecs = {{"max_value", std::string("\x04\0\xff", 3)}};
  d.processed.inlineBytes = "1#op:demo_linear, numel:4, dtype:torch.float32<debug_handle>1#";
  d.processed.length = d.processed.inlineBytes->size();
  d.original = std::make_shared<ExportedProgram>(ep);
  p.delegates.set("lowered_module_0", d);
  p.baseDirectory = dataDir;
  return p;
}

Error artifactError(const std::string &json) {
  try {
    readProgramJson(json, "a.json", ".");
  } catch (const Error &e) {
    return e;
  }
  FAIL("expected an exir::Error for " << json);
  return Error("");
}

} // namespace

TEST_CASE("artifact round trip with constants, delegates and plans", "[serde][artifact]") {
  std::string dir = scratchDir("artifact");
  fs::create_directories(dir + "/data");
  fs::create_directories(dir + "/out");
  Program p = sampleProgram(dir + "/data");

  std::string path = dir + "/out/m.plan.json";
  writeProgram(p, path);
  std::string text = readFileOrStdin(path);
  CHECK(text.find(R"("file": "../data/weights.bin", "offset": 16, "length": 24, "sha256": "00ff")") !=
        std::string::npos);
  CHECK(text.find(R"("_lifted_tensor_constant0": {"dtype": 5, "sizes": [], "strides": [], "storage_offset": 0, "data": {"inline": "AgAAAAAAAAA=", "length": 8}})") !=
        std::string::npos);
  CHECK(text.find(R"("compile_specs": [{"key": "max_value", "value": "BAD/"}])") != std::string::npos);
  CHECK(text.find(R"("memory_plans": {"forward": {"algorithm": "greedy", "alignment": 16, "buffer_sizes": [0, 96], "lower_bounds": [0, 64], "allocations": {"add": [1, 0], "mul": [1, 48]}}})") !=
        std::string::npos);
  CHECK(detectInputFormat(path) == InputFormat::ArtifactJson);

  Program again = readProgram(path);
  CHECK(again == p);
  CHECK(again.constants.find("linear.weight")->data.file == dir + "/data/weights.bin");
  CHECK(again.methods.find("forward")->plan->allocations.find("mul")->offset == 48);
  CHECK(!again.methods.find("encode")->plan);
  writeProgram(again, path);
  CHECK(readFileOrStdin(path) == text);

  // Stdout form: absolute paths; reading it from anywhere gives the same program.
  std::string absolute = writeProgramJsonString(p, "");
  CHECK(absolute.find("\"file\": \"" + dir + "/data/weights.bin\"") != std::string::npos);
  CHECK(readProgramJson(absolute, "-", "/") == p);
}

TEST_CASE("relative DataRefs made by a stage resolve against baseDirectory", "[serde][artifact]") {
  std::string dir = scratchDir("artifact-relative");
  fs::create_directories(dir + "/data");
  Program p = sampleProgram(dir + "/data");
  p.constants.find("linear.weight")->data.file = "weights.bin"; // relative to p.baseDirectory
  std::string text = writeProgramJsonString(p, dir);
  CHECK(text.find(R"("file": "data/weights.bin")") != std::string::npos);
  Program back = readProgramJson(text, "x.json", dir);
  CHECK(back.constants.find("linear.weight")->data.file == dir + "/data/weights.bin");
}

TEST_CASE("malformed artifacts are refused with pointers", "[serde][artifact]") {
  const std::string methods = R"("methods": {})";
  Error e = artifactError(R"({"format": "exir-program", "format_version": 1, "stage": "optimized", )" + methods + "}");
  CHECK(e.location() == "/stage");
  CHECK(e.message().find("unknown stage 'optimized'") != std::string::npos);
  e = artifactError(R"({"format": "exir-program", "format_version": 2, "stage": "aten", )" + methods + "}");
  CHECK(e.location() == "/format_version");
  e = artifactError(R"({"format": "exir-program", "format_version": 1, "stage": "aten", )" + methods +
                    R"(, "memory_plans": {"forward": {}}})");
  CHECK(e.location() == "/memory_plans/forward");
  e = artifactError(R"({"format": "exir-program", "format_version": 1, "stage": "aten", )" + methods +
                    R"(, "constants": {"w": {"dtype": 7, "sizes": [1], "data": {"offset": 0, "length": 4}}}})");
  CHECK(e.location() == "/constants/w/data");
  CHECK(e.message() == "DataRef needs either 'file' or 'inline'");
  e = artifactError(R"({"format": "exir-program", "format_version": 1, "stage": "aten", "methods": {"forward": {"graph_module": {}, "schema_version": {"major": 8, "minor": 14}, "opset_version": {}, "range_constraints": {}}}})");
  CHECK(e.location() == "/methods/forward/graph_module");
  CHECK(e.message() == "missing required field 'graph' of GraphModule");
  e = artifactError(R"({"format": "exir-program", "format_version": 1, "stage": "aten", )" + methods +
                    R"(, "constants": {"w": {"dtype": 7, "sizes": [1], "data": {"inline": "AAAA", "length": 4}}}})");
  CHECK(e.message() == "inline data is 3 bytes but 'length' says 4");
}

TEST_CASE("staleness fields, delegate named data and the edge.yaml record round-trip", "[serde][artifact]") {
  std::string dir = scratchDir("artifact-issue9");
  fs::create_directories(dir + "/data");
  Program p = sampleProgram(dir + "/data");
  std::string path = dir + "/m.json";
  // Without the new fields the document is written exactly as before.
  writeProgram(p, path);
  std::string plain = readFileOrStdin(path);
  CHECK(plain.find("file_size") == std::string::npos);
  CHECK(plain.find("named_data") == std::string::npos);
  CHECK(plain.find("edge_yaml") == std::string::npos);

  ConstantTensor &w = *p.constants.find("linear.weight");
  w.data.fileSize = 64;
  w.data.crc32 = 0xdeadbeef;
  p.delegates.find("lowered_module_0")->namedData.set("linear.weight", w);
  EdgeRulesRecord rules;
  rules.source = "my_edge.yaml";
  rules.text = "- func: aten::sigmoid\n";
  rules.sha256 = sha256Hex(rules.text);
  p.edgeRules = rules;
  writeProgram(p, path);
  std::string text = readFileOrStdin(path);
  CHECK(text.find(R"("sha256": "00ff", "file_size": 64, "crc32": 3735928559})") != std::string::npos);
  Program back = readProgram(path);
  CHECK(back == p);
  CHECK(back.delegates.find("lowered_module_0")->namedData.find("linear.weight")->data.crc32 == 0xdeadbeefu);
  REQUIRE(back.edgeRules);
  CHECK(back.edgeRules->text == rules.text);
  CHECK_FALSE(back.edgeRules->replace);

  // The record must match its digest.
  std::string edited = text;
  edited.replace(edited.find("aten::sigmoid"), 13, "aten::relu___");
  Error e = artifactError(edited);
  CHECK(e.location() == "/edge_yaml/sha256");
}

TEST_CASE("checkDataFiles notices a missing or resized file", "[serde][artifact]") {
  std::string dir = scratchDir("artifact-stale");
  fs::create_directories(dir + "/data");
  Program p = sampleProgram(dir + "/data");
  ConstantTensor &w = *p.constants.find("linear.weight");
  w.data.fileSize = 64;
  CHECK_NOTHROW(checkDataFiles(p));
  writeFileAtomically(dir + "/data/weights.bin", std::string(65, '\x7f'));
  try {
    checkDataFiles(p);
    FAIL("no error for a resized file");
  } catch (const Error &err) {
    CHECK(err.location() == "/constants/linear.weight/data");
    CHECK(err.message().find("has 65 bytes but had 64") != std::string::npos);
  }
  fs::remove(dir + "/data/weights.bin");
  CHECK_THROWS_WITH(checkDataFiles(p), Catch::Contains("is missing or unreadable"));
}

TEST_CASE("skipNodeMetadata reads no node metadata but checks it", "[serde][artifact]") {
  std::string dir = scratchDir("skip-metadata");
  fs::create_directories(dir + "/data");
  Program p = sampleProgram(dir + "/data");
  REQUIRE(!p.methods.find("forward")->program.graph.nodes.at(0).metadata.empty());
  std::string path = dir + "/m.plan.json";
  writeProgram(p, path);
  ExportJsonOptions options;
  options.skipNodeMetadata = true;
  InputFormat format;
  Program lean = readProgram(path, format, options);
  // Everything else is read: the program equals the original without node metadata.
  for (auto &[name, method] : p.methods)
    for (Node &node : method.program.graph.nodes) node.metadata = {};
  CHECK(lean == p);
  CHECK(readProgram(path) != p); // by default the metadata is kept

  // A malformed metadata value is the same error either way.
  std::string text = readFileOrStdin(path);
  size_t at = text.find(R"("nn_module_stack": ")");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string(R"("nn_module_stack": ")").size(), R"("nn_module_stack": 7, "x": ")");
  writeFileAtomically(path, text);
  std::string kept, skipped;
  try {
    readProgram(path);
  } catch (const Error &e) {
    kept = e.render();
  }
  try {
    readProgram(path, format, options);
  } catch (const Error &e) {
    skipped = e.render();
  }
  CHECK(!kept.empty());
  CHECK(kept.find("nn_module_stack") != std::string::npos);
  CHECK(skipped == kept);
}
