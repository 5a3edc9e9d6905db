//===- tests/Serde/ExportJsonTest.cpp - torch.export JSON reader/writer ---===//
//
// Round trips of real documents, every legacy form the reader accepts, the
// writer's Python-compatible formatting, and one-line errors with JSON pointers
// for malformed inputs (testdata/lit/serde/Inputs).
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/JsonWriter.h"
#include "Serde/ZipArchive.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <string>

using namespace exir;

namespace {

const std::string kPt2 = EXIR_SHARED_DIR "/corpus/pt2/et_pt2archive_linear_2025-09.pt2";
const std::string kETRecord = EXIR_SHARED_DIR "/corpus/pt2/executorch_etrecord.bin";
const std::string kInputs = EXIR_SOURCE_DIR "/testdata/lit/serde/Inputs/";

// Reads `path` expecting an exir::Error; returns it.
Error readError(const std::string &path) {
  try {
    readExportedProgramJsonFile(path);
  } catch (const Error &e) {
    return e;
  }
  FAIL("expected an exir::Error reading " << path);
  return Error("");
}

Error parseError(const std::string &json) {
  try {
    readExportedProgramJson(json, "inline.json");
  } catch (const Error &e) {
    return e;
  }
  FAIL("expected an exir::Error parsing " << json);
  return Error("");
}

// A small single-key 8.x program built around one node, with a replaceable argument.
std::string programWithArgument(const std::string &argJson) {
  return R"({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": "y"}}], "nodes": [{"target": "torch.ops.aten.clamp.default", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "x"}}}, {"name": "min", "arg": )" +
         argJson +
         R"(}], "outputs": [{"as_tensor": {"name": "y"}}], "metadata": {}}], "tensor_values": {"x": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"}, "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}, "y": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"}, "strides": [{"as_int": 1}], "storage_offset": {"as_int": 0}, "layout": 7}}, "sym_int_values": {}, "sym_bool_values": {}}, "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}], "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}]}, "module_call_graph": []}, "opset_version": {"aten": 10}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 2}})";
}

const Argument &minArgument(const ExportedProgram &ep) { return ep.graph.nodes.at(0).inputs.at(1).arg; }

} // namespace

TEST_CASE("PT2 archive model.json round-trips byte for byte", "[serde][export-json]") {
  ZipArchive zip(kPt2);
  std::string original = zip.read("linear_3/models/model.json");
  ExportedProgram ep = readExportedProgramJson(original, "model.json");

  CHECK(ep.schemaVersion == SchemaVersion{8, 12});
  CHECK(ep.torchVersion == "2.9.0a0+fb");
  CHECK(ep.verifiers == std::vector<std::string>{"TRAINING"});
  REQUIRE(ep.graph.nodes.size() == 1);
  const Node &linear = ep.graph.nodes[0];
  CHECK(linear.target == "torch.ops.aten.linear.default");
  REQUIRE(linear.inputs.size() == 3);
  CHECK(linear.inputs[1].name == "weight");
  CHECK(linear.inputs[1].arg.name == "p_linear_weight");
  CHECK(linear.inputs[1].kind == ArgumentPassing::Positional);
  CHECK(!linear.isHopSingleTensorReturn);
  CHECK(!linear.name);
  const TensorMeta *weight = ep.graph.tensorValues.find("p_linear_weight");
  REQUIRE(weight);
  CHECK(weight->dtype == ScalarType::Float);
  CHECK(weight->sizes == std::vector<SymInt>{SymInt::of(3), SymInt::of(3)});
  CHECK(weight->requiresGrad);
  REQUIRE(ep.signature.inputSpecs.size() == 3);
  CHECK(ep.signature.inputSpecs[0].kind == InputKind::Parameter);
  CHECK(ep.signature.inputSpecs[0].target == "linear.weight");
  CHECK(ep.signature.inputSpecs[2].kind == InputKind::UserInput);
  REQUIRE(ep.moduleCallGraph.size() == 2);
  CHECK(ep.moduleCallGraph[0].signature->forwardArgNames == std::vector<std::string>{"x"});
  CHECK(!ep.moduleCallGraph[1].signature);

  std::string written = writeExportedProgramJson(ep);
  CHECK(written == original);
  ExportedProgram again = readExportedProgramJson(written, "written.json");
  CHECK(again == ep);
  CHECK(writeExportedProgramJson(again) == written);
}

