//===- tests/Serde/ProgramReaderTest.cpp - Archives and input detection ---===//
//
// Reading the real PT2 archive and ETRecord of the corpus (weights as DataRefs
// into the archive, checked against the bytes libzip extracts), a legacy
// torch.export.save zip assembled here with nested torch.save pickles, and
// round trips through the stage artifact.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"
#include "Serde/TorchPickle.h"
#include "Serde/ZipArchive.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "StoredZip.h"

#include <catch2/catch.hpp>
#include <zip.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

using namespace exir;
using exir::test::writeStoredZip;
namespace fs = std::filesystem;

namespace {

const std::string kPt2 = EXIR_SHARED_DIR "/corpus/pt2/et_pt2archive_linear_2025-09.pt2";
const std::string kETRecord = EXIR_SHARED_DIR "/corpus/pt2/executorch_etrecord.bin";
const std::string kInputs = EXIR_SOURCE_DIR "/testdata/lit/serde/Inputs/";

std::string scratchDir(const std::string &name) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "serde-test-tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::string bytesAt(const DataRef &ref) {
  if (ref.inlineBytes) return *ref.inlineBytes;
  return readFileRange(ref.file, ref.offset, ref.length);
}

// Writes `program` to `dir`/name, reads it back, checks equality and that a
// second write gives the same bytes. Returns the written text.
std::string checkArtifactRoundTrip(const Program &program, const std::string &dir, const std::string &name) {
  std::string path = dir + "/" + name;
  writeProgram(program, path);
  std::string first = readFileOrStdin(path);
  Program again = readProgram(path);
  CHECK(again == program);
  writeProgram(again, path);
  CHECK(readFileOrStdin(path) == first);
  return first;
}

// A tiny pickle assembler for the opcodes torch.save uses.
struct Pickle {
  std::string bytes = "\x80\x02";
  Pickle &op(char c) {
    bytes += c;
    return *this;
  }
  Pickle &str(const std::string &s) {
    bytes += 'X';
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((s.size() >> (8 * i)) & 0xff);
    bytes += s;
    return *this;
  }
  Pickle &global(const std::string &module, const std::string &name) {
    bytes += 'c' + module + "\n" + name + "\n";
    return *this;
  }
  Pickle &int1(int v) {
    bytes += 'K';
    bytes += static_cast<char>(v);
    return *this;
  }
  Pickle &emptyOrderedDict() { return global("collections", "OrderedDict").op(')').op('R'); }
  // _rebuild_tensor_v2(storage, offset, (sizes), (strides), False, OrderedDict())
  Pickle &tensor(const char *storageClass, const char *key, int numel, int offset, std::vector<int> sizes,
                 std::vector<int> strides) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    op('(').str("storage").global("torch", storageClass).str(key).str("cpu").int1(numel).op('t').op('Q');
    int1(offset);
    op('(');
    for (int s : sizes) int1(s);
    op('t').op('(');
    for (int s : strides) int1(s);
    op('t').op('\x89');
    emptyOrderedDict();
    return op('t').op('R');
  }
};

template <typename T> std::string rawBytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

} // namespace

TEST_CASE("PT2 archive: program and raw weights as DataRefs into the archive", "[serde][archive]") {
  CHECK(detectInputFormat(kPt2) == InputFormat::Pt2Archive);
  Program p = readProgram(kPt2);
  CHECK(p.stage == Stage::Aten);
  REQUIRE(p.methods.size() == 1);
  REQUIRE(p.methods.find("forward"));
  CHECK(p.methods.find("forward")->program.graph.nodes.at(0).target == "torch.ops.aten.linear.default");

  REQUIRE(p.constants.size() == 2);
  ZipArchive zip(kPt2);
  struct Expect {
    const char *fqn;
    const char *member;
    uint64_t length;
    std::vector<int64_t> sizes, strides;
  } expects[] = {{"linear.weight", "linear_3/data/weights/weight_0", 36, {3, 3}, {3, 1}},
                 {"linear.bias", "linear_3/data/weights/weight_1", 12, {3}, {1}}};
  for (const auto &e : expects) {
    INFO(e.fqn);
    const ConstantTensor *c = p.constants.find(e.fqn);
    REQUIRE(c);
    CHECK(c->dtype == ScalarType::Float);
    CHECK(c->sizes == e.sizes);
    CHECK(c->strides == e.strides);
    CHECK(c->storageOffset == 0);
    CHECK(!c->data.inlineBytes);
    CHECK(fs::path(c->data.file).is_absolute());
    CHECK(fs::equivalent(c->data.file, kPt2));
    CHECK(c->data.length == e.length);
    // The bytes at the DataRef are exactly what libzip extracts for the member.
    std::string viaZip = zip.read(e.member);
    REQUIRE(viaZip.size() == e.length);
    CHECK(bytesAt(c->data) == viaZip);
    // PT2 members are 64-byte aligned by torch's writer.
    CHECK(c->data.offset % 64 == 0);
  }
  CHECK(p.constants.begin()->first == "linear.weight");

  auto programs = readArchivePrograms(kPt2);
  REQUIRE(programs.size() == 1);
  CHECK(programs[0].first == "model");
  CHECK(programs[0].second == p.methods.find("forward")->program);
}

