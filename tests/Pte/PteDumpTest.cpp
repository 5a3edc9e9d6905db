//===- tests/Pte/PteDumpTest.cpp - JSON and text dumps -------------------===//
//
// The kitchen-sink file covers every union member and optional field; its JSON
// dump must equal flatc's text exactly. The text dump is checked line by line
// on the golden models.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Pte/PteWriter.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exir::pte;
using namespace exir::pte::test;

namespace {
std::string textDump(const Program &program, bool hashes = false) {
  std::ostringstream out;
  TextDumpOptions options;
  options.hashes = hashes;
  dumpPteText(program, out, options);
  return out.str();
}
bool hasLine(const std::string &text, const std::string &line) {
  return text.find("\n" + line + "\n") != std::string::npos || text.rfind(line + "\n", 0) == 0;
}
} // namespace

TEST_CASE("dumpPteJson equals flatc on every table and union member", "[pte][dump]") {
  Program program = readPteFile(inputsDir() + "kitchen_sink.pte");
  std::ostringstream dumped;
  dumpPteJson(program, dumped);
  std::string expected = exir::readFileOrStdin(inputsDir() + "kitchen_sink.decoded.json");
  CHECK(jsonDifference(nlohmann::json::parse(dumped.str()), nlohmann::json::parse(expected)) == "");
  CHECK(dumped.str() == expected);
}

TEST_CASE("kitchen sink content is modelled", "[pte][dump]") {
  Program p = readPteFile(inputsDir() + "kitchen_sink.pte");
  REQUIRE(p.executionPlan.size() == 2);
  const auto &values = p.executionPlan[0].values;
  REQUIRE(values.size() == 19);
  const auto &big = std::get<Tensor>(values[0]);
  CHECK(big.allocationInfo->offset() == (uint64_t(1) << 32) + 64);
  const auto &odd = std::get<Tensor>(values[2]);
  CHECK(int(odd.scalarType) == 9);
  CHECK(odd.extraTensorInfo->location == TensorDataLocation::External);
  CHECK(*odd.extraTensorInfo->fullyQualifiedName == "mod.w\xc3\xa9ight\n");
  CHECK(std::get<OptionalTensorList>(values[16]).items == std::vector<int32_t>{0, -1, 1});
  CHECK(std::get<BoolList>(values[14]).items == std::vector<bool>{true, false, true});
  // Constants come from the deprecated inline buffers, delegate 0 from inline data.
  REQUIRE(p.constants.size() == 2);
  CHECK(p.constants[1].bytes() == std::string("\x01\x00\x00\x00", 4));
  CHECK(p.executionPlan[0].delegates[0].processedData.bytes() == "1version:0#");
  CHECK(p.executionPlan[0].delegates[1].processedData.empty());
  REQUIRE(p.namedData.has_value());
  CHECK(p.namedData->size() == 2);
  CHECK(p.executionPlan[0].chains[0].stacktrace->at(0).items.at(0).lineno == 12);
}

TEST_CASE("text dump of the golden add model", "[pte][dump]") {
  Program program = readPte(writePteToString(goldenAddModel()), "add.pte");
  std::string text = textDump(program);
  INFO(text);
  CHECK(hasLine(text, "extended header: none"));
  CHECK(hasLine(text, "  [0] offset 0 size 0"));
  CHECK(hasLine(text, "constant_segment: segment 0, offsets [0]"));
  CHECK(hasLine(text, "execution_plan[0] \"forward\""));
  CHECK(hasLine(text, "  inputs: [%0, %1]"));
  CHECK(hasLine(text, "  outputs: [%2]"));
  CHECK(hasLine(text, "    %1 = Tensor f32[1] dim_order=[0] mem=1+16"));
  CHECK(hasLine(text, "    %3 = Int 1"));
  CHECK(hasLine(text, "    [0] aten::add.out"));
  CHECK(hasLine(text, "    0: KernelCall aten::add.out(%0, %1, %3, %2, %2)"));
  CHECK(hasLine(text, "  non_const_buffer_sizes: [0, 48]"));
  CHECK(hasLine(text, "constants: 1 (index 0 is the placeholder)"));
}