TEST_CASE("the reader leaves room to double a graph's node list", "[serde][export-json]") {
  // exir-plan adds about one memory.alloc per node, in place when there is
  // room (a second list of every node was 35 MB of fresh memory at 100k nodes).
  // A program large enough that a fixed allowance would not cover it.
  ZipArchive zip(EXIR_SHARED_DIR "/corpus/torch-export/gpt2_tiny.pt2");
  ExportedProgram ep = readExportedProgramJson(zip.read("gpt2_tiny/models/model.json"), "model.json");
  REQUIRE(ep.graph.nodes.size() >= 100);
  CHECK(ep.graph.nodes.capacity() >= 2 * ep.graph.nodes.size());
}

TEST_CASE("ETRecord programs (schema int 1, all-keys unions) round-trip", "[serde][export-json]") {
  ZipArchive zip(kETRecord);
  for (const char *member : {"edge_dialect_exported_program", "aten_dialect_output/forward"}) {
    INFO(member);
    ExportedProgram ep = readExportedProgramJson(zip.read(member), member);
    // Upgraded to the current form: schema 8, single-key unions.
    CHECK(ep.schemaVersion == currentSchemaVersion());
    CHECK(ep.torchVersion == "<=2.4");
    REQUIRE(ep.graph.nodes.size() == 1);
    const Node &mul = ep.graph.nodes[0];
    CHECK(mul.target == (std::string(member) == "edge_dialect_exported_program"
                             ? "executorch.exir.dialects.edge.ops.aten.mul.Tensor"
                             : "torch.ops.aten.mul.Tensor"));
    REQUIRE(mul.inputs.size() == 2);
    CHECK(mul.inputs[0].arg == Argument::tensor("arg0_1"));
    CHECK(!mul.inputs[0].kind);
    bool edge = std::string(member) == "edge_dialect_exported_program";
    CHECK(mul.outputs == std::vector<Argument>{Argument::tensor(edge ? "aten_mul_tensor" : "mul")});
    // TensorValue {"meta": ...} wrapper and plain-int storage_offset.
    const TensorMeta *arg0 = ep.graph.tensorValues.find("arg0_1");
    REQUIRE(arg0);
    CHECK(arg0->sizes == std::vector<SymInt>{SymInt::of(3), SymInt::of(2)});
    CHECK(arg0->strides == std::vector<SymInt>{SymInt::of(2), SymInt::of(1)});
    CHECK(arg0->storageOffset == SymInt::of(0));
    REQUIRE(ep.signature.inputSpecs.size() == 2);
    CHECK(ep.signature.inputSpecs[1].kind == InputKind::UserInput);
    CHECK(ep.signature.inputSpecs[1].arg == Argument::tensor("arg1_1"));
    CHECK(ep.signature.outputSpecs.at(0).kind == OutputKind::UserOutput);

    std::string written = writeExportedProgramJson(ep);
    CHECK(written.find("\"as_none\": null") == std::string::npos);
    CHECK(written.find("\"schema_version\": {\"major\": 8, ") != std::string::npos);
    ExportedProgram again = readExportedProgramJson(written, "written.json");
    CHECK(again == ep);
    CHECK(writeExportedProgramJson(again) == written);
  }
}

