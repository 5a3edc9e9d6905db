//===- Pte/BundledProgram.h - BundledProgram files (.bpte) -----*- C++ -*-===//
//
// The .bpte format of ExecuTorch's devtools (schema/bundled_program.fbs,
// identifier "BP08"): a whole .pte file plus test suites, one per method, each
// a list of test cases (inputs and the expected outputs). The runtime's
// bundled-program helpers load a case's inputs into a Method and compare its
// outputs; exir-inspect shows the embedded program and the suites.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteDump.h"
#include "Pte/PteModel.h"

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace exir::bpte {

/// One input or expected output of a test case.
struct Value {
  enum class Kind : uint8_t { None, Tensor, Int, Bool, Double } kind = Kind::None;
  // Tensor
  ScalarType scalarType = ScalarType::Float;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dimOrder;
  std::string data;
  // Int / Bool / Double
  int64_t intValue = 0;
  bool boolValue = false;
  double doubleValue = 0;
};

struct TestCase {
  std::vector<Value> inputs;
  std::vector<Value> expectedOutputs;
};

struct MethodTestSuite {
  std::string methodName;
  std::vector<TestCase> testCases;
};

struct BundledProgram {
  uint32_t version = 0;
  std::vector<MethodTestSuite> methodTestSuites;
  /// The embedded .pte file's bytes, and the program read from them.
  std::shared_ptr<const std::string> programBytes;
  pte::Program program;
};

/// True when `head` (the first 8 or more bytes of a file) carries "BP08".
bool looksLikeBundledProgram(std::string_view head);

/// Parses a .bpte: the flatbuffers Verifier over the whole file, then the
/// suites, then the embedded .pte with the .pte reader. Throws exir::Error
/// naming `fileName` for bytes that do not verify or an embedded program that
/// does not read (its errors say "program" in their location).
BundledProgram readBundledProgram(const std::string &bytes, const std::string &fileName);

/// Writes a .bpte around the .pte file `pteBytes` (what upstream's
/// serialize_from_bundled_program_to_flatbuffer produces).
std::string writeBundledProgram(const std::string &pteBytes, const std::vector<MethodTestSuite> &suites,
                                uint32_t version = 0);

/// Human-readable listing: version, the suites (per case, every value as its
/// kind with dtype and sizes, or its scalar), then the embedded program as
/// pte::dumpPteText shows it.
void dumpBundledProgramText(const BundledProgram &bundled, std::ostream &os,
                            const pte::TextDumpOptions &options = {});

} // namespace exir::bpte
