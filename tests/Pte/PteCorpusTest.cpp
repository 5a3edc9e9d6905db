//===- tests/Pte/PteCorpusTest.cpp - Real .pte files from the corpus -----===//
//
// Every file of ../shared/corpus/pte is read, dumped as JSON and compared field
// by field with what flatc printed for it (decoded/<name>.json), then written
// back and re-read: the content must survive and a second write must give the
// same bytes as the first.
//
// Normalisation: none. Both JSON texts are parsed and compared with numbers by
// value; the text is also required to be byte-identical.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDiff.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Pte/PteWriter.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exir::pte;
using namespace exir::pte::test;

TEST_CASE("dumpPteJson matches flatc's decoding of every corpus file", "[pte][corpus]") {
  for (const auto &name : corpusNames()) {
    INFO(name);
    Program program = readPteFile(corpusDir() + name + ".pte");
    std::ostringstream dumped;
    dumpPteJson(program, dumped);
    std::string expectedText = exir::readFileOrStdin(corpusDir() + "decoded/" + name + ".json");
    auto ours = nlohmann::json::parse(dumped.str());
    auto expected = nlohmann::json::parse(expectedText);
    CHECK(jsonDifference(ours, expected) == "");
    CHECK(dumped.str() == expectedText);
  }
}

TEST_CASE("corpus files survive write -> read -> write", "[pte][corpus]") {
  for (const auto &name : corpusNames()) {
    INFO(name);
    Program original = readPteFile(corpusDir() + name + ".pte");
    std::string first = writePteToString(original);
    Program reread = readPte(first, name + " (rewritten)");
    std::ostringstream differences;
    CHECK(diffPte(original, reread, differences));
    CHECK(differences.str() == "");
    std::string second = writePteToString(reread);
    CHECK(first == second);
    // The rewritten file is laid out the way upstream lays out a fresh export.
    REQUIRE(reread.layout.segments.has_value());
    REQUIRE(reread.layout.constantSegment.has_value());
    CHECK(reread.layout.constantSegment->segmentIndex == 0);
    CHECK(reread.layout.constantBuffer.has_value());
    CHECK(reread.layout.constantBuffer->empty());
  }
}

TEST_CASE("corpus payloads are resolved", "[pte][corpus]") {
  SECTION("arduino keyword spotting: 39 KB of constants in segment 0") {
    Program p = readPteFile(corpusDir() + "et_arduino_kws_dscnn_cortexm_2026-08.pte");
    REQUIRE(p.layout.extendedHeader.has_value());
    CHECK(p.layout.extendedHeader->length == 32);
    uint64_t total = 0;
    for (const auto &c : p.constants) total += c.size();
    CHECK(total > 38000);
    CHECK(p.constants.at(0).empty());
    // Every constant a tensor names has exactly that tensor's byte size.
    for (const auto &plan : p.executionPlan)
      for (const auto &value : plan.values)
        if (const auto *t = std::get_if<Tensor>(&value); t && t->dataBufferIdx && !t->allocationInfo)
          CHECK(p.constants.at(t->dataBufferIdx).size() == *t->byteSize());
  }
  SECTION("deprecated inline constant_buffer layout") {
    Program p = readPteFile(corpusDir() + "et_ModuleLinear-no-constant-segment_2024-09.pte");
    CHECK_FALSE(p.layout.extendedHeader.has_value());
    REQUIRE(p.layout.constantBuffer.has_value());
    CHECK(p.layout.constantBuffer->size() == 3);
    REQUIRE(p.constants.size() == 3);
    CHECK(p.constants[0].empty());
    CHECK(p.constants[1].size() > 0);
    CHECK(p.constants[1] == p.layout.constantBuffer->at(1));
  }
  SECTION("xnnpack delegate blob in a segment") {
    Program p = readPteFile(corpusDir() + "np_add_xnnpack_et1.3.1.pte");
    const auto &delegate = p.executionPlan.at(0).delegates.at(0);
    CHECK(delegate.id == "XnnpackBackend");
    CHECK(delegate.processed.location == DataLocation::Segment);
    CHECK(delegate.processedData.size() == 432);
    // Rewritten inline, the same bytes land in backend_delegate_data.
    WriteOptions inlineOptions;
    inlineOptions.inlineDelegates = true;
    Program inlined = readPte(writePteToString(p, inlineOptions), "inlined");
    const auto &inlinedDelegate = inlined.executionPlan.at(0).delegates.at(0);
    CHECK(inlinedDelegate.processed.location == DataLocation::Inline);
    CHECK(inlinedDelegate.processedData == delegate.processedData);
    std::ostringstream differences;
    CHECK(diffPte(p, inlined, differences));
  }
}