TEST_CASE("legacy all-keys unions pick the unique non-null member", "[serde][export-json]") {
  // as_none active as [] with every other member null, as in pre-5.x files.
  auto ep = readExportedProgramJson(programWithArgument(
      R"({"as_none": [], "as_tensor": null, "as_int": null, "as_float": null, "as_floats": null})"));
  CHECK(minArgument(ep).kind == ArgKind::None);
  ep = readExportedProgramJson(
      programWithArgument(R"({"as_none": null, "as_tensor": null, "as_int": null, "as_float": 2.5})"));
  CHECK(minArgument(ep) == Argument::real(2.5));
  // An active false / 0 / [] is not "null".
  ep = readExportedProgramJson(programWithArgument(R"({"as_none": null, "as_bool": false})"));
  CHECK(minArgument(ep) == Argument::boolean(false));
  ep = readExportedProgramJson(programWithArgument(R"({"as_ints": [], "as_none": null})"));
  CHECK(minArgument(ep) == Argument::ints_({}));
  // 8.x as_none: true, and the brief {"$type", "$value"} encoding of early 2024.
  ep = readExportedProgramJson(programWithArgument(R"({"as_none": true})"));
  CHECK(minArgument(ep).kind == ArgKind::None);
  ep = readExportedProgramJson(programWithArgument(R"({"$type": "as_int", "$value": 7})"));
  CHECK(minArgument(ep) == Argument::integer(7));
}

TEST_CASE("float fields accept Infinity strings and bare tokens", "[serde][export-json]") {
  auto ep = readExportedProgramJson(programWithArgument(R"({"as_float": "-Infinity"})"));
  CHECK(std::isinf(minArgument(ep).floatValue));
  CHECK(minArgument(ep).floatValue < 0);
  // Written back as torch's dumper does: the string form.
  std::string written = writeExportedProgramJson(ep);
  CHECK(written.find(R"({"as_float": "-Infinity"})") != std::string::npos);
  CHECK(readExportedProgramJson(written) == ep);

  ep = readExportedProgramJson(programWithArgument(R"({"as_floats": ["Infinity", 1, 0.25, "nan"]})"));
  const auto &floats = minArgument(ep).floats();
  REQUIRE(floats.size() == 4);
  CHECK(std::isinf(floats[0]));
  CHECK(floats[1] == 1.0);
  CHECK(floats[2] == 0.25);
  CHECK(std::isnan(floats[3]));

  // Bare tokens, as json.dumps wrote them before allow_nan=False.
  ExportedProgram bare = readExportedProgramJsonFile(kInputs + "bare_infinity.json");
  const Argument &alpha = bare.graph.nodes.at(0).inputs.at(2).arg;
  CHECK(alpha.kind == ArgKind::Float);
  CHECK(std::isinf(alpha.floatValue));
  CHECK(alpha.floatValue < 0);
  ep = readExportedProgramJson(programWithArgument(R"({"as_floats": [NaN, Infinity]})"));
  CHECK(std::isnan(minArgument(ep).floats().at(0)));
  CHECK(std::isinf(minArgument(ep).floats().at(1)));
}

TEST_CASE("omitted optional fields take schema.py defaults", "[serde][export-json]") {
  // programWithArgument omits kind, is_hop_single_tensor_return, name, device.index,
  // is_single_tensor_return, custom_obj_values, sym_float_values, metadata,
  // treespec_namedtuple_fields, verifiers, torch_version and guards_code.
  auto ep = readExportedProgramJson(programWithArgument(R"({"as_int": 0})"));
  CHECK(ep.schemaVersion == SchemaVersion{8, 2});
  CHECK(ep.torchVersion == "<=2.4");
  CHECK(ep.verifiers.empty());
  CHECK(ep.guardsCode.empty());
  CHECK(!ep.graph.isSingleTensorReturn);
  CHECK(!ep.graph.nodes[0].inputs[0].kind);
  CHECK(!ep.graph.tensorValues.find("x")->device.index());
  // The writer fills in the full form; reading that back gives the same IR.
  std::string written = writeExportedProgramJson(ep);
  CHECK(written.find(R"("kind": null)") != std::string::npos);
  CHECK(written.find(R"("torch_version": "<=2.4")") != std::string::npos);
  CHECK(written.find("guards_code") == std::string::npos); // not in schema 8.2
  CHECK(written.find(R"("name": null)") == std::string::npos); // Node.name is 8.17+
  CHECK(readExportedProgramJson(written) == ep);
}

