//===- tests/Serde/ParallelJsonTest.cpp - two-thread reading and writing --===//
//
// Big programs are read and written on two threads (Serde/Parallel.h). Here
// the threshold is lowered so that small documents take those paths: the
// text written, the program read and every error must be those of one thread,
// including which error wins when both halves hold one.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/JsonBatch.h"
#include "Serde/Parallel.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

using namespace exir;

namespace {

constexpr int kNodes = 40;

// Lowers the two-thread threshold for one scope.
struct ParallelFrom {
  explicit ParallelFrom(size_t n) { json::setParallelMinItems(n); }
  ~ParallelFrom() { json::setParallelMinItems(0); }
};

std::string meta() {
  return R"({"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 3}], "requires_grad": false, )"
         R"("device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}], )"
         R"("storage_offset": {"as_int": 0}, "layout": 7})";
}

// A chain x -> v0 -> ... -> v{n-1} in torch's exact JSON form (what our writer writes).
std::string chainProgram(int n = kNodes) {
  std::string nodes, values = "\"x\": " + meta(), specs;
  for (int i = 0; i < n; ++i) {
    std::string in = i == 0 ? "x" : "v" + std::to_string(i - 1), out = "v" + std::to_string(i);
    if (i) nodes += ", ";
    nodes += R"({"target": "torch.ops.aten.add.Tensor", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": ")" +
             in + R"("}}, "kind": 1}, {"name": "other", "arg": {"as_tensor": {"name": ")" + in +
             R"("}}, "kind": 1}], "outputs": [{"as_tensor": {"name": ")" + out +
             R"("}}], "metadata": {"stack_trace": "line )" + std::to_string(i) +
             R"(\n"}, "is_hop_single_tensor_return": null})";
    values += ", \"" + out + "\": " + meta();
  }
  for (int i = 0; i < n; ++i)
    specs += std::string(i ? ", " : "") + R"({"user_input": {"arg": {"as_tensor": {"name": "x"}}}})";
  std::string last = "v" + std::to_string(n - 1);
  return R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": ")" +
         last + R"("}}], "nodes": [)" + nodes + R"(], "tensor_values": {)" + values +
         R"(}, "sym_int_values": {}, "sym_bool_values": {}, "is_single_tensor_return": false, )"
         R"("custom_obj_values": {}, "sym_float_values": {}}, "signature": {"input_specs": [)" +
         specs + R"(], "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": ")" + last +
         R"("}}}}]}, "module_call_graph": [], "metadata": {}, "treespec_namedtuple_fields": {}}, )"
         R"("opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 14}, )"
         R"("verifiers": ["ATEN"], "torch_version": "2.9.0"})";
}

// A stage artifact around the chain, with many constants, delegates and allocations.
std::string chainArtifact() {
  std::string constants, delegates, allocations;
  for (int i = 0; i < kNodes; ++i) {
    delegates += std::string(i ? ", " : "") + "\"lowered_module_" + std::to_string(i) +
                 R"(": {"backend_id": "BackendWithCompilerDemo", "compile_specs": [{"key": "max_value", "value": "BA=="}], )"
                 R"("processed": {"inline": "AACAPw==", "length": 4}, "original_module": )" +
                 chainProgram(1 + i % 3) + "}";
    constants += std::string(i ? ", " : "") + "\"c" + std::to_string(i) +
                 R"(": {"dtype": 7, "sizes": [1], "strides": [1], "storage_offset": 0, )"
                 R"("data": {"inline": "AACAPw==", "length": 4}})";
    allocations += std::string(i ? ", " : "") + "\"v" + std::to_string(i) + "\": [1, " +
                   std::to_string(32 * (i % 2)) + "]";
  }
  return R"({"format": "exir-program", "format_version": 1, "stage": "aten", "methods": {"forward": )" +
         chainProgram() + R"(}, "constants": {)" + constants +
         R"(}, "delegates": {)" + delegates + R"(}, "memory_plans": {"forward": {"algorithm": "greedy", "alignment": 16, )"
         R"("buffer_sizes": [0, 64], "lower_bounds": [0, 64], "allocations": {)" +
         allocations + "}}}}\n";
}

// Replaces the `nth` (0-based) occurrence of `what` in `text`.
std::string replaceNth(std::string text, const std::string &what, const std::string &with, int nth) {
  size_t at = std::string::npos;
  for (int i = 0; i <= nth; ++i) at = text.find(what, at == std::string::npos ? 0 : at + 1);
  REQUIRE(at != std::string::npos);
  return text.replace(at, what.size(), with);
}

// The rendered exir::Error that `read` throws.
template <class Read> std::string errorOf(Read &&read) {
  try {
    read();
  } catch (const Error &e) {
    return e.render();
  }
  FAIL("expected an exir::Error");
  return {};
}

