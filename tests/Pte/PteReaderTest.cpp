//===- tests/Pte/PteReaderTest.cpp - Bad input handling of readPte -------===//
//
// Truncated files, wrong identifiers, broken extended headers and corrupted
// flatbuffers must end in exir::Error with a useful message, never a crash.
// A few hundred random corruptions and truncations of real files check that
// whatever readPte accepts can also be dumped and rewritten.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDiff.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Pte/PteWriter.h"
#include "Pte/PteTestUtil.h"
#include "Support/Error.h"

#include "program_generated.h"

#include <catch2/catch.hpp>

#include <functional>
#include <random>
#include <sstream>

using namespace exir::pte;
using namespace exir::pte::test;

namespace {

/// The message of the exir::Error readPte throws, or "" if it does not throw.
std::string readError(const std::string &bytes) {
  try {
    readPte(bytes, "bad.pte");
  } catch (const exir::Error &e) {
    CHECK(e.file() == "bad.pte");
    CHECK_FALSE(e.location().empty());
    return e.message();
  }
  return "";
}

void putLE(std::string &bytes, size_t at, uint64_t value, int width) {
  for (int i = 0; i < width; ++i) bytes[at + i] = char((value >> (8 * i)) & 0xFF);
}

} // namespace

TEST_CASE("truncated files", "[pte][reader]") {
  std::string arduino = writePteToString(goldenConstantAddModel());
  uint64_t programSize = readLE(arduino, 16, 8);

  CHECK(readError("") == "truncated: file has 0 bytes, a .pte needs at least 8");
  CHECK(readError(arduino.substr(0, 5)) == "truncated: file has 5 bytes, a .pte needs at least 8");
  std::string cut = arduino.substr(0, programSize - 10);
  CHECK(readError(cut) == "truncated: program_size " + std::to_string(programSize) + " exceeds file size " +
                              std::to_string(programSize - 10));
  // Segment data missing at the end.
  std::string noSegment = arduino.substr(0, arduino.size() - 2);
  CHECK(readError(noSegment).rfind("truncated: segment data ends at byte", 0) == 0);
  // A file without an extended header cut in the middle of the flatbuffer.
  std::string add = writePteToString(goldenAddModel());
  CHECK(readError(add.substr(0, add.size() / 2)).rfind("flatbuffer verification failed", 0) == 0);
  CHECK(readError(arduino.substr(0, 14)).rfind("truncated: extended header length field", 0) == 0);
  CHECK(readError(arduino.substr(0, 30)).rfind("truncated: extended header needs 40 bytes", 0) == 0);
}

TEST_CASE("bad identifier and extended header", "[pte][reader]") {
  std::string arduino = writePteToString(goldenConstantAddModel());

  std::string wrongId = arduino;
  wrongId.replace(4, 4, "XXXX");
  CHECK(readError(wrongId) == "bad file identifier 'XXXX' at byte 4, expected 'ET12'");
  wrongId.replace(4, 4, std::string("ET\x00\x01", 4));
  CHECK(readError(wrongId) == "bad file identifier 'ET\\x00\\x01' at byte 4, expected 'ET12'");

  std::string shortHeader = arduino;
  putLE(shortHeader, 12, 16, 4);
  CHECK(readError(shortHeader) == "extended header length 16 is below the minimum 24");

  std::string baseInside = arduino;
  putLE(baseInside, 24, 64, 8);
  CHECK(readError(baseInside).rfind("segment_base_offset 64 lies inside the program data", 0) == 0);

  std::string tinyProgram = arduino;
  putLE(tinyProgram, 16, 20, 8);
  CHECK(readError(tinyProgram) == "program_size 20 is smaller than the headers (40 bytes)");

  Program p = readPte(arduino, "ok.pte");
  CHECK(p.layout.extendedHeader->segmentDataSize == 4);
  // A 24-byte header (written before segment_data_size existed) is accepted;
  // the bytes that follow it are then ignored.
  std::string oldHeader = arduino;
  putLE(oldHeader, 12, 24, 4);
  Program old = readPte(oldHeader, "old.pte");
  CHECK(old.layout.extendedHeader->length == 24);
  CHECK(old.layout.extendedHeader->segmentDataSize == 0);
  CHECK(old.constants.at(1).bytes() == std::string("\x00\x00\x80\x3f", 4));
}