TEST_CASE("every Argument kind survives a round trip", "[serde][export-json]") {
  const char *arguments[] = {
      R"({"as_tensors": [{"name": "x"}, {"name": "x"}]})",
      R"({"as_ints": [1, -2, 9007199254740993]})",
      R"({"as_floats": [0.1, 1e-05, 1e+16, -0.0]})",
      R"({"as_string": "a \"quoted\" \u00e9 string"})",
      R"({"as_strings": ["a", ""]})",
      R"({"as_bools": [true, false]})",
      R"({"as_sym_int": {"as_name": "s0"}})",
      R"({"as_sym_ints": [{"as_int": 3}, {"as_name": "sym_size_int"}]})",
      R"({"as_sym_bool": {"as_bool": true}})",
      R"({"as_sym_floats": [{"as_float": 1.5}, {"as_name": "f"}]})",
      R"({"as_scalar_type": 13})",
      R"({"as_memory_format": 2})",
      R"({"as_layout": 7})",
      R"({"as_device": {"type": "cuda", "index": 1}})",
      R"({"as_optional_tensors": [{"as_tensor": {"name": "x"}}, {"as_none": true}]})",
      R"({"as_optional_tensor": {"as_none": true}})",
      R"({"as_custom_obj": {"name": "obj", "class_fqn": "__torch__.torch.classes.Foo"}})",
      R"({"as_operator": "torch.ops.aten.add.Tensor"})",
      R"({"as_complex": {"real": 1.0, "imag": -2.5}})",
      R"({"as_int_lists": [[1, 2], []]})",
      R"({"as_string_to_argument": {"a": {"as_int": 1}, "b": {"as_tensor": {"name": "x"}}}})",
      R"({"as_nested_tensors": [[{"name": "x"}], []]})",
      R"({"as_graph": {"name": "true_graph_0", "graph": {"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}, "sym_int_values": {"s0": {"as_expr": {"expr_str": "s0", "hint": {"as_int": 4}}}}, "sym_bool_values": {}, "is_single_tensor_return": true}}})",
  };
  for (const char *argJson : arguments) {
    INFO(argJson);
    auto ep = readExportedProgramJson(programWithArgument(argJson));
    std::string written = writeExportedProgramJson(ep);
    auto again = readExportedProgramJson(written);
    CHECK(again == ep);
    CHECK(writeExportedProgramJson(again) == written);
  }
  auto ep = readExportedProgramJson(programWithArgument(R"({"as_scalar_type": 13})"));
  CHECK(minArgument(ep).intValue == static_cast<int64_t>(ScalarType::BFloat16));
  ep = readExportedProgramJson(programWithArgument(R"({"as_floats": [0.1, 1e-05, 1e+16, -0.0]})"));
  CHECK(writeExportedProgramJson(ep).find(R"({"as_floats": [0.1, 1e-05, 1e+16, -0.0]})") !=
        std::string::npos);
}