// The chain with a "nodes" key before the real one, holding `firstItems`
// ("" or the chain's first node).
std::string withNodesKeyTwice(bool firstNode) {
  std::string chain = chainProgram(), node = chain.substr(chain.find(R"({"target")"));
  node = node.substr(0, node.find(R"(, {"target")"));
  return replaceNth(chain, R"("nodes": [)", R"("nodes": [)" + (firstNode ? node : "") + R"(], "nodes": [)", 0);
}

std::string exportError(const std::string &text) {
  return errorOf([&] { readExportedProgramJson(text, "in.json"); });
}

std::string artifactError(const std::string &text) {
  return errorOf([&] { readProgramJson(text, "in.json", ""); });
}

} // namespace

TEST_CASE("two-thread reading and writing give one thread's program and text", "[serde][parallel]") {
  std::string text = chainProgram();
  ExportedProgram serial = readExportedProgramJson(text, "in.json");
  REQUIRE(writeExportedProgramJson(serial) == text);
  for (size_t from : {2, 3, 7, 39, 40}) {
    ParallelFrom parallel(from);
    ExportedProgram ep = readExportedProgramJson(text, "in.json");
    CHECK(ep == serial);
    CHECK(writeExportedProgramJson(ep) == text);
  }
  std::string artifact = chainArtifact();
  Program serialProgram = readProgramJson(artifact, "in.json", "");
  REQUIRE(writeProgramJsonString(serialProgram, "") == artifact);
  for (size_t from : {2, 5, 40}) {
    ParallelFrom parallel(from);
    Program p = readProgramJson(artifact, "in.json", "");
    CHECK(p == serialProgram);
    CHECK(writeProgramJsonString(p, "") == artifact);
  }
}

TEST_CASE("two-thread reading keeps a repeated key's serial meaning", "[serde][parallel]") {
  // The last value wins at the first one's position.
  std::string text = replaceNth(chainProgram(), R"("v5": {"dtype": 7)", R"("v3": {"dtype": 6)", 0);
  ExportedProgram serial = readExportedProgramJson(text, "in.json");
  REQUIRE(serial.graph.tensorValues.size() == kNodes);
  ParallelFrom parallel(2);
  ExportedProgram ep = readExportedProgramJson(text, "in.json");
  CHECK(ep == serial);
  CHECK(writeExportedProgramJson(ep) == writeExportedProgramJson(serial));
  // A repeated array's items follow the first one's.
  std::string nodesTwice = withNodesKeyTwice(true);
  ParallelFrom serialOnly(0);
  ExportedProgram serialNodes = readExportedProgramJson(nodesTwice, "in.json");
  REQUIRE(serialNodes.graph.nodes.size() == kNodes + 1);
  ParallelFrom twoThreads(2);
  CHECK(readExportedProgramJson(nodesTwice, "in.json") == serialNodes);
}

TEST_CASE("two-thread reading reports the error first in document order", "[serde][parallel]") {
  std::string text = chainProgram();
  const std::string target = R"("target": )";
  const std::string badTarget = R"("target": 5, "x": )";
  const std::string dtype = R"("dtype": 7)";
  const std::string badDtype = R"("dtype": 99)";
  // Node 3 is in the first half, node 30 in the second; tensor values are
  // x, v0, ... so value 35 is v34.
  std::string nodeBoth = replaceNth(replaceNth(text, target, badTarget, 30), target, badTarget, 3);
  std::string nodeSecond = replaceNth(text, target, badTarget, 30);
  std::string valueBoth = replaceNth(replaceNth(text, dtype, badDtype, 35), dtype, badDtype, 2);
  std::string valueSecond = replaceNth(text, dtype, badDtype, 35);
  std::string specSecond = replaceNth(text, R"({"user_input": {"arg")", R"({"user_input": {"argh")", 33);

  struct Case {
    std::string text, pointer;
  } cases[] = {{nodeBoth, "/graph_module/graph/nodes/3/target"},
               {nodeSecond, "/graph_module/graph/nodes/30/target"},
               {valueBoth, "/graph_module/graph/tensor_values/v1/dtype"},
               {valueSecond, "/graph_module/graph/tensor_values/v34/dtype"},
               {specSecond, "/graph_module/signature/input_specs/33/user_input"}};
  for (const auto &c : cases) {
    std::string serial = exportError(c.text);
    CHECK(serial.find(c.pointer + ":") != std::string::npos);
    ParallelFrom parallel(2);
    CHECK(exportError(c.text) == serial);
  }

  std::string artifact = chainArtifact();
  const std::string constant = R"("dtype": 7, "sizes": [1])";
  const std::string badConstant = R"("dtype": 99, "sizes": [1])";
  for (auto [first, second] : {std::pair{4, 30}, std::pair{-1, 30}}) {
    std::string bad = replaceNth(artifact, constant, badConstant, second);
    if (first >= 0) bad = replaceNth(bad, constant, badConstant, first);
    std::string serial = artifactError(bad);
    CHECK(serial.find("/constants/c" + std::to_string(first >= 0 ? first : second) + "/dtype:") !=
          std::string::npos);
    ParallelFrom parallel(2);
    CHECK(artifactError(bad) == serial);
  }
  const std::string backend = R"("backend_id": "BackendWithCompilerDemo")";
  const std::string badBackend = R"("backend_id": 7)";
  for (auto [first, second] : {std::pair{3, 33}, std::pair{-1, 33}}) {
    std::string bad = replaceNth(artifact, backend, badBackend, second);
    if (first >= 0) bad = replaceNth(bad, backend, badBackend, first);
    std::string serial = artifactError(bad);
    CHECK(serial.find("/delegates/lowered_module_" + std::to_string(first >= 0 ? first : second) +
                      "/backend_id:") != std::string::npos);
    ParallelFrom parallel(2);
    CHECK(artifactError(bad) == serial);
  }
}

