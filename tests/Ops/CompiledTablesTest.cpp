//===- tests/Ops/CompiledTablesTest.cpp - Build-time tables match the sources ===//
//
// The built-in dtype rules are parsed at build time by exir-tablegen and loaded
// from compact data at run time. These tests parse the source file again here,
// with the run-time parser, and compare the two entry by entry, so data that
// disagrees with the parser (a stale generator, a lossy field) fails a test.
//
//===----------------------------------------------------------------------===//
#include "Ops/EdgeYaml.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {

const char *kEdgeYamlPath = EXIR_SOURCE_DIR "/edge_ops/edge.yaml";

/// Every field of `a` that differs from `b`, one line each; empty if equal.
std::vector<std::string> differences(const EdgeDtypeRules &a, const EdgeDtypeRules &b) {
  std::vector<std::string> out;
  if (a.size() != b.size()) out.push_back("sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
  std::vector<const EdgeOpConstraint *> as = a.all(), bs = b.all();
  for (size_t i = 0; i < as.size() && i < bs.size(); ++i) {
    const EdgeOpConstraint &x = *as[i], &y = *bs[i];
    std::string at = "entry " + std::to_string(i) + " (" + x.func + ")";
    if (x.func != y.func || x.inherits != y.inherits || x.line != y.line || x.schema != y.schema)
      out.push_back(at + ": func, inherits, line or schema");
    if (x.schema && a.find(x.schema->qualifiedName()) != &x) out.push_back(at + ": not found by its name");
    if (x.aliases.size() != y.aliases.size()) out.push_back(at + ": alias count");
    for (size_t k = 0; k < x.aliases.size() && k < y.aliases.size(); ++k)
      if (x.aliases[k].name != y.aliases[k].name || x.aliases[k].dtypes != y.aliases[k].dtypes)
        out.push_back(at + ": alias " + x.aliases[k].name);
    if (x.rows.size() != y.rows.size()) out.push_back(at + ": row count");
    for (size_t k = 0; k < x.rows.size() && k < y.rows.size(); ++k)
      if (x.rows[k].line != y.rows[k].line || x.rows[k].entries != y.rows[k].entries)
        out.push_back(at + ": row at line " + std::to_string(x.rows[k].line));
  }
  return out;
}

} // namespace

TEST_CASE("the compiled-in dtype rules equal edge.yaml parsed at run time", "[compiled]") {
  EdgeDtypeRules parsed = EdgeDtypeRules::parse(readFileOrStdin(kEdgeYamlPath), "edge_ops/edge.yaml");
  const EdgeDtypeRules &compiled = EdgeDtypeRules::builtin();
  REQUIRE(parsed.size() > 500);
  CHECK(compiled.sourceName() == parsed.sourceName());
  CHECK(differences(compiled, parsed) == std::vector<std::string>{});
  CHECK(differences(parsed, compiled) == std::vector<std::string>{});
}

TEST_CASE("the comparison of dtype rules sees one changed dtype", "[compiled]") {
  std::string text = readFileOrStdin(kEdgeYamlPath);
  // The first alias that allows Bool and Byte allows Bool and Char instead.
  size_t at = text.find("[Bool, Byte]");
  REQUIRE(at != std::string::npos);
  std::string changed = text;
  changed.replace(at, 12, "[Bool, Char]");
  EdgeDtypeRules original = EdgeDtypeRules::parse(text, "edge.yaml");
  EdgeDtypeRules edited = EdgeDtypeRules::parse(changed, "edge.yaml");
  CHECK(differences(original, edited).size() == 1);
  CHECK(differences(EdgeDtypeRules::builtin(), edited).size() == 1);
}

TEST_CASE("dtype rules survive their compact form", "[compiled]") {
  // Upstream's file: other ops, alias names and row shapes than ours.
  EdgeDtypeRules upstream = EdgeDtypeRules::loadFile(EXIR_SHARED_DIR "/upstream/edge.yaml");
  REQUIRE(upstream.size() > 100);
  std::string data = upstream.toCompiled();
  EdgeDtypeRules back = EdgeDtypeRules::fromCompiled(data, upstream.sourceName());
  CHECK(differences(back, upstream) == std::vector<std::string>{});
  CHECK(back.toCompiled() == data);

  EdgeDtypeRules empty = EdgeDtypeRules::fromCompiled(EdgeDtypeRules().toCompiled(), "none");
  CHECK(empty.size() == 0);
}

TEST_CASE("damaged compact dtype rules are an internal error", "[compiled]") {
  std::string data = EdgeDtypeRules::parse("- func: aten::abs\n  type_alias: {T0: [Float]}\n"
                                           "  type_constraint: [{self: T0, __ret_0: T0}]\n",
                                           "abs.yaml")
                         .toCompiled();
  CHECK(EdgeDtypeRules::fromCompiled(data, "abs.yaml").size() == 1);
  CHECK_THROWS_AS(EdgeDtypeRules::fromCompiled(data.substr(0, data.size() - 1), "x"), InternalError);
  CHECK_THROWS_AS(EdgeDtypeRules::fromCompiled(data + "x", "x"), InternalError);
  CHECK_THROWS_AS(EdgeDtypeRules::fromCompiled("not the magic", "x"), InternalError);
  std::string unknownOp = data;
  // func and inherits both; same length, so only the lookup fails.
  for (size_t at; (at = unknownOp.find("aten::abs")) != std::string::npos;) unknownOp.replace(at, 9, "aten::zzz");
  CHECK_THROWS_AS(EdgeDtypeRules::fromCompiled(unknownOp, "x"), InternalError);
}
