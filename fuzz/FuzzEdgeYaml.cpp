//===- fuzz/FuzzEdgeYaml.cpp - edge.yaml and partitioner spec parsers -----===//
//
// One input = one YAML file, read both as an edge.yaml (--edge-yaml), laid
// over the built-in rules as exir-edge does, and as a partitioner spec
// (exir-partition --partitioner-spec), whose `ops` use the same edge.yaml DSL.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "Ops/EdgeYaml.h"
#include "Partition/SpecPartitioner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  std::string text(fuzz::asText(data, size));
  fuzz::fuzzOne([&] {
    EdgeDtypeRules rules = EdgeDtypeRules::parse(text, "fuzz.yaml");
    EdgeDtypeRules::builtin().overlaidWith(rules);
  });
  fuzz::fuzzOne([&] { partition::parseSpecPartitioner(text, "spec.yaml"); });
  return 0;
}