TEST_CASE("skipNodeMetadata leaves node metadata out and nothing else", "[serde][parallel]") {
  std::string text = chainProgram();
  ExportedProgram full = readExportedProgramJson(text, "in.json");
  ExportJsonOptions options;
  options.skipNodeMetadata = true;
  ExportedProgram slim = readExportedProgramJson(text, "in.json", options);
  REQUIRE(full.graph.nodes.size() == slim.graph.nodes.size());
  CHECK_FALSE(full.graph.nodes[0].metadata.empty());
  for (auto &node : full.graph.nodes) {
    CHECK(node.metadata.empty() == false);
    node.metadata.clear();
  }
  for (const auto &node : slim.graph.nodes) CHECK(node.metadata.empty());
  CHECK(full == slim);
  // The field is still checked to be an object.
  std::string bad = replaceNth(text, R"("metadata": {"stack_trace")", R"("metadata": 3, "m": {"stack_trace")", 5);
  try {
    readExportedProgramJson(bad, "in.json", options);
    FAIL("expected an exir::Error");
  } catch (const Error &e) {
    CHECK(e.render().find("/graph_module/graph/nodes/5/metadata: expected an object") != std::string::npos);
  }
}

TEST_CASE("a document large enough to be prefaulted reads and fails as a small one does", "[serde][parallel]") {
  // Documents from 16 MB up are parsed while a second thread populates the
  // parser's buffers (Serde/JsonDom.cpp): the program and the text written
  // back must not change, nor must a syntax error's offset.
  std::string text = chainProgram(30000);
  REQUIRE(text.size() > (size_t(16) << 20));
  ExportedProgram ep = readExportedProgramJson(text, "in.json");
  REQUIRE(ep.graph.nodes.size() == 30000);
  CHECK(ep.graph.nodes.back().outputs.at(0).name == "v29999");
  CHECK(writeExportedProgramJson(ep) == text);

  size_t at = text.rfind("\"v29998\"");
  std::string broken = text;
  broken[at] = '#';
  CHECK_THAT(exportError(broken), Catch::Matchers::Contains("invalid JSON at byte " + std::to_string(at)));
}

//===----------------------------------------------------------------------===//
// Big containers read in batches (Serde/JsonBatch.h)
//===----------------------------------------------------------------------===//

namespace {

// Defers containers from `n` bytes for one scope.
struct DeferFrom {
  explicit DeferFrom(size_t n) { json::setDeferMinBytes(n); }
  ~DeferFrom() { json::setDeferMinBytes(0); }
};

// readProgram's way in: the one reader that defers containers.
Program readText(const std::string &text) { return readProgramFromText(text, "in.json"); }

std::string readTextError(const std::string &text) {
  return errorOf([&] { readText(text); });
}

} // namespace

TEST_CASE("batched reading gives the whole DOM's program", "[serde][batch]") {
  // These documents are far below the default threshold: read whole.
  for (const std::string &text : {chainProgram(), chainArtifact()}) {
    Program whole = readText(text);
    std::string written = writeProgramJsonString(whole, "");
    for (size_t from : {1, 100, 2000}) {
      DeferFrom defer(from);
      for (size_t parallel : {0, 2}) {
        ParallelFrom threads(parallel);
        Program p = readText(text);
        CHECK(p == whole);
        CHECK(writeProgramJsonString(p, "") == written);
      }
    }
  }
}

