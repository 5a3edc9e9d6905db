//===- fuzz/FuzzExportJson.cpp - torch.export JSON reader ------------------===//
//
// One input = one torch.export ExportedProgram JSON document: parsed as
// exir-edge reads a bare .json, wrapped as a one-method program of the stage
// its targets suggest, and run through that stage's structural verifier.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "IR/Verifier.h"
#include "Serde/ExportJson.h"
#include "Serde/ProgramJson.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  fuzz::fuzzOne([&] {
    ExportedProgram ep = readExportedProgramJson(fuzz::asText(data, size), "fuzz.json");
    Stage stage = guessStage(ep);
    Program program = programFromExportedProgram(std::move(ep), stage);
    verifyProgram(program, stage);
  });
  return 0;
}