TEST_CASE("corrupted flatbuffer", "[pte][reader]") {
  std::string add = writePteToString(goldenAddModel());
  // Root offset pointing past the end.
  std::string badRoot = add;
  putLE(badRoot, 0, 0x7FFFFFF0, 4);
  CHECK(readError(badRoot).rfind("flatbuffer verification failed", 0) == 0);
  // Root offset pointing into the identifier.
  putLE(badRoot, 0, 2, 4);
  CHECK(readError(badRoot).rfind("flatbuffer verification failed", 0) == 0);
  // Every 4-byte window overwritten with 0xFF: either rejected or parsed, never a crash.
  size_t rejected = 0;
  for (size_t at = 8; at + 4 <= add.size(); at += 4) {
    std::string broken = add;
    broken.replace(at, 4, "\xff\xff\xff\xff");
    if (!readError(broken).empty()) ++rejected;
  }
  CHECK(rejected > 10);
}

namespace {

namespace fb = executorch_flatbuffer;

/// Knobs for a hand-built flatbuffer with deliberately bad references.
struct BadRefs {
  fb::DataLocation delegateLocation = fb::DataLocation::SEGMENT;
  uint32_t delegateIndex = 0;
  uint32_t constantSegmentIndex = 0;
  std::vector<uint64_t> constantOffsets = {0};
  uint64_t segmentSize = 0;
  uint8_t valueType = uint8_t(fb::KernelTypes::Int);
};

/// One plan, one delegate, one segment; built with the generated builders so
/// the file passes the Verifier and only the references are wrong.
std::string buildWithRefs(const BadRefs &refs) {
  flatbuffers::FlatBufferBuilder fbb;
  auto value = fb::CreateEValue(fbb, fb::KernelTypes(refs.valueType), fb::CreateInt(fbb, 3).Union());
  auto chain = fb::CreateChain(fbb, fbb.CreateVector(std::vector<int32_t>{}), fbb.CreateVector(std::vector<int32_t>{}),
                               fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Instruction>>{}));
  auto delegate = fb::CreateBackendDelegate(
      fbb, fbb.CreateString("Demo"),
      fb::CreateBackendDelegateDataReference(fbb, refs.delegateLocation, refs.delegateIndex),
      fbb.CreateVector(std::vector<flatbuffers::Offset<fb::CompileSpec>>{}));
  auto plan = fb::CreateExecutionPlan(fbb, fbb.CreateString("forward"), 0, fbb.CreateVector(std::vector{value}),
                                      fbb.CreateVector(std::vector<int32_t>{}), fbb.CreateVector(std::vector<int32_t>{}),
                                      fbb.CreateVector(std::vector{chain}),
                                      fbb.CreateVector(std::vector<flatbuffers::Offset<fb::Operator>>{}),
                                      fbb.CreateVector(std::vector{delegate}),
                                      fbb.CreateVector(std::vector<int64_t>{0}));
  auto segments = fbb.CreateVector(std::vector{fb::CreateDataSegment(fbb, 0, refs.segmentSize)});
  auto constantSegment =
      fb::CreateSubsegmentOffsets(fbb, refs.constantSegmentIndex, fbb.CreateVector(refs.constantOffsets));
  auto root = fb::CreateProgram(fbb, 0, fbb.CreateVector(std::vector{plan}), 0,
                                fbb.CreateVector(std::vector<flatbuffers::Offset<fb::BackendDelegateInlineData>>{}),
                                segments, constantSegment);
  fb::FinishProgramBuffer(fbb, root);
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
}

/// (message, location) of the error, or ("", "") when the bytes are accepted.
std::pair<std::string, std::string> readFailure(const std::string &bytes) {
  try {
    readPte(bytes, "refs.pte");
  } catch (const exir::Error &e) {
    return {e.message(), e.location()};
  }
  return {"", ""};
}

} // namespace

TEST_CASE("bad references are reported with a JSON pointer", "[pte][reader]") {
  BadRefs ok;
  CHECK(readFailure(buildWithRefs(ok)).first == "");

  BadRefs segment;
  segment.delegateIndex = 5;
  CHECK(readFailure(buildWithRefs(segment)) ==
        std::pair<std::string, std::string>{"segment index 5 is out of range (the program has 1 segments)",
                                            "/execution_plan/0/delegates/0/processed"});

  BadRefs inlineRef;
  inlineRef.delegateLocation = fb::DataLocation::INLINE;
  inlineRef.delegateIndex = 2;
  CHECK(readFailure(buildWithRefs(inlineRef)).first ==
        "inline delegate data index 2 is out of range (backend_delegate_data has 0 entries)");

  BadRefs constants;
  constants.constantSegmentIndex = 3;
  constants.constantOffsets = {0, 0};
  CHECK(readFailure(buildWithRefs(constants)) ==
        std::pair<std::string, std::string>{"segment index 3 is out of range (the program has 1 segments)",
                                            "/constant_segment/segment_index"});

  BadRefs offsetPastEnd;
  offsetPastEnd.constantOffsets = {0, 64};
  offsetPastEnd.segmentSize = 16;
  CHECK(readFailure(buildWithRefs(offsetPastEnd)) ==
        std::pair<std::string, std::string>{"offset 64 is past the end of segment 0 (16 bytes)",
                                            "/constant_segment/offsets/1"});

  BadRefs noHeader;
  noHeader.constantOffsets = {0, 0};
  noHeader.segmentSize = 16;
  CHECK(readFailure(buildWithRefs(noHeader)).first ==
        "segment 0 holds data but the file has no extended header with a segment_base_offset");

  BadRefs unknownType;
  unknownType.valueType = 42;
  CHECK(readFailure(buildWithRefs(unknownType)) ==
        std::pair<std::string, std::string>{"unknown KernelTypes code 42", "/execution_plan/0/values/0/val_type"});
}

