//===- tests/Partition/PartitionTestUtil.h - Shared helpers -----*- C++ -*-===//
#pragma once

#include "Edge/Passes.h"
#include "Serde/ProgramReader.h"

#include <string>

namespace partitiontest {

/// A seed model from testdata/models, lowered to the Edge dialect.
inline exir::Program edgeProgramOf(const std::string &model) {
  exir::Program p = exir::readProgram(std::string(EXIR_SOURCE_DIR) + "/testdata/models/" + model);
  exir::edge::toEdge(p, {});
  return p;
}

} // namespace partitiontest