TEST_CASE("PT2 archive round-trips through the artifact", "[serde][archive][artifact]") {
  std::string dir = scratchDir("pt2-roundtrip");
  Program p = readProgram(kPt2);
  std::string text = checkArtifactRoundTrip(p, dir, "linear.aten.json");
  // DataRef paths are written relative to the output file's directory.
  std::string relative = fs::path(kPt2).lexically_normal().lexically_relative(fs::absolute(dir)).string();
  if (fs::path(kPt2).is_absolute())
    CHECK(text.find("\"file\": \"" + relative + "\"") != std::string::npos);
  CHECK(text.rfind(R"({"format": "exir-program", "format_version": 1, "stage": "aten", "methods": {"forward": {"graph_module": )", 0) == 0);
  // ... and absolute for stdout.
  std::string forStdout = writeProgramJsonString(p, "");
  CHECK(forStdout.find("\"file\": \"" + fs::absolute(kPt2).lexically_normal().string() + "\"") !=
        std::string::npos);
  // A copy in another directory still resolves to the archive.
  std::string sub = dir + "/nested";
  fs::create_directories(sub);
  writeProgram(p, sub + "/copy.json");
  Program copy = readProgram(sub + "/copy.json");
  CHECK(copy == p);
  CHECK(bytesAt(copy.constants.find("linear.bias")->data) == bytesAt(p.constants.find("linear.bias")->data));
}

TEST_CASE("ETRecord: both programs, readProgram picks the edge one", "[serde][archive]") {
  CHECK(detectInputFormat(kETRecord) == InputFormat::ETRecord);
  auto programs = readArchivePrograms(kETRecord);
  REQUIRE(programs.size() == 2);
  CHECK(programs[0].first == "edge_dialect_exported_program");
  CHECK(programs[1].first == "aten_dialect_output/forward");
  CHECK(guessStage(programs[0].second) == Stage::Edge);
  CHECK(guessStage(programs[1].second) == Stage::Aten);

  Program p = readProgram(kETRecord);
  CHECK(p.stage == Stage::Edge);
  CHECK(p.methods.find("forward")->program == programs[0].second);
  CHECK(p.constants.empty()); // its state dict pickle is an empty dict

  std::string dir = scratchDir("etrecord-roundtrip");
  for (auto &[name, ep] : programs) {
    INFO(name);
    Program single = programFromExportedProgram(ep, guessStage(ep));
    checkArtifactRoundTrip(single, dir, "etrecord.json");
    // The bare torch.export JSON form round-trips too.
    std::string bare = writeExportedProgramJson(ep);
    writeFileAtomically(dir + "/bare.json", bare);
    CHECK(detectInputFormat(dir + "/bare.json") == InputFormat::ExportJson);
    Program fromBare = readProgram(dir + "/bare.json");
    CHECK(fromBare.stage == guessStage(ep));
    CHECK(fromBare.methods.find("forward")->program == ep);
    CHECK(writeExportedProgramJson(fromBare.methods.find("forward")->program) == bare);
  }
}

