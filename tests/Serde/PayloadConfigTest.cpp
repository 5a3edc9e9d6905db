//===- tests/Serde/PayloadConfigTest.cpp - PT2 weights configs in place ---===//
//
// scanPayloadConfig reads torch's PayloadConfig form and gives up on anything
// only the DOM reader may decide; an archive read through either path gives
// the same constants and the same errors (harmless deep nesting in an ignored
// field sends a config down the DOM path).
//
//===----------------------------------------------------------------------===//
#include "Serde/PayloadConfig.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "StoredZip.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>

using namespace exir;
using exir::test::writeStoredZip;
namespace fs = std::filesystem;

namespace {

const std::string kMeta = R"({"dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 3}], "requires_grad": true,
    "device": {"type": "cpu", "index": null}, "strides": [{"as_int": 3}, {"as_int": 1}],
    "storage_offset": {"as_int": 0}, "layout": 7})";

// torch's form, with fields reordered, bare ints, unknown fields and odd spacing.
const std::string kConfig = R"({"config": {
  "a.weight": {"path_name": "weight_0", "is_param": true, "use_pickle": false, "tensor_meta": )" + kMeta + R"(},
  "a.bias":{"tensor_meta":{"layout":7,"storage_offset":1,"strides":[1],"device":{"index":0,"type":"cuda","x":[]},
            "requires_grad":false,"sizes":[3],"dtype":6,"new_field":{"deep":[1,[2,{"k":null}]]}},
            "path_name":"weight_1","use_pickle":false},
  "obj": {"path_name": "obj_0", "is_param": false, "use_pickle": true, "tensor_meta": null}
 }, "format_version": 1}
)";

std::string scratchDir(const std::string &name) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "serde-test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

// The scanner reads `text` from simdjson's padded copy.
std::optional<PayloadTable> scan(const std::string &text) { return scanPayloadConfig(simdjson::padded_string(text)); }

// The same config sent down the DOM path: nesting deeper than the scanner
// follows, in a root field nothing reads.
std::string throughDom(const std::string &config) {
  return "{\"pad\": " + std::string(40, '[') + std::string(40, ']') + ", " + config.substr(1);
}

// A PT2 archive `name` in `dir` holding `config` and weight members weight_0..2.
std::string archiveWith(const std::string &dir, const std::string &name, const std::string &config) {
  std::string path = dir + "/" + name;
  writeStoredZip(path, {{"m/archive_format", "pt2"},
                        {"m/models/model.json", "{}"},
                        {"m/data/weights/weight_0", std::string(24, '\1')},
                        {"m/data/weights/weight_1", std::string(16, '\2')},
                        {"m/data/weights/weight_2", std::string(24, '\3')},
                        {"m/data/weights/model_weights_config.json", config}});
  return path;
}

// The constants of `config` read both ways (they must agree), or the error
// both ways report (which must be the same), as text.
std::string readBothWays(const std::string &config) {
  REQUIRE(scan(config));
  REQUIRE(!scan(throughDom(config)));
  std::string dir = scratchDir("payload-config");
  std::string outcomes[2];
  for (int dom = 0; dom < 2; ++dom) {
    std::string path = archiveWith(dir, dom ? "dom.pt2" : "scan.pt2", dom ? throughDom(config) : config);
    try {
      std::string text;
      for (const auto &[fqn, c] : readArchiveConstants(path)) {
        text += fqn + " " + std::to_string(int(c.dtype)) + " " + std::to_string(c.sizes.size()) + "/" +
                std::to_string(c.strides.size()) + " " + std::to_string(c.storageOffset) + " " +
                std::to_string(c.data.offset) + "+" + std::to_string(c.data.length) + ";";
        for (int64_t v : c.sizes) text += " " + std::to_string(v);
        for (int64_t v : c.strides) text += " " + std::to_string(v);
        text += "\n";
      }
      outcomes[dom] = text;
    } catch (const Error &e) {
      REQUIRE(e.file().rfind(path, 0) == 0);
      outcomes[dom] = "error in" + e.file().substr(path.size()) + " at " + e.location() + ": " + e.message();
    }
  }
  CHECK(outcomes[0] == outcomes[1]);
  return outcomes[0];
}

} // namespace