TEST_CASE("ScalarType numbering: torch, ExecuTorch serde, names", "[serde][export-json]") {
  auto withDtype = [](const std::string &dtype) {
    std::string json = programWithArgument(R"({"as_int": 0})");
    std::string from = R"("x": {"dtype": 7)";
    json.replace(json.find(from), from.size(), R"("x": {"dtype": )" + dtype);
    return json;
  };
  CHECK(readExportedProgramJson(withDtype("28")).graph.tensorValues.find("x")->dtype == ScalarType::UInt16);
  CHECK(readExportedProgramJson(withDtype("29")).graph.tensorValues.find("x")->dtype == ScalarType::Float8_e4m3fn);
  // exir/serde numbers for uint16 / float8_e5m2 / float8_e4m3fn.
  CHECK(readExportedProgramJson(withDtype("14")).graph.tensorValues.find("x")->dtype == ScalarType::UInt16);
  CHECK(readExportedProgramJson(withDtype("15")).graph.tensorValues.find("x")->dtype == ScalarType::Float8_e5m2);
  CHECK(readExportedProgramJson(withDtype("16")).graph.tensorValues.find("x")->dtype == ScalarType::Float8_e4m3fn);
  CHECK(readExportedProgramJson(withDtype("\"BFLOAT16\"")).graph.tensorValues.find("x")->dtype == ScalarType::BFloat16);
  ExportJsonOptions torchOnly;
  torchOnly.dtypeNumbering = DtypeNumbering::Torch;
  CHECK_THROWS_AS(readExportedProgramJson(withDtype("14"), "f", torchOnly), Error);
  Error e = parseError(withDtype("99"));
  CHECK(e.location() == "/graph_module/graph/tensor_values/x/dtype");
  CHECK(e.message() == "unknown ScalarType value 99");
  // Written back in torch numbering.
  auto ep = readExportedProgramJson(withDtype("14"));
  CHECK(writeExportedProgramJson(ep).find(R"("x": {"dtype": 28)") != std::string::npos);
}

TEST_CASE("schema versions: bare ints, 8.x minors, unknown majors", "[serde][export-json]") {
  auto withVersion = [](const std::string &version) {
    std::string json = programWithArgument(R"({"as_int": 0})");
    std::string from = R"("schema_version": {"major": 8, "minor": 2})";
    json.replace(json.find(from), from.size(), R"("schema_version": )" + version);
    return json;
  };
  CHECK(readExportedProgramJson(withVersion("2")).schemaVersion == currentSchemaVersion());
  CHECK(readExportedProgramJson(withVersion(R"({"major": 5, "minor": 1})")).schemaVersion ==
        currentSchemaVersion());
  CHECK(readExportedProgramJson(withVersion(R"({"major": 8, "minor": 99})")).schemaVersion ==
        SchemaVersion{8, 99});
  Error e = parseError(withVersion(R"({"major": 9, "minor": 0})"));
  CHECK(e.location() == "/schema_version");
  CHECK(e.message().find("unsupported schema version 9.0") != std::string::npos);
  e = readError(kInputs + "bad_schema_version.json");
  CHECK(e.location() == "/schema_version");
  CHECK(e.render().find("bad_schema_version.json': /schema_version: unsupported schema version 9.0") !=
        std::string::npos);
}

TEST_CASE("legacy 2.1 forms: dialect, dict signature, bare-string SymExpr", "[serde][export-json]") {
  std::string json = programWithArgument(R"({"as_int": 0})");
  auto replace = [&](const std::string &from, const std::string &to) {
    auto at = json.find(from);
    REQUIRE(at != std::string::npos);
    json.replace(at, from.size(), to);
  };
  replace(R"("signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}], "output_specs": [{"user_output": {"arg": {"as_tensor": {"name": "y"}}}}]})",
          R"("signature": {"parameters": [], "buffers": [], "user_inputs": ["x"], "user_outputs": ["y"], "inputs_to_parameters": {}, "inputs_to_buffers": {}, "buffers_to_mutate": {}, "backward_signature": null})");
  replace(R"("sym_int_values": {})", R"("sym_int_values": {"s0": {"as_expr": "s0", "as_int": null}})");
  replace(R"("schema_version": {"major": 8, "minor": 2})", R"("schema_version": 1, "dialect": "ATEN")");
  auto ep = readExportedProgramJson(json);
  REQUIRE(ep.signature.inputSpecs.size() == 1);
  CHECK(ep.signature.inputSpecs[0].kind == InputKind::UserInput);
  CHECK(ep.signature.inputSpecs[0].arg == Argument::tensor("x"));
  REQUIRE(ep.signature.outputSpecs.size() == 1);
  CHECK(ep.signature.outputSpecs[0].arg == Argument::tensor("y"));
  CHECK(ep.verifiers == std::vector<std::string>{"ATEN"});
  CHECK(ep.graph.symIntValues.find("s0")->isExpr);
  CHECK(ep.graph.symIntValues.find("s0")->expr() == "s0");
}

