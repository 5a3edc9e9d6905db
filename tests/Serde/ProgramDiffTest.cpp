//===- tests/Serde/ProgramDiffTest.cpp - exir-inspect --diff on programs ---===//
//
// Two programs of one stage compare through their artifact JSON: equal
// programs print nothing, a changed target / an extra node / a constant of
// one side are one line each with a JSON pointer; stages must match. Also
// indentJson, which --json --pretty uses.
//
//===----------------------------------------------------------------------===//
#include "Serde/JsonWriter.h"
#include "Serde/ProgramDiff.h"
#include "Support/Error.h"
#include "IR/GraphBuilder.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace exir;
using namespace irtest;

namespace {

Program twoOps(const std::string &second) {
  GraphBuilder b;
  b.input("x", ScalarType::Float, {2});
  b.edge("relu.default", {pos("self", T("x"))}, "relu", ScalarType::Float, {2});
  b.edge(second, {pos("self", T("relu"))}, "out", ScalarType::Float, {2});
  b.output("out");
  return programOf(b.ep, Stage::Edge);
}

} // namespace

TEST_CASE("diffPrograms: equal programs have no differences", "[serde][diff]") {
  std::ostringstream out;
  CHECK(diffPrograms(twoOps("sigmoid.default"), twoOps("sigmoid.default"), out));
  CHECK(out.str().empty());
}

TEST_CASE("diffPrograms: one line per difference, by JSON pointer", "[serde][diff]") {
  Program a = twoOps("sigmoid.default"), b = twoOps("tanh.default");
  ConstantTensor c;
  c.data.inlineBytes = std::string(8, '\0');
  c.data.length = 8;
  c.sizes = {2};
  b.constants.set("w/x", c);
  std::ostringstream out;
  CHECK_FALSE(diffPrograms(a, b, out));
  CHECK(out.str() == "/methods/forward/graph_module/graph/nodes/1/target: "
                     "\"executorch.exir.dialects.edge.ops.aten.sigmoid.default\" != "
                     "\"executorch.exir.dialects.edge.ops.aten.tanh.default\"\n"
                     "/constants/w~1x: only in the second\n");

  Program longer = twoOps("sigmoid.default");
  graphOf(longer).nodes.push_back(graphOf(longer).nodes.back());
  std::ostringstream out2;
  CHECK_FALSE(diffPrograms(a, longer, out2));
  CHECK_THAT(out2.str(), Catch::StartsWith("/methods/forward/graph_module/graph/nodes: 2 entries != 3 entries\n"));
}

TEST_CASE("diffPrograms: programs of different stages are refused", "[serde][diff]") {
  Program planned = twoOps("sigmoid.default");
  planned.stage = Stage::Delegated;
  std::ostringstream out;
  CHECK_THROWS_WITH(diffPrograms(twoOps("sigmoid.default"), planned, out),
                    "cannot compare a program of stage 'edge' with one of stage 'delegated'; --diff takes two "
                    "programs of the same stage");
}

TEST_CASE("indentJson: one member per line, strings untouched, empty containers kept", "[serde][json]") {
  CHECK(indentJson(R"({"a": [1, 2], "b": {}, "c": "x, {y}: [\"z\"]", "d": []})") ==
        "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": \"x, {y}: [\\\"z\\\"]\",\n  \"d\": []\n}\n");
  CHECK(indentJson("3.5") == "3.5\n");
}
