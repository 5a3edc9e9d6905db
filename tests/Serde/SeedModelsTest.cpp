//===- tests/Serde/SeedModelsTest.cpp - seed models round-trip ------------===//
//
// Every seed model in testdata/models reads into the IR and writes back to the
// same bytes (the generator imitates torch's writer exactly), and the .pt2 of
// each model reads into the same program as its bare JSON.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/ProgramReader.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

using namespace exir;

TEST_CASE("seed models round-trip byte for byte", "[serde][seeds]") {
  const std::string dir = EXIR_SOURCE_DIR "/testdata/models";
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  REQUIRE(names.size() >= 11);
  for (const auto &name : names) {
    INFO("model " << name);
    std::string original = readFileOrStdin(dir + "/" + name + ".json");
    ExportedProgram ep = readExportedProgramJson(original, name + ".json");
    std::string written = writeExportedProgramJson(ep);
    CHECK(written == original);
    ExportedProgram again = readExportedProgramJson(written, name + ".json");
    CHECK(again == ep);

    Program fromArchive = readProgram(dir + "/" + name + ".pt2");
    REQUIRE(fromArchive.methods.size() == 1);
    CHECK(fromArchive.methods.begin()->second.program == ep);
  }
}