TEST_CASE("malformed inputs give one-line errors with JSON pointers", "[serde][export-json]") {
  struct Case {
    const char *file;
    const char *pointer;
    const char *message;
  } cases[] = {
      {"truncated.json", "/graph_module/graph/tensor_values", "invalid JSON at byte"},
      {"wrong_type.json", "/graph_module/graph/tensor_values/y/sizes/1/as_int",
       "expected an integer, found a string '3'"},
      {"unknown_tag.json", "/graph_module/graph/nodes/1/inputs/1/arg", "unknown Argument tag 'as_foo'"},
      {"missing_node_field.json", "/graph_module/graph/nodes/1", "missing required field 'target' of Node"},
      {"bad_schema_version.json", "/schema_version", "unsupported schema version 9.0"},
      {"two_members.json", "/graph_module/graph/nodes/0/inputs/0/arg",
       "Argument union has several non-null members: 'as_tensor', 'as_int'"},
  };
  for (const auto &c : cases) {
    INFO(c.file);
    Error e = readError(kInputs + c.file);
    CHECK(e.location().rfind(c.pointer, 0) == 0);
    CHECK(e.message().find(c.message) != std::string::npos);
    CHECK(e.file() == kInputs + c.file);
    CHECK(e.render().find('\n') == std::string::npos);
  }
  // The truncated document ends inside the first tensor_values entry.
  Error truncated = readError(kInputs + "truncated.json");
  CHECK(truncated.message().find("end of input") != std::string::npos);

  Error e = parseError(programWithArgument("{}"));
  CHECK(e.location() == "/graph_module/graph/nodes/0/inputs/1/arg");
  CHECK(e.message().find("no non-null member") != std::string::npos);
  e = parseError(programWithArgument("3"));
  CHECK(e.message() == "expected an object (Argument union), found an integer");
  e = parseError(programWithArgument(R"({"as_sym_int": {"as_float": 1.0}})"));
  CHECK(e.location() == "/graph_module/graph/nodes/0/inputs/1/arg/as_sym_int");
  CHECK(e.message() == "unknown SymIntArgument tag 'as_float'");
  e = parseError(R"({"graph_module": {}})");
  CHECK(e.message() == "missing required field 'schema_version' of ExportedProgram");
  e = parseError(R"([1, 2)");
  CHECK(e.message().find("invalid JSON at byte 5") != std::string::npos);
  CHECK(e.location() == "/");
}

TEST_CASE("JsonWriter formats like Python's json.dumps", "[serde][json-writer]") {
  auto repr = [](double v) {
    std::string out;
    appendPythonFloatRepr(out, v);
    return out;
  };
  // Expected strings produced by CPython 3.11 repr().
  CHECK(repr(1.0) == "1.0");
  CHECK(repr(0.3) == "0.3");
  CHECK(repr(0.1 + 0.2) == "0.30000000000000004");
  CHECK(repr(1e-05) == "1e-05");
  CHECK(repr(0.0001) == "0.0001");
  CHECK(repr(1e16) == "1e+16");
  CHECK(repr(1e15) == "1000000000000000.0");
  CHECK(repr(1.5e-7) == "1.5e-07");
  CHECK(repr(-3.14159) == "-3.14159");
  CHECK(repr(123456.789) == "123456.789");
  CHECK(repr(1.7976931348623157e308) == "1.7976931348623157e+308");
  CHECK(repr(5e-324) == "5e-324");
  CHECK(repr(-0.0) == "-0.0");

  JsonWriter w;
  w.beginObject();
  w.field("s", "\xc3\xa9\xe2\x80\xa8x\xf0\x9f\x98\x80\x7f\"\\\n\t\x01");
  w.key("l");
  w.beginArray();
  w.integer(-1);
  w.real(1.0 / 0.0);
  w.boolean(false);
  w.null();
  w.endArray();
  w.endObject();
  CHECK(w.str() == R"({"s": "\u00e9\u2028x\ud83d\ude00\u007f\"\\\n\t\u0001", "l": [-1, "Infinity", false, null]})");
}