TEST_CASE("legacy torch.export.save zip with nested torch.save weights", "[serde][archive][pickle]") {
  std::string dir = scratchDir("legacy-zip");
  // state dict {"w": Parameter(float [2,2]), "b": long tensor [3] at storage offset 1}
  Pickle pk;
  pk.op('}').op('(');
  pk.str("w").global("torch._utils", "_rebuild_parameter").op('(');
  pk.tensor("FloatStorage", "0", 4, 0, {2, 2}, {2, 1});
  pk.op('\x88').emptyOrderedDict().op('t').op('R');
  pk.str("b").tensor("LongStorage", "1", 4, 1, {3}, {1});
  pk.op('u').op('.');
  std::string floats = rawBytes<float>({1.5f, 2.5f, -3.0f, 4.0f});
  std::string longs = rawBytes<int64_t>({10, 11, 12, 13});
  std::string nested = dir + "/state_dict.pt";
  writeStoredZip(nested, {{"archive/data.pkl", pk.bytes},
                          {"archive/data/0", floats},
                          {"archive/data/1", longs},
                          {"archive/version", "3\n"}});

  auto tensors = readPickledTensors(pk.bytes, "state_dict.pkl");
  REQUIRE(tensors.size() == 2);
  CHECK(tensors[0].first == "w");
  CHECK(tensors[1].second.storageOffset == 1);
  CHECK(tensors[1].second.storageBytes == 32);

  std::string archive = dir + "/legacy.pt2";
  writeStoredZip(archive, {{"serialized_exported_program.json", readFileOrStdin(kInputs + "add_mul.json")},
                           {"serialized_state_dict.pt", readFileOrStdin(nested)},
                           {"serialized_constants.pt", ""},
                           {"version", "8.2"}});
  CHECK(detectInputFormat(archive) == InputFormat::LegacyExportZip);
  Program p = readProgram(archive);
  CHECK(p.methods.find("forward")->program.graph.nodes.size() == 2);
  REQUIRE(p.constants.size() == 2);
  const ConstantTensor *w = p.constants.find("w");
  REQUIRE(w);
  CHECK(w->dtype == ScalarType::Float);
  CHECK(w->sizes == std::vector<int64_t>{2, 2});
  CHECK(w->strides == std::vector<int64_t>{2, 1});
  CHECK(bytesAt(w->data) == floats);
  const ConstantTensor *b = p.constants.find("b");
  REQUIRE(b);
  CHECK(b->dtype == ScalarType::Long);
  CHECK(b->storageOffset == 1);
  CHECK(bytesAt(b->data) == longs);
  checkArtifactRoundTrip(p, dir, "legacy.json");
}

TEST_CASE("pickles outside the allow-list are refused", "[serde][pickle]") {
  Pickle pk;
  pk.global("os", "system").str("echo hi").op('\x85').op('R').op('.');
  try {
    readPickledTensors(pk.bytes, "evil.pkl");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.message().find("unsupported pickle callable 'os.system'") != std::string::npos);
    CHECK(e.file() == "evil.pkl");
  }
  CHECK_THROWS_AS(readPickledTensors(std::string("\x80\x02}(X", 5), "truncated.pkl"), Error);
}

TEST_CASE("corrupt and unrecognised archives are refused", "[serde][archive]") {
  std::string corrupt = kInputs + "corrupt.pt2";
  try {
    readProgram(corrupt);
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.file() == corrupt);
    CHECK(e.message().find("not a valid zip archive") != std::string::npos);
  }
  std::string dir = scratchDir("unrecognised-zip");
  writeStoredZip(dir + "/other.zip", {{"hello.txt", "hi"}});
  try {
    readProgram(dir + "/other.zip");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.message().find("not a torch.export archive") != std::string::npos);
  }
  // A PT2 archive whose model JSON is broken reports the member and the pointer.
  writeStoredZip(dir + "/broken.pt2", {{"m/archive_format", "pt2"},
                                       {"m/models/model.json", readFileOrStdin(kInputs + "unknown_tag.json")}});
  try {
    readProgram(dir + "/broken.pt2");
    FAIL("expected an error");
  } catch (const Error &e) {
    CHECK(e.file() == dir + "/broken.pt2:m/models/model.json");
    CHECK(e.location() == "/graph_module/graph/nodes/1/inputs/1/arg");
  }
}

TEST_CASE("ZipArchive::readPadded gives read()'s bytes and checks the CRC as read() does", "[serde][archive]") {
  std::string dir = scratchDir("read-padded");
  std::string path = dir + "/a.zip";
  std::string big(200000, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = char('a' + i % 26);
  writeStoredZip(path, {{"empty", ""}, {"small.json", "{\"a\": 1}"}, {"big.json", big}});
  {
    ZipArchive zip(path);
    CHECK(zip.fileSize() == fs::file_size(path));
    for (const char *name : {"empty", "small.json", "big.json"}) {
      INFO(name);
      simdjson::padded_string padded = zip.readPadded(name);
      CHECK(std::string_view(padded.data(), padded.size()) == zip.read(name));
    }
    CHECK_THROWS_AS(zip.readPadded("missing"), Error);
  }
  // One byte of big.json changed in place: its CRC no longer matches.
  uint64_t offset = ZipArchive(path).dataOffset("big.json") + 1000;
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(offset));
    f.put('#');
  }
  ZipArchive zip(path);
  CHECK_THROWS_AS(zip.read("big.json"), Error);
  CHECK_THROWS_AS(zip.readPadded("big.json"), Error);
}

