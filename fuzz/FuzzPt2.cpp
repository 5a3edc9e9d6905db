//===- fuzz/FuzzPt2.cpp - .pt2 / legacy export zip / ETRecord reader -------===//
//
// One input = one zip archive (inputs not starting with a zip local header
// are skipped: the JSON targets cover those). It is read as exir-edge reads a
// .pt2: layout detection (PT2 archive, legacy torch.export.save zip, ETRecord),
// the programs' JSON, the weights (payload configs or nested torch.save zips
// with their pickles) as DataRefs into the file; then the data references are
// checked against the file and the program against its stage's verifier.
// Whole and batched reading of the programs' JSON must agree (FuzzBatched.h).
//
//===----------------------------------------------------------------------===//
#include "FuzzBatched.h"
#include "FuzzCommon.h"

#include "IR/Verifier.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"

#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  if (size < 4 || std::memcmp(data, "PK\3\4", 4) != 0) return 0;
  std::string path = fuzz::writeInputFile(fuzz::asText(data, size), ".pt2");
  fuzz::fuzzOne([&] {
    Program program = readProgram(path);
    checkDataFiles(program);
    verifyProgram(program, program.stage);
  });
  fuzz::checkBatchedReading([&] { return writeProgramJsonString(readProgram(path), ""); });
  return 0;
}