TEST_CASE("batched reading keeps a repeated key's meaning and quotes bare NaN", "[serde][batch]") {
  std::string repeated = replaceNth(chainProgram(), R"("v5": {"dtype": 7)", R"("v3": {"dtype": 6)", 0);
  std::string escapedKey = replaceNth(chainProgram(), R"("v5": {"dtype": 7)", R"("v\u0035": {"dtype": 7)", 0);
  std::string nan = replaceNth(chainProgram(), R"({"as_tensor": {"name": "v7"}})", R"({"as_float": NaN})", 0);
  // A repeated container key: the first (read whole) and the second (in
  // batches) must each be read where it stands (a fuzzer's find).
  std::string repeatedNodes = withNodesKeyTwice(true), emptyFirst = withNodesKeyTwice(false);
  for (const std::string *textOf : {&repeated, &escapedKey, &nan, &repeatedNodes, &emptyFirst}) {
    const std::string &text = *textOf;
    Program whole = readText(text);
    for (size_t parallel : {0, 2}) {
      DeferFrom defer(1);
      ParallelFrom threads(parallel);
      Program p = readText(text);
      if (textOf != &nan) CHECK(p == whole); // NaN is not NaN
      CHECK(writeProgramJsonString(p, "") == writeProgramJsonString(whole, ""));
    }
  }
}

TEST_CASE("batched reading reports the whole DOM's errors", "[serde][batch]") {
  std::string text = chainProgram(), artifact = chainArtifact();
  const std::string target = R"("target": )", badTarget = R"("target": 5, "x": )";
  const std::string kind = R"("kind": 1})";
  std::vector<std::pair<std::string, std::string>> cases = {
      // what is wrong, and where the whole DOM says so
      {replaceNth(replaceNth(text, target, badTarget, 30), target, badTarget, 3), "/graph_module/graph/nodes/3/target"},
      {replaceNth(text, target, badTarget, 30), "/graph_module/graph/nodes/30/target"},
      {replaceNth(text, R"("dtype": 7)", R"("dtype": 99)", 35), "/graph_module/graph/tensor_values/v34/dtype"},
      {replaceNth(text, kind, R"("kind": 1,})", 20), "invalid JSON at byte"},      // a syntax error in a node
      {replaceNth(text, "}, {\"target\"", "} {\"target\"", 12), "invalid JSON at byte"}, // a comma missing between two
      {replaceNth(text, "\"v9\": {", "\"v9\" {", 0), "invalid JSON at byte"},           // in a tensor value
      {replaceNth(text, "\"kind\": 1", "\"kind\": \"\\x\"", 5), "invalid JSON"},        // a bad escape
      {replaceNth(text, R"("output_specs": [)", R"("output_specs": [,)", 0), "invalid JSON at byte"}, // outside them
      {replaceNth(artifact, R"("dtype": 7, "sizes": [1])", R"("dtype": 99, "sizes": [1])", 30), "/constants/c30/dtype"},
      {replaceNth(artifact, R"("backend_id": "BackendWithCompilerDemo")", R"("backend_id": 7)", 33),
       "/delegates/lowered_module_33/backend_id"},
  };
  for (const auto &[bad, where] : cases) {
    std::string whole = readTextError(bad);
    CHECK(whole.find(where) != std::string::npos);
    for (size_t parallel : {0, 2}) {
      DeferFrom defer(1);
      ParallelFrom threads(parallel);
      CHECK(readTextError(bad) == whole);
    }
  }
}

TEST_CASE("batched reading names the item whose bytes are not UTF-8", "[serde][batch]") {
  // The whole DOM can only say that the document is not UTF-8; a batch knows which item.
  std::string bad = replaceNth(chainProgram(), "line 7", "line \xff", 0);
  CHECK(readTextError(bad).find("UTF-8") != std::string::npos);
  DeferFrom defer(1);
  std::string batched = readTextError(bad);
  CHECK(batched.find("UTF-8") != std::string::npos);
  CHECK(batched.find("/graph_module/graph/nodes/7") != std::string::npos);
}

TEST_CASE("batched two-thread reading reports the first failing item whichever thread meets it first",
          "[serde][batch]") {
  // One item per chunk at this size, taken by the threads in turn: an error
  // in a late chunk is often met before an earlier one's.
  std::string text = chainProgram();
  const std::string target = R"("target": )", badTarget = R"("target": 5, "x": )";
  const std::string dtype = R"("dtype": 7)", badDtype = R"("dtype": 99)";
  std::string nodes = text, values = text;
  for (int k : {37, 31, 22, 9}) nodes = replaceNth(nodes, target, badTarget, k);
  for (int k : {39, 28, 12}) values = replaceNth(values, dtype, badDtype, k);
  for (const auto &[bad, where] : {std::pair{nodes, std::string("/graph_module/graph/nodes/9/target")},
                                   std::pair{values, std::string("/graph_module/graph/tensor_values/v11/dtype")}}) {
    std::string whole = readTextError(bad);
    CHECK(whole.find(where + ":") != std::string::npos);
    DeferFrom defer(1);
    ParallelFrom threads(2);
    for (int round = 0; round < 50; ++round) CHECK(readTextError(bad) == whole);
  }
}