TEST_CASE("scanPayloadConfig reads torch's form in place", "[serde][archive]") {
  std::optional<PayloadTable> table = scan(kConfig);
  REQUIRE(table);
  REQUIRE(table->entries.size() == 3);
  auto ints = [&](uint32_t at, uint32_t count) {
    return std::vector<int64_t>(table->ints.begin() + at, table->ints.begin() + at + count);
  };
  const PayloadEntry &w = table->entries[0];
  CHECK(w.fqn == "a.weight");
  CHECK(w.pathName == "weight_0");
  CHECK(w.tensor);
  CHECK(!w.usePickle);
  CHECK(w.dtype == ScalarType::Float);
  CHECK(ints(w.sizesAt, w.sizesCount) == std::vector<int64_t>{2, 3});
  CHECK(ints(w.stridesAt, w.stridesCount) == std::vector<int64_t>{3, 1});
  CHECK(w.storageOffset == 0);
  const PayloadEntry &b = table->entries[1];
  CHECK(b.fqn == "a.bias");
  CHECK(b.pathName == "weight_1");
  CHECK(b.dtype == ScalarType::Half);
  CHECK(ints(b.sizesAt, b.sizesCount) == std::vector<int64_t>{3});
  CHECK(ints(b.stridesAt, b.stridesCount) == std::vector<int64_t>{1});
  CHECK(b.storageOffset == 1);
  const PayloadEntry &o = table->entries[2];
  CHECK(o.pathName == "obj_0");
  CHECK(o.usePickle);
  CHECK(!o.tensor);
  CHECK(scan(R"({"config": {}})"));
}

TEST_CASE("scanPayloadConfig reads escapes, UTF-8 and any int64 as the DOM reader does", "[serde][archive]") {
  // Keys and strings are unescaped by simdjson, as in the DOM; every number
  // the DOM reads as an int64 reads the same; skipped values may be floats.
  std::string config = R"({"c\u006fnfig": {"a.w\u00e9ight": {"path\u005fname": "weight\u005f0", "x": [1.5, -2e3],
      "tensor_meta": {"dtype": 7, "sizes": [{"as_int": 9223372036854775807}, -9223372036854775808],
        "requires_grad": true, "device": {"type": "c\"pu", "index": -0}, "strides": [{"as_int": -0}, 1],
        "storage_offset": {"as_int": 1234567890123456789}, "layout": 7}},
    )" "\"b\xc3\xa9\"" R"(: {"path_name": "weight_1", "tensor_meta": )" + kMeta + "}}}";
  std::optional<PayloadTable> table = scan(config);
  REQUIRE(table);
  REQUIRE(table->entries.size() == 2);
  const PayloadEntry &w = table->entries[0];
  CHECK(w.fqn == "a.w\xc3\xa9ight");
  CHECK(w.pathName == "weight_0");
  CHECK(w.storageOffset == 1234567890123456789);
  CHECK(std::vector<int64_t>(table->ints.begin() + w.sizesAt, table->ints.begin() + w.sizesAt + 2) ==
        std::vector<int64_t>{INT64_MAX, INT64_MIN});
  CHECK(table->ints[w.stridesAt] == 0);
  CHECK(table->entries[1].fqn == "b\xc3\xa9");
  std::string constants = readBothWays(config);
  CHECK(constants.find("a.w\xc3\xa9ight 6 2/2 1234567890123456789 ") == 0);
  CHECK(constants.find("\nb\xc3\xa9 6 2/2 0 ") != std::string::npos);
}