TEST_CASE("text dump shows constants, delegates and every value kind", "[pte][dump]") {
  Program golden = readPte(writePteToString(goldenConstantAddModel()), "model.pte");
  std::string arduino = textDump(golden, /*hashes=*/true);
  INFO(arduino);
  CHECK(hasLine(arduino, "    %0 = Tensor f32[] dim_order=[] const=1"));
  // sha256 of the four bytes of float 1.0.
  CHECK(hasLine(arduino, "  [1] 4 bytes sha256 " + BlobSource::fromBytes(std::string("\0\0\x80\x3f", 4)).sha256Hex()));
  // By default the listing reads no payload: sizes only.
  std::string plain = textDump(golden);
  CHECK(hasLine(plain, "  [1] 4 bytes"));
  CHECK(plain.find("sha256") == std::string::npos);
  CHECK(arduino.find("extended header: length 32, program_size ") != std::string::npos);

  std::string sink = textDump(readPteFile(inputsDir() + "kitchen_sink.pte"), /*hashes=*/true);
  INFO(sink);
  CHECK(hasLine(sink, "    %0 = Tensor f32[2, 3] dim_order=[0,1] mem=1+4294967360"));
  CHECK(hasLine(sink, "    %2 = Tensor c64[4, 1, 2, 2] dim_order=[0,2,3,1] DYNAMIC_BOUND requires_grad "
                      "storage_offset=3 layout=1 extra={fqn=\"mod.w\\xc3\\xa9ight\\x0a\" EXTERNAL "
                      "mutable_segment=2 device=CUDA:1}"));
  CHECK(hasLine(sink, "    %3 = Tensor b8[] dim_order=[] mem=2+0 init=1 extra={}"));
  CHECK(hasLine(sink, "    %4 = Null"));
  CHECK(hasLine(sink, "    %5 = Int -9007199254740993"));
  CHECK(hasLine(sink, "    %7 = Bool true"));
  CHECK(hasLine(sink, "    %8 = Double 0.1"));
  CHECK(hasLine(sink, "    %9 = Double -1.5e-20"));
  CHECK(hasLine(sink, "    %12 = IntList [%5, %6]"));
  CHECK(hasLine(sink, "    %13 = DoubleList [1, 2.5, -0]"));
  CHECK(hasLine(sink, "    %14 = BoolList [true, false, true]"));
  CHECK(hasLine(sink, "    %15 = TensorList [%0, %1]"));
  CHECK(hasLine(sink, "    %16 = OptionalTensorList [%0, None, %1]"));
  CHECK(hasLine(sink, "    %18 = String \"\""));
  CHECK(hasLine(sink, "    1: DelegateCall #1 XnnpackBackend(%0, %3)"));
  CHECK(hasLine(sink, "    2: MoveCall %3 -> %2"));
  CHECK(hasLine(sink, "    3: JumpFalseCall if not %7 goto 5"));
  CHECK(hasLine(sink, "    4: FreeCall %2"));
  CHECK(hasLine(sink, "    5: KernelCall executorch_prim::et_view.default()"));
  CHECK(hasLine(sink, "    [0] BackendWithCompilerDemo: INLINE 0, 11 bytes sha256 " +
                          BlobSource::fromBytes("1version:0#").sha256Hex()));
  CHECK(hasLine(sink, "      compile_spec max_value = 0x04"));
  CHECK(hasLine(sink, "  non_const_buffer_sizes: [0, 4294967360, 16]"));
  CHECK(hasLine(sink, "  buffer 2 on CUDA:0"));
}

TEST_CASE("formatDouble gives the shortest round-trip form", "[pte][dump]") {
  CHECK(formatDouble(0.1) == "0.1");
  CHECK(formatDouble(1.0) == "1");
  CHECK(formatDouble(-1.0 / 0.0) == "-inf");
  CHECK(formatBytes(std::string("\x04", 1)) == "0x04");
  CHECK(formatBytes("abc") == "\"abc\"");
  CHECK(formatBytes("") == "<empty>");
}

TEST_CASE("dot dump of the constant add model: constant note, out tensor written once", "[pte][dump][dot]") {
  std::ostringstream os;
  dumpPteDot(goldenConstantAddModel(), os);
  CHECK(os.str() == "digraph pte {\n"
                    "  rankdir=TB;\n"
                    "  node [shape=box, fontname=\"monospace\"];\n"
                    "  subgraph \"cluster_plan0/\" {\n"
                    "    label=\"forward\";\n"
                    "    \"plan0/v1\" [shape=ellipse, label=\"%1\\nTensor f32[3] dim_order=[0] mem=1+16\"];\n"
                    "    \"plan0/input\" -> \"plan0/v1\";\n"
                    "    \"plan0/input\" [shape=plaintext, label=\"inputs\"];\n"
                    "    \"plan0/chain0/0\" [label=\"[0] KernelCall aten::add.out(%1, %0, %3, %2, %2)\"];\n"
                    "    \"plan0/v1\" -> \"plan0/chain0/0\";\n"
                    "    \"plan0/v0\" [shape=note, label=\"%0\\nTensor f32[] dim_order=[] const=1\"];\n"
                    "    \"plan0/v0\" -> \"plan0/chain0/0\";\n"
                    "    \"plan0/v2\" [shape=ellipse, label=\"%2\\nTensor f32[3] dim_order=[0] mem=1+0\"];\n"
                    "    \"plan0/chain0/0\" -> \"plan0/v2\";\n"
                    "    \"plan0/v2\" -> \"plan0/output\";\n"
                    "    \"plan0/output\" [shape=plaintext, label=\"outputs\"];\n"
                    "  }\n"
                    "}\n");
}