TEST_CASE("JsonWriter streamed in small pieces writes the same text", "[serde][json-writer]") {
  auto write = [](JsonWriter &w) {
    w.beginObject();
    for (int i = 0; i < 200; ++i) {
      w.key("node_" + std::to_string(i));
      w.beginArray();
      w.integer(i);
      w.real(i / 7.0);
      w.string(std::string(size_t(i % 50), 'x') + "\xc3\xa9");
      w.endArray();
    }
    w.endObject();
  };
  JsonWriter whole;
  write(whole);
  std::string streamed;
  size_t pieces = 0;
  JsonWriter w;
  w.streamTo(
      [&](std::string_view text) {
        streamed.append(text);
        ++pieces;
      },
      256);
  write(w);
  w.flush();
  CHECK(streamed == whole.str());
  CHECK(pieces > 10); // it did stream: never more than about 256 bytes held
}

TEST_CASE("JsonWriter escapes a special byte at any position of short and long strings",
          "[serde][json-writer]") {
  // The escape check reads strings a word at a time with separate paths for
  // lengths 0-3, 4-7 and 8+ (overlapping tails); every position must be seen.
  const std::pair<char, const char *> specials[] = {
      {'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\x01', "\\u0001"}, {'\x1f', "\\u001f"},
      {'\x7f', "\\u007f"}, {'\xff', "\\u00ff"}};
  for (size_t length = 1; length <= 24; ++length)
    for (size_t pos = 0; pos < length; ++pos)
      for (const auto &[c, escaped] : specials) {
        std::string s(length, 'a');
        s[pos] = c;
        std::string expected = "\"" + std::string(pos, 'a') + escaped + std::string(length - pos - 1, 'a') + "\"";
        JsonWriter w;
        w.beginObject();
        w.key(s);
        w.string(s);
        w.endObject();
        INFO("length " << length << ", byte " << int(static_cast<unsigned char>(c)) << " at " << pos);
        CHECK(w.str() == "{" + expected + ": " + expected + "}");
      }
  JsonWriter w;
  w.beginArray();
  for (size_t length = 0; length <= 24; ++length) w.string(std::string(length, '~'));
  w.endArray();
  std::string plain = "[";
  for (size_t length = 0; length <= 24; ++length) plain += (length ? ", \"" : "\"") + std::string(length, '~') + "\"";
  CHECK(w.str() == plain + "]");
}

TEST_CASE("JsonWriter escapes runs of special bytes next to the bytes a word check may misflag",
          "[serde][json-writer]") {
  // The word check marks the first byte to escape exactly but may also mark
  // bytes after it (' ' after a control byte, '#' after '"', ']' after '\\');
  // every string here is compared with a byte-at-a-time reference.
  const char alphabet[] = {'a', ' ', '!', '"', '#', '\\', ']', '\n', '\x1f', '\x01', '~', '\x7f', '\t'};
  auto reference = [](const std::string &s) {
    std::string out = "\"";
    for (unsigned char c : s) {
      if (c == '"') out += "\\\"";
      else if (c == '\\') out += "\\\\";
      else if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else out += char(c);
    }
    return out + "\"";
  };
  uint32_t state = 12345;
  for (int round = 0; round < 3000; ++round) {
    state = state * 1103515245u + 12345u;
    std::string s(size_t(state >> 16) % 41, 'a');
    for (char &c : s) {
      state = state * 1103515245u + 12345u;
      c = alphabet[(state >> 16) % sizeof alphabet];
    }
    JsonWriter w;
    w.string(s);
    std::string text;
    appendJsonString(text, s);
    INFO("round " << round);
    CHECK(w.str() == reference(s));
    CHECK(text == reference(s));
  }
}
