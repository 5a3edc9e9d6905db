//===- fuzz/FuzzRewriteRules.cpp - rewrite and decomposition rule files ----===//
//
// One input = one YAML rules file, read both as op-replacement rules
// (exir-edge --rewrite), applied to the edge program of a seed model
// (testdata/models/simple_conv.pt2: convolution + relu), and as
// decomposition rules (exir-edge --decompositions), applied to its ATen
// program. The seed program is read and lowered once, at start-up.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "Edge/DecompositionRules.h"
#include "Edge/Passes.h"
#include "Serde/ProgramReader.h"

#include <cstdio>
#include <optional>

namespace {
std::optional<exir::Program> atenProgram, edgeProgram;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  using namespace exir;
  try {
    atenProgram = readProgram(EXIR_SOURCE_DIR "/testdata/models/simple_conv.pt2");
    edgeProgram = *atenProgram;
    edge::toEdge(*edgeProgram, edge::EdgeOptions{});
  } catch (const Error &e) {
    std::fprintf(stderr, "FuzzRewriteRules: cannot load the seed program: %s\n", e.render().c_str());
    std::abort();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  std::string_view text = fuzz::asText(data, size);
  std::string path = fuzz::writeInputFile(text, ".rules.yaml");
  fuzz::fuzzOne([&] {
    Program program = *edgeProgram;
    edge::applyRewriteRules(program, path);
  });
  fuzz::fuzzOne([&] {
    edge::DecompositionRules rules = edge::DecompositionRules::parse(std::string(text), "fuzz.yaml");
    Program program = *atenProgram;
    edge::decomposeWithRules(program, rules);
  });
  return 0;
}
