//===- fuzz/FuzzProgramJson.cpp - stage artifact ("program JSON") reader --===//
//
// One input = one program artifact of any stage (aten, edge, delegated,
// planned): parsed, then checked by the verifiers the tools run on their
// input: the stage's structural verifier, and for edge programs the edge
// verifier with the dtype rules the artifact records (its own edge.yaml
// text), for delegated programs the delegation checks, for planned ones the
// memory-plan verifier. Data files are not opened (DataRefs point nowhere).
// Then the same text is read as readProgram reads it, once whole and once
// with every named container in batches (Serde/JsonBatch.h): whenever the
// whole read succeeds, the batched one must give the same program.
//
//===----------------------------------------------------------------------===//
#include "FuzzBatched.h"
#include "FuzzCommon.h"

#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "Partition/Lowering.h"
#include "Plan/PlanPasses.h"
#include "Serde/ProgramJson.h"
#include "Serde/ProgramReader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  fuzz::fuzzOne([&] {
    Program program = readProgramJson(fuzz::asText(data, size), "fuzz.json", "/nonexistent-exir-fuzz");
    verifyProgram(program, program.stage);
    switch (program.stage) {
    case Stage::Aten: break;
    case Stage::Edge: edge::verifyEdgeProgram(program, edge::DtypeRules::forProgram(program)); break;
    case Stage::Delegated: partition::verifyDelegatedProgram(program); break;
    case Stage::Planned: plan::verifyMemoryPlan(program); break;
    }
  });

  fuzz::checkBatchedReading(
      [&] { return writeProgramJsonString(readProgramFromText(fuzz::asText(data, size), "fuzz.json"), ""); });
  return 0;
}