TEST_CASE("large archives report the sequential read's first error", "[serde][archive]") {
  // An archive of 1024+ members reads its program beside its CRC check and its
  // constants table; one with fewer reads them one after the other. Both must
  // report the same first error: the model's CRC, then the model, then the table.
  std::string dir = scratchDir("archive-error-order");
  std::string model = readFileOrStdin(kInputs + "add_mul.json");
  std::string wrongType = readFileOrStdin(kInputs + "wrong_type.json");
  std::string meta = R"({"dtype": 7, "sizes": [], "requires_grad": false, "device": {"type": "cpu"},
      "strides": [], "storage_offset": 0, "layout": 7})";
  auto outcome = [&](const std::string &name, size_t weights, bool badCrc, bool badModel, bool badTable) {
    std::vector<std::pair<std::string, std::string>> members = {
        {"m/archive_format", "pt2"}, {"m/models/model.json", badModel ? wrongType : model}};
    std::string config = "{\"config\": {";
    for (size_t i = 0; i < weights; ++i) {
      members.emplace_back("m/data/weights/w" + std::to_string(i), std::string(4, char(i)));
      std::string pathName = badTable && i == 0 ? "missing" : "w" + std::to_string(i);
      config += (i ? ", \"" : "\"") + std::to_string(i) + "\": {\"path_name\": \"" + pathName +
                "\", \"tensor_meta\": " + meta + "}";
    }
    members.emplace_back("m/data/weights/model_weights_config.json", config + "}}");
    std::string path = dir + "/" + name;
    writeStoredZip(path, members);
    if (badCrc) { // one byte of the model's text changed in place
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(std::streamoff(ZipArchive(path).dataOffset("m/models/model.json") + 100));
      f.put('\x01');
    }
    try {
      Program p = readProgram(path);
      CHECK(p.constants.size() == weights);
      return std::string("read");
    } catch (const Error &e) {
      REQUIRE(e.file().rfind(path, 0) == 0);
      return e.file().substr(path.size()) + " " + e.location() + " " + e.message();
    }
  };
  for (int errors = 0; errors < 8; ++errors) {
    bool badCrc = errors & 1, badModel = errors & 2, badTable = errors & 4;
    INFO("crc " << badCrc << ", model " << badModel << ", table " << badTable);
    std::string small = outcome("small.pt2", 10, badCrc, badModel, badTable);
    std::string large = outcome("large.pt2", 1100, badCrc, badModel, badTable);
    CHECK(small == large);
    if (badCrc) CHECK(small.find(" byte ") == 0);
    if (badCrc) CHECK(small.find(" cannot read zip member 'm/models/model.json': CRC error") != std::string::npos);
    else if (badModel) CHECK(small.find(":m/models/model.json /graph_module/") == 0);
    else if (badTable)
      CHECK(small == ":m/data/weights/model_weights_config.json /config/0 payload member "
                     "'m/data/weights/missing' is missing from the archive");
    else CHECK(small == "read");
  }
}

TEST_CASE("stdin: JSON is read, a zip is refused", "[serde][archive]") {
  struct StdinFrom {
    explicit StdinFrom(const std::string &text) : stream(text), saved(std::cin.rdbuf(stream.rdbuf())) {}
    ~StdinFrom() { std::cin.rdbuf(saved); }
    std::istringstream stream;
    std::streambuf *saved;
  };
  {
    StdinFrom in(readFileOrStdin(kInputs + "add_mul.json"));
    Program p = readProgram("-");
    CHECK(p.stage == Stage::Aten);
    CHECK(p.methods.find("forward")->program.graph.nodes.size() == 2);
    CHECK(p.baseDirectory == fs::current_path().string());
  }
  {
    StdinFrom in(readFileOrStdin(kPt2));
    try {
      readProgram("-");
      FAIL("expected an error");
    } catch (const Error &e) {
      CHECK(e.message().find("cannot be read from stdin") != std::string::npos);
    }
  }
}
