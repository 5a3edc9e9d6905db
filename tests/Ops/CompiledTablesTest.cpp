//===- tests/Ops/CompiledTablesTest.cpp - Build-time tables match the sources ===//
//
// The built-in operator table and dtype rules are parsed at build time by
// exir-tablegen and loaded from compact data at run time. These tests parse the
// source files again here, with the run-time parsers, and compare the two entry
// by entry, so data that disagrees with the parser (a stale generator, a lossy
// field) fails a test.
//
//===----------------------------------------------------------------------===//
#include "Ops/CompiledTables.h"
#include "Ops/EdgeYaml.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

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

//===----------------------------------------------------------------------===//
// The operator table
//===----------------------------------------------------------------------===//

namespace {

const char *kOperatorsPath = EXIR_SOURCE_DIR "/lib/Ops/operators.txt";

bool sameArguments(const std::vector<SchemaArgument> &x, const std::vector<SchemaArgument> &y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    const SchemaArgument &a = x[i], &b = y[i];
    if (a.name != b.name || !(a.type == b.type) || !(a.alias == b.alias) || a.kwargOnly != b.kwargOnly ||
        a.isOut != b.isOut || a.defaultValue.has_value() != b.defaultValue.has_value())
      return false;
    // Defaults compare as values and as printed (which tells -0.0 from 0.0).
    if (a.defaultValue && (!(*a.defaultValue == *b.defaultValue) || a.str() != b.str())) return false;
  }
  return true;
}

std::string linkName(const OpSchema *s) { return s ? s->qualifiedName() : "(none)"; }

/// Every entry of `a` that differs from `b`, one line each; empty if equal.
std::vector<std::string> differences(const OperatorTable &a, const OperatorTable &b) {
  std::vector<std::string> out;
  if (a.size() != b.size()) out.push_back("sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
  std::vector<const OpSchema *> as = a.all(), bs = b.all();
  for (size_t i = 0; i < as.size() && i < bs.size(); ++i) {
    const OpSchema &x = *as[i], &y = *bs[i];
    std::string at = "entry " + std::to_string(i) + " (" + x.qualifiedName() + ")";
    if (x.ns != y.ns || x.name != y.name || x.overload != y.overload || x.text != y.text)
      out.push_back(at + ": name or text");
    if (!sameArguments(x.arguments, y.arguments)) out.push_back(at + ": arguments");
    if (!sameArguments(x.returns, y.returns)) out.push_back(at + ": returns");
    const OperatorInfo *p = a.info(x), *q = b.info(y);
    if (!p || !q || &p->schema != &x || &q->schema != &y) {
      out.push_back(at + ": not found by its name");
      continue;
    }
    if (p->isCore != q->isCore || p->isViewCopy != q->isViewCopy || p->line != q->line)
      out.push_back(at + ": core, view-copy or line");
    if (linkName(p->outVariant) != linkName(q->outVariant) || linkName(p->viewCopy) != linkName(q->viewCopy) ||
        linkName(p->functional) != linkName(q->functional))
      out.push_back(at + ": links");
    for (const OpSchema *link : {p->outVariant, p->viewCopy, p->functional})
      if (link && a.lookup(link->qualifiedName()) != link) out.push_back(at + ": a link outside the table");
  }
  return out;
}

} // namespace

TEST_CASE("the compiled-in operator table equals operators.txt parsed at run time", "[compiled]") {
  OperatorTable parsed = OperatorTable::parse(readFileOrStdin(kOperatorsPath), "lib/Ops/operators.txt");
  // The data itself: OperatorTable::builtin() may hold op libraries by now.
  OperatorTable compiled = OperatorTable::fromCompiled(compiled::builtinOperatorTableData());
  REQUIRE(parsed.size() > 600);
  CHECK(differences(parsed, compiled) == std::vector<std::string>{});
  CHECK(differences(compiled, parsed) == std::vector<std::string>{});
  for (size_t i = 0; i < parsed.size(); ++i) CHECK(OperatorTable::builtin().all()[i]->text == parsed.all()[i]->text);
}

TEST_CASE("the comparison of operator tables sees one changed entry", "[compiled]") {
  std::string text = readFileOrStdin(kOperatorsPath);
  OperatorTable original = OperatorTable::parse(text, "operators.txt");
  for (auto [from, to] : {std::pair{"float p=2) -> Tensor", "float p=3) -> Tensor"}, // a default
                          std::pair{"@core _log_softmax(", "_log_softmax("}}) {        // a tag
    INFO(from);
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    std::string changed = text;
    changed.replace(at, std::string_view(from).size(), to);
    // One entry differs (in its text and its arguments, or in its tag).
    std::set<std::string> entries;
    for (const auto &line : differences(original, OperatorTable::parse(changed, "operators.txt")))
      entries.insert(line.substr(0, line.find(':')));
    CHECK(entries.size() == 1);
  }
}

TEST_CASE("an operator table survives its compact form", "[compiled]") {
  // Every kind of default, alias set, fixed size and link.
  const char *text = "namespace test\n"
                     "@core f(Tensor(a) self, int[2] k=[1, -2], float e=-0.0, float[] w=[0.5, 1e-3], str m=\"x\", "
                     "ScalarType? d=None, MemoryFormat f=contiguous_format, bool b=True, *, int n=-5) -> Tensor(a)\n"
                     "f.out(Tensor(a) self, int[2] k=[1, -2], float e=-0.0, float[] w=[0.5, 1e-3], str m=\"x\", "
                     "ScalarType? d=None, MemoryFormat f=contiguous_format, bool b=True, *, int n=-5, "
                     "Tensor(b!) out) -> Tensor(b!)\n"
                     "g(Tensor(a -> *) x, Tensor(a|b) y) -> (Tensor a, Tensor?[] b)\n"
                     "f_copy(Tensor self, int[2] k=[1, -2], float e=-0.0, float[] w=[0.5, 1e-3], str m=\"x\", "
                     "ScalarType? d=None, MemoryFormat f=contiguous_format, bool b=True, *, int n=-5) -> Tensor\n";
  OperatorTable table = OperatorTable::parse(text, "t.txt");
  REQUIRE(table.size() == 4);
  std::string data = table.toCompiled();
  OperatorTable back = OperatorTable::fromCompiled(data);
  CHECK(differences(back, table) == std::vector<std::string>{});
  CHECK(back.toCompiled() == data);
  const OpSchema *f = back.lookup("test::f");
  REQUIRE(f);
  CHECK(back.outVariant(*f) == back.lookup("test::f.out"));
  CHECK(back.viewCopyOf(*f) == back.lookup("test::f_copy"));
  CHECK(std::signbit(f->argument("e")->defaultValue->floatValue));

  CHECK_THROWS_AS(OperatorTable::fromCompiled(data.substr(0, data.size() - 1)), InternalError);
  CHECK_THROWS_AS(OperatorTable::fromCompiled(data + "x"), InternalError);
  CHECK_THROWS_AS(OperatorTable::fromCompiled(EdgeDtypeRules().toCompiled()), InternalError);
  CHECK(OperatorTable::fromCompiled(OperatorTable().toCompiled()).size() == 0);
}