TEST_CASE("out-of-range indices in a plan are reported with their JSON pointer", "[pte][reader]") {
  // The reader spells these pointers out only for the error (see EntryPointer).
  auto failure = [](const std::function<void(ExecutionPlan &)> &corrupt) {
    Program program = goldenAddModel();
    program.executionPlan[0].values.push_back(TensorList{{0, 1}});
    // In place: GCC 12's -Wmaybe-uninitialized misreads a moved variant temporary under ASan.
    program.executionPlan[0].chains[0].instructions.emplace_back(std::in_place_type<MoveCall>, MoveCall{0, 1});
    corrupt(program.executionPlan[0]);
    return readFailure(writePteToString(program));
  };
  using Failure = std::pair<std::string, std::string>;
  CHECK(failure([](ExecutionPlan &) {}) == Failure{"", ""});
  CHECK(failure([](ExecutionPlan &plan) { std::get<KernelCall>(plan.chains[0].instructions[0]).args[3] = 9; }) ==
        Failure{"value index 9 is out of range (the plan has 5 values)",
                "/execution_plan/0/chains/0/instructions/0/instr_args/args/3"});
  CHECK(failure([](ExecutionPlan &plan) { std::get<KernelCall>(plan.chains[0].instructions[0]).opIndex = 1; }) ==
        Failure{"operator index 1 is out of range (the plan has 1 operators)",
                "/execution_plan/0/chains/0/instructions/0/instr_args/op_index"});
  CHECK(failure([](ExecutionPlan &plan) { std::get<MoveCall>(plan.chains[0].instructions[1]).moveTo = -2; }) ==
        Failure{"value index -2 is out of range (the plan has 5 values)",
                "/execution_plan/0/chains/0/instructions/1/instr_args/move_to"});
  CHECK(failure([](ExecutionPlan &plan) { std::get<TensorList>(plan.values[4]).items[1] = 5; }) ==
        Failure{"value index 5 is out of range (the plan has 5 values)", "/execution_plan/0/values/4/val/items/1"});
  CHECK(failure([](ExecutionPlan &plan) { plan.outputs[0] = 7; }) ==
        Failure{"value index 7 is out of range (the plan has 5 values)", "/execution_plan/0/outputs/0"});
}

TEST_CASE("random corruption never crashes", "[pte][reader][fuzz]") {
  std::vector<std::string> seeds = {
      writePteToString(goldenAddModel()),
      writePteToString(goldenConstantAddModel()),
      exir::readFileOrStdin(corpusDir() + "np_add_xnnpack_et1.3.1.pte"),
      exir::readFileOrStdin(corpusDir() + "np_multi_method_et1.3.1.pte"),
      exir::readFileOrStdin(corpusDir() + "et_ModuleLinear-no-constant-segment_2024-09.pte"),
      exir::readFileOrStdin(inputsDir() + "kitchen_sink.pte"),
  };
  std::mt19937_64 random(20260822);
  size_t accepted = 0, rejected = 0;
  for (int round = 0; round < 600; ++round) {
    std::string bytes = seeds[size_t(round) % seeds.size()];
    int mode = round % 3;
    if (mode == 0 || mode == 2) {
      int flips = 1 + int(random() % 4);
      for (int f = 0; f < flips; ++f) bytes[random() % bytes.size()] ^= char(1 + random() % 255);
    }
    if (mode == 1 || mode == 2) bytes.resize(random() % (bytes.size() + 1));
    try {
      Program p = readPte(bytes, "fuzz.pte");
      ++accepted;
      // Whatever is accepted can be dumped and compared with itself.
      std::ostringstream sink;
      dumpPteJson(p, sink);
      dumpPteText(p, sink);
      CHECK(diffPte(p, p, sink));
      try {
        readPte(writePteToString(p), "fuzz-rewritten.pte");
      } catch (const exir::Error &) {
        // A corrupted model may fail the writer's own checks; that is fine.
      }
    } catch (const exir::Error &e) {
      ++rejected;
      CHECK_FALSE(e.message().empty());
    }
  }
  CHECK(rejected > 100);
  CHECK(accepted + rejected == 600);
}
