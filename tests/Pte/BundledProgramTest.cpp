//===- tests/Pte/BundledProgramTest.cpp - BundledProgram .bpte files -------===//
//
// A .bpte written around a real .pte reads back with its suites (tensor,
// int, bool and double values) and the embedded program; the listing shows
// them; bad bytes and a bad embedded program are refused with a location.
//
//===----------------------------------------------------------------------===//
#include "Pte/BundledProgram.h"
#include "Pte/PteReader.h"
#include "Pte/PteTestUtil.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exir;
using exir::pte::test::corpusDir;

namespace {

bpte::Value tensor(std::vector<int32_t> sizes, std::string data) {
  bpte::Value v;
  v.kind = bpte::Value::Kind::Tensor;
  v.scalarType = ScalarType::Float;
  v.sizes = std::move(sizes);
  v.dimOrder = {0};
  v.data = std::move(data);
  return v;
}

std::vector<bpte::MethodTestSuite> suites() {
  bpte::Value i, b, d;
  i.kind = bpte::Value::Kind::Int;
  i.intValue = -7;
  b.kind = bpte::Value::Kind::Bool;
  b.boolValue = true;
  d.kind = bpte::Value::Kind::Double;
  d.doubleValue = 0.25;
  bpte::MethodTestSuite forward{"forward", {}};
  forward.testCases.push_back({{tensor({1}, std::string(4, '\1')), i, b, d}, {tensor({1}, std::string(4, '\2'))}});
  forward.testCases.push_back({{tensor({1}, std::string(4, '\3'))}, {tensor({1}, std::string(4, '\4'))}});
  return {forward, bpte::MethodTestSuite{"missing", {}}};
}

} // namespace

TEST_CASE("a .bpte round-trips its suites and embedded program", "[bpte]") {
  std::string pte = readFileOrStdin(corpusDir() + "et_add_portable_2024-09.pte");
  std::string bytes = bpte::writeBundledProgram(pte, suites(), 3);
  CHECK(bytes.substr(4, 4) == "BP08");
  CHECK(bpte::looksLikeBundledProgram(bytes));
  CHECK_FALSE(bpte::looksLikeBundledProgram(pte));

  bpte::BundledProgram read = bpte::readBundledProgram(bytes, "t.bpte");
  CHECK(read.version == 3);
  CHECK(*read.programBytes == pte);
  CHECK(read.program == pte::readPte(pte, "add.pte"));
  REQUIRE(read.methodTestSuites.size() == 2);
  const bpte::MethodTestSuite &forward = read.methodTestSuites[0];
  CHECK(forward.methodName == "forward");
  REQUIRE(forward.testCases.size() == 2);
  const auto &inputs = forward.testCases[0].inputs;
  REQUIRE(inputs.size() == 4);
  CHECK(inputs[0].kind == bpte::Value::Kind::Tensor);
  CHECK(inputs[0].sizes == std::vector<int32_t>{1});
  CHECK(inputs[0].data == std::string(4, '\1'));
  CHECK(inputs[1].intValue == -7);
  CHECK(inputs[2].boolValue);
  CHECK(inputs[3].doubleValue == 0.25);
  CHECK(forward.testCases[1].expectedOutputs[0].data == std::string(4, '\4'));

  std::ostringstream os;
  bpte::dumpBundledProgramText(read, os);
  std::string text = os.str();
  CHECK_THAT(text, Catch::StartsWith("BundledProgram (.bpte) version 3, program " + std::to_string(pte.size()) +
                                     " bytes\nmethod_test_suites (2):\n  forward: 2 test cases\n    [0]\n"
                                     "      input 0: Tensor f32[1] dim_order=[0] 4 bytes\n      input 1: Int -7\n"
                                     "      input 2: Bool true\n      input 3: Double 0.25\n"
                                     "      expected output 0: Tensor f32[1] dim_order=[0] 4 bytes\n"));
  CHECK_THAT(text, Catch::Contains("  missing: 0 test cases (the program has no such method)\n"));
  CHECK_THAT(text, Catch::Contains("\nprogram:\nfile: " + std::to_string(pte.size()) + " bytes\n"));
}

TEST_CASE("bad .bpte bytes are refused with a location", "[bpte]") {
  std::string pte = readFileOrStdin(corpusDir() + "et_add_portable_2024-09.pte");
  std::string bytes = bpte::writeBundledProgram(pte, suites());
  auto errorOf = [](const std::string &b) {
    try {
      bpte::readBundledProgram(b, "bad.bpte");
    } catch (const Error &e) {
      CHECK(e.file() == "bad.bpte");
      return e.location() + ": " + e.message();
    }
    return std::string("no error");
  };
  CHECK(errorOf(bytes.substr(0, bytes.size() / 2)) ==
        "byte 0: flatbuffer verification failed: the BundledProgram is corrupted or truncated");
  CHECK(errorOf("xx") == "byte 4: not a BundledProgram: no 'BP08' identifier at byte 4");
  // An embedded program whose own identifier is wrong.
  std::string badPte = pte;
  badPte.replace(4, 4, "XX12");
  CHECK(errorOf(bpte::writeBundledProgram(badPte, {})) ==
        "/program byte 4: embedded program: bad file identifier 'XX12' at byte 4, expected 'ET12'");
}