TEST_CASE("scanPayloadConfig leaves to the DOM reader what only it decides", "[serde][archive]") {
  auto replaced = [](std::string text, const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  const std::string meta = R"("dtype": 7, "sizes": [{"as_int": 2}, {"as_int": 3}])";
  const std::pair<std::string, std::string> edits[] = {
      {"\"a.weight\"", "\"a.w\\xight\""},                 // an invalid escape in a key
      {"\"cpu\"", "\"c\\qpu\""},                            // ... in a value nothing reads
      {"\"weight_0\"", "\"w\\ud800\""},                     // a lone surrogate
      {"\"a.weight\"", "\"a.w\xc3ight\""},                  // invalid UTF-8
      {"\"a.weight\"", "\"a.\tweight\""},                   // a raw control character
      {"\"dtype\": 7", "\"dtype\": 7.0"},                   // an integral float
      {"\"dtype\": 7", "\"dtype\": 7e0"},
      {"\"dtype\": 7", "\"dtype\": 0"},                     // Undefined
      {"\"dtype\": 7", "\"dtype\": 14"},                    // ExecuTorch serde numbers
      {"\"dtype\": 7", "\"dtype\": 16"},
      {"\"dtype\": 7", "\"dtype\": 99"},                    // unknown
      {"\"dtype\": 7", "\"dtype\": \"FLOAT\""},             // by name
      {"\"dtype\": 7", "\"dtype\": 07"},                    // a leading zero
      {"{\"as_int\": 0}", "{\"as_int\": 9223372036854775808}"}, // past int64
      {"{\"as_int\": 0}", "{\"as_int\": -9223372036854775809}"},
      {"{\"as_int\": 0}", "{\"as_int\": 0x}"},
      {"{\"as_int\": 0}", "{\"as_int\": 0, \"as_expr\": null}"},
      {"{\"as_int\": 2}", "{\"as_expr\": {\"expr_str\": \"s0\"}}"},
      {"\"layout\": 7", "\"layout\": \"Strided\""},
      {"\"layout\": 7", "\"layout\": 9"},
      {"\"layout\": 7", "\"layout\": 7, \"layout\": 7"},  // a duplicate key
      {"\"path_name\": \"weight_0\"", "\"path_name\": \"weight_0\", \"path_name\": \"weight_1\""},
      {"\"type\": \"cpu\", ", ""},                        // a Device without its type
      {", \"layout\": 7", ""},                            // a TensorMeta without a required field
      {meta, "\"meta\": {" + meta + "}"},                 // torch 2.1's wrapper
      {"\"is_param\": true", "\"is_param\": tru"},     // skipped values are checked too
      {"\"is_param\": true", "\"is_param\": nul"},
      {"\"is_param\": true", "\"is_param\": 1.5e"},
      {"\"is_param\": true", "\"is_param\": 01"},
      {"\"is_param\": true", "\"is_param\": [1,]"},
      {"\"is_param\": true", "\"is_param\": [1 2]"},
      {"\"is_param\": true", "\"is_param\": {\"k\" 1}"},
      {"\"is_param\": true", "\"is_param\": {\"k\": 1,}"},
      {"\"is_param\": true", "\"is_param\": {1: 1}"},
      {"\"is_param\": true", "\"is_param\": [}"},
      {"\"is_param\": true", "\"is_param\": \"\\x\""},
      {"\"is_param\": true", "\"is_param\": {\"\\x\": 1}"},
      {"\"is_param\": true", "\"is_param\": " + std::string(40, '[') + std::string(40, ']')},
      {"\"tensor_meta\": null", "\"tensor_meta\": []"},
      {"\"use_pickle\": true", "\"use_pickle\": 1"},
      {"\"format_version\": 1", "\"config\": {}"},        // a second config: the DOM reads the first
      {"\"format_version\": 1}", "\"format_version\": 1}}"}, // text after the document
      {"\"format_version\": 1}", "\"format_version\": 1"},  // cut short
  };
  for (const auto &[from, to] : edits) {
    INFO(from << " -> " << to);
    CHECK(!scan(replaced(kConfig, from, to)));
  }
  for (const char *text : {"", "[]", "{}", "{\"config\": []}", "{\"config\": {\"w\": 1}}", "{\"config\": {}} x"}) {
    INFO(text);
    CHECK(!scan(text));
  }
}

TEST_CASE("PT2 weights configs give the same constants and errors scanned as through the DOM", "[serde][archive]") {
  std::string table = readBothWays(kConfig);
  CHECK(table.find("a.weight 6 2/2 0 ") == 0); // Float is c10 ScalarType 6
  CHECK(table.find("\na.bias 5 1/1 1 ") != std::string::npos);
  CHECK(table.find("obj") == std::string::npos); // not a tensor

  // Tied weights: one FQN twice with the same data is one constant.
  std::string tied = R"({"config": {"w": {"path_name": "weight_2", "tensor_meta": )" + kMeta +
                     R"(}, "w": {"path_name": "weight_2", "tensor_meta": )" + kMeta + "}}}";
  CHECK(readBothWays(tied).find("w 6 2/2 0 ") == 0);

  // Each error, at the same pointer with the same words.
  struct Case {
    std::string config, error;
  } cases[] = {
      {R"({"config": {"w": {"use_pickle": false, "tensor_meta": null}}})",
       "error in:m/data/weights/model_weights_config.json at /config/w: missing required field 'path_name' of PayloadMeta"},
      {R"({"config": {"w": {"path_name": "", "tensor_meta": )" + kMeta + "}}}",
       "error in:m/data/weights/model_weights_config.json at /config/w: missing required field 'path_name' of PayloadMeta"},
      {R"({"config": {"v": {"path_name": "weight_1", "tensor_meta": )" + kMeta +
           R"(}, "w/x": {"path_name": "weight_9", "tensor_meta": )" + kMeta + "}}}",
       "error in:m/data/weights/model_weights_config.json at /config/w~1x: payload member 'm/data/weights/weight_9' is missing from the archive"},
      {R"({"config": {"w": {"path_name": "weight_0", "tensor_meta": )" + kMeta +
           R"(}, "w": {"path_name": "weight_2", "tensor_meta": )" + kMeta + "}}}",
       "error in:m/data/weights/model_weights_config.json at : constant 'w' is defined twice with different data"},
      {R"({"config": {"w": {"path_name": "weight_0", "use_pickle": true, "tensor_meta": )" + kMeta + "}}}",
       "error in:m/data/weights/weight_0 at byte 0: not a valid zip archive"},
  };
  for (const auto &c : cases) {
    INFO(c.config);
    std::string outcome = readBothWays(c.config);
    CHECK(outcome.substr(0, c.error.size()) == c.error);
  }
}
