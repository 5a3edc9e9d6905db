//===- tests/Ops/EdgeYamlTest.cpp - edge.yaml loader and dtype check ------===//
//
// Loads upstream's edge.yaml and the project's own, checks that ours accepts
// everything upstream accepts, and exercises the dtype check (§6.2 of
// pte-format.md): row matching, alias unification, wildcards, permissive ops
// and the loader's errors.
//
//===----------------------------------------------------------------------===//
#include "Ops/EdgeYaml.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace exir;

namespace {

const char *kUpstreamPath = EXIR_SHARED_DIR "/upstream/edge.yaml";

const EdgeDtypeRules &upstream() {
  static const EdgeDtypeRules rules = EdgeDtypeRules::loadFile(kUpstreamPath);
  return rules;
}

const OpSchema &op(const char *name) {
  const OpSchema *s = OperatorTable::builtin().lookup(name);
  INFO(name);
  REQUIRE(s);
  return *s;
}

/// Writes `text` to a fresh file in the temp directory and returns its path.
std::string writeTemp(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "exir-ops-tests";
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

Error loadError(const std::string &path) {
  try {
    EdgeDtypeRules::loadFile(path);
  } catch (const Error &e) {
    return e;
  }
  FAIL("no error for " << path);
  return Error("unreachable");
}

/// Every assignment of dtypes to `keys` that `rules` accepts for `c`.
std::set<std::vector<ScalarType>> acceptedCombinations(const EdgeOpConstraint &c,
                                                       const std::vector<std::string> &keys) {
  std::set<std::vector<ScalarType>> out;
  for (const auto &row : c.rows) {
    std::vector<size_t> aliasOfKey;
    for (const auto &k : keys) aliasOfKey.push_back(*row.aliasOf(k));
    std::vector<size_t> aliases(aliasOfKey);
    std::sort(aliases.begin(), aliases.end());
    aliases.erase(std::unique(aliases.begin(), aliases.end()), aliases.end());
    std::vector<size_t> choice(aliases.size(), 0);
    for (;;) {
      std::vector<ScalarType> combo;
      for (size_t alias : aliasOfKey) {
        size_t slot = size_t(std::find(aliases.begin(), aliases.end(), alias) - aliases.begin());
        combo.push_back(c.aliases[alias].dtypes[choice[slot]]);
      }
      out.insert(combo);
      size_t i = 0;
      for (; i < aliases.size(); ++i) {
        if (++choice[i] < c.aliases[aliases[i]].dtypes.size()) break;
        choice[i] = 0;
      }
      if (i == aliases.size()) break;
    }
  }
  return out;
}

} // namespace

TEST_CASE("upstream edge.yaml loads unchanged", "[edge]") {
  CHECK(upstream().size() == 141);
  const EdgeOpConstraint *abs = upstream().find("aten::abs");
  REQUIRE(abs);
  CHECK(abs->line == 71);
  CHECK(upstream().find("aten::add.Tensor") != nullptr);
  CHECK(upstream().find("aten::max.dim") != nullptr);
  CHECK(upstream().find("aten::relu.default") == upstream().find("aten::relu"));
  CHECK(upstream().find("aten::conv2d") == nullptr);
}

TEST_CASE("the project's edge.yaml covers every op with tensors", "[edge]") {
  const EdgeDtypeRules &ours = EdgeDtypeRules::builtin();
  size_t withTensors = 0;
  for (const OpSchema *s : OperatorTable::builtin().all()) {
    if (EdgeDtypeRules::dtypeKeys(*s).empty()) continue;
    ++withTensors;
    INFO(s->qualifiedName());
    CHECK(ours.find(s->qualifiedName()) != nullptr);
  }
  CHECK(ours.size() == withTensors);
  CHECK(ours.find("quantized_decomposed::quantize_per_tensor") != nullptr);
  CHECK(ours.find("dim_order_ops::_to_dim_order_copy") != nullptr);
  CHECK(ours.find("dim_order_ops::_to_dim_order_copy.out") != nullptr);
}

TEST_CASE("the embedded edge.yaml is the one in the source tree", "[edge]") {
  EdgeDtypeRules onDisk = EdgeDtypeRules::loadFile(EXIR_SOURCE_DIR "/edge_ops/edge.yaml");
  const EdgeDtypeRules &embedded = EdgeDtypeRules::builtin();
  REQUIRE(onDisk.size() == embedded.size());
  for (const EdgeOpConstraint *c : onDisk.all()) {
    const EdgeOpConstraint *e = embedded.find(c->inherits);
    REQUIRE(e);
    CHECK(e->rows.size() == c->rows.size());
    CHECK(e->line == c->line);
  }
}

TEST_CASE("our rules accept everything upstream accepts", "[edge]") {
  const EdgeDtypeRules &ours = EdgeDtypeRules::builtin();
  for (const EdgeOpConstraint *theirs : upstream().all()) {
    INFO(theirs->inherits);
    const EdgeOpConstraint *mine = ours.find(theirs->inherits);
    REQUIRE(mine);
    std::vector<std::string> keys = EdgeDtypeRules::dtypeKeys(*theirs->schema);
    auto theirCombos = acceptedCombinations(*theirs, keys);
    auto myCombos = acceptedCombinations(*mine, keys);
    size_t missing = 0;
    for (const auto &combo : theirCombos)
      if (!myCombos.count(combo)) ++missing;
    CHECK(missing == 0);
    // And the checker agrees with the enumeration on one accepted combination.
    const auto &first = *theirCombos.begin();
    std::map<std::string, ScalarType> dtypes;
    for (size_t i = 0; i < keys.size(); ++i) dtypes[keys[i]] = first[i];
    CHECK_FALSE(ours.check(*theirs->schema, dtypes).has_value());
    CHECK_FALSE(upstream().check(*theirs->schema, dtypes).has_value());
  }
}

TEST_CASE("our default verdicts equal upstream's on every op it lists", "[edge]") {
  // Op by op, every combination of dtypes either file accepts is checked
  // against the other with the checker itself: same verdict both ways.
  const EdgeDtypeRules &ours = EdgeDtypeRules::builtin();
  std::vector<std::string> differing;
  for (const EdgeOpConstraint *theirs : upstream().all()) {
    const EdgeOpConstraint *mine = ours.find(theirs->inherits);
    REQUIRE(mine);
    std::vector<std::string> keys = EdgeDtypeRules::dtypeKeys(*theirs->schema);
    auto combos = acceptedCombinations(*theirs, keys);
    auto myCombos = acceptedCombinations(*mine, keys);
    combos.insert(myCombos.begin(), myCombos.end());
    size_t disagreements = 0;
    for (const auto &combo : combos) {
      std::map<std::string, ScalarType> dtypes;
      for (size_t i = 0; i < keys.size(); ++i) dtypes[keys[i]] = combo[i];
      bool theyAccept = !upstream().check(*theirs->schema, dtypes);
      bool weAccept = !ours.check(*theirs->schema, dtypes);
      if (theyAccept != weAccept) ++disagreements;
    }
    if (disagreements) differing.push_back(theirs->inherits + " (" + std::to_string(disagreements) + ")");
  }
  std::string list;
  for (const auto &d : differing) list += d + " ";
  INFO("ops whose verdicts differ: " << list);
  CHECK(differing.empty());
  // The two the issue named.
  const OpSchema &relu = op("aten::relu");
  CHECK(ours.check(relu, {{"self", ScalarType::Bool}, {"__ret_0", ScalarType::Bool}}));
  const OpSchema &sin = op("aten::sin");
  CHECK(ours.check(sin, {{"self", ScalarType::ComplexFloat}, {"__ret_0", ScalarType::ComplexFloat}}));
}

TEST_CASE("a user's file overrides the ops it lists, the rest keep the built-in rules", "[edge]") {
  std::string path = writeTemp("overlay.yaml", R"(- func: aten::sigmoid
  namespace: edge
  inherits: aten::sigmoid
  type_alias:
    T0: [Int]
  type_constraint:
  - self: T0
    __ret_0: T0
)");
  EdgeDtypeRules user = EdgeDtypeRules::loadFile(path);
  EdgeDtypeRules merged = EdgeDtypeRules::builtin().overlaidWith(user);
  const OpSchema &sigmoid = op("aten::sigmoid");
  CHECK_FALSE(merged.check(sigmoid, {{"self", ScalarType::Int}, {"__ret_0", ScalarType::Int}}));
  CHECK(merged.check(sigmoid, {{"self", ScalarType::Float}, {"__ret_0", ScalarType::Float}}));
  // sin is not in the user's file: the built-in rule still rejects Int -> Int.
  const OpSchema &sin = op("aten::sin");
  CHECK(merged.check(sin, {{"self", ScalarType::Int}, {"__ret_0", ScalarType::Int}}));
  CHECK_FALSE(user.check(sin, {{"self", ScalarType::Int}, {"__ret_0", ScalarType::Int}}));
  CHECK(merged.size() == EdgeDtypeRules::builtin().size());
}

TEST_CASE("sigmoid: Int in gives Float out, never Int", "[edge][check]") {
  for (const EdgeDtypeRules *rules : {&upstream(), &EdgeDtypeRules::builtin()}) {
    const OpSchema &sigmoid = op("aten::sigmoid");
    CHECK_FALSE(rules->check(sigmoid, {{"self", ScalarType::Int}, {"__ret_0", ScalarType::Float}}));
    CHECK_FALSE(rules->check(sigmoid, {{"self", ScalarType::Double}, {"__ret_0", ScalarType::Double}}));
    auto err = rules->check(sigmoid, {{"self", ScalarType::Int}, {"__ret_0", ScalarType::Int}});
    REQUIRE(err);
    CHECK(err->find("aten::sigmoid: self=Int, __ret_0=Int matches no allowed row") != std::string::npos);
    CHECK(err->find("allowed: {self: ") != std::string::npos);
    CHECK(err->find("__ret_0: same as self}") != std::string::npos);
    // Float in, Double out breaks the unified alias of the floating row.
    CHECK(rules->check(sigmoid, {{"self", ScalarType::Float}, {"__ret_0", ScalarType::Double}}));
  }
}

TEST_CASE("alias unification", "[edge][check]") {
  std::string path = writeTemp("unify.yaml", R"(- func: aten::add.Tensor
  namespace: edge
  inherits: aten::add.Tensor
  type_alias:
    T0: [Float, Int]
  type_constraint:
  - self: T0
    other: T0
    __ret_0: T0
)");
  EdgeDtypeRules rules = EdgeDtypeRules::loadFile(path);
  const OpSchema &add = op("aten::add.Tensor");
  CHECK_FALSE(rules.check(add, {{"self", ScalarType::Float}, {"other", ScalarType::Float},
                                {"__ret_0", ScalarType::Float}}));
  CHECK_FALSE(rules.check(add, {{"self", ScalarType::Int}, {"other", ScalarType::Int},
                                {"__ret_0", ScalarType::Int}}));
  auto err = rules.check(add, {{"self", ScalarType::Float}, {"other", ScalarType::Int},
                               {"__ret_0", ScalarType::Float}});
  REQUIRE(err);
  CHECK(*err == "aten::add.Tensor: self=Float, other=Int, __ret_0=Float matches no allowed row; "
                "allowed: {self: Float|Int, other: same as self, __ret_0: same as self}");
  // A wildcard (None output) does not take part in unification.
  CHECK_FALSE(rules.check(add, {{"self", ScalarType::Int}, {"other", ScalarType::Int},
                                {"__ret_0", ScalarType::Undefined}}));
  // Upstream and ours: promotion is allowed, a wrong result dtype is not.
  for (const EdgeDtypeRules *r : {&upstream(), &EdgeDtypeRules::builtin()}) {
    CHECK_FALSE(r->check(add, {{"self", ScalarType::Float}, {"other", ScalarType::Int},
                               {"__ret_0", ScalarType::Float}}));
    CHECK(r->check(add, {{"self", ScalarType::Float}, {"other", ScalarType::Int},
                         {"__ret_0", ScalarType::Int}}));
  }
}

TEST_CASE("tensor lists, optional tensors and named returns", "[edge][check]") {
  const EdgeDtypeRules &ours = EdgeDtypeRules::builtin();
  const OpSchema &cat = op("aten::cat");
  CHECK_FALSE(ours.check(cat, {{"tensors", ScalarType::Float}, {"__ret_0", ScalarType::Float}}));
  CHECK(ours.check(cat, {{"tensors", ScalarType::Float}, {"__ret_0", ScalarType::Long}}));
  // An empty list is a wildcard.
  CHECK_FALSE(ours.check(cat, {{"tensors", ScalarType::Undefined}, {"__ret_0", ScalarType::Long}}));

  // Tensor?[] indices never take part.
  const OpSchema &index = op("aten::index.Tensor");
  CHECK_FALSE(upstream().check(index, {{"self", ScalarType::Float}, {"indices", ScalarType::Double},
                                       {"__ret_0", ScalarType::Float}}));

  // A None bias is left out; essential tensors must be present.
  const OpSchema &conv = op("aten::convolution");
  CHECK_FALSE(ours.check(conv, {{"input", ScalarType::Float}, {"weight", ScalarType::Float},
                                {"__ret_0", ScalarType::Float}}));
  auto missing = ours.check(conv, {{"input", ScalarType::Float}, {"__ret_0", ScalarType::Float}});
  REQUIRE(missing);
  CHECK(missing->find("'weight'") != std::string::npos);
  CHECK(ours.check(conv, {{"input", ScalarType::Float}, {"weight", ScalarType::Float},
                          {"__ret_0", ScalarType::Float}, {"stride", ScalarType::Float}}));

  // Named returns (max.dim: values, indices).
  const OpSchema &maxDim = op("aten::max.dim");
  for (const EdgeDtypeRules *r : {&upstream(), &ours}) {
    CHECK_FALSE(r->check(maxDim, {{"self", ScalarType::Float}, {"values", ScalarType::Float},
                                  {"indices", ScalarType::Long}}));
    CHECK(r->check(maxDim, {{"self", ScalarType::Float}, {"values", ScalarType::Float},
                            {"indices", ScalarType::Int}}));
  }
  CHECK(EdgeDtypeRules::returnKey(maxDim, 1) == "indices");
  CHECK(EdgeDtypeRules::returnKey(op("aten::max_pool2d_with_indices"), 1) == "__ret_1");
}

TEST_CASE("ops missing from the file are permissive", "[edge][check]") {
  const OpSchema &gather = op("aten::gather");
  REQUIRE(upstream().find("aten::gather") == nullptr);
  CHECK_FALSE(upstream().check(gather, {{"self", ScalarType::Float}, {"index", ScalarType::Bool},
                                        {"__ret_0", ScalarType::Half}}));
  // ... but only over the dtypes the edge dialect knows.
  CHECK(upstream().check(gather, {{"self", ScalarType::Float8_e4m3fn}, {"index", ScalarType::Long},
                                  {"__ret_0", ScalarType::Float}}));
  // Ours constrains gather: the index is integral.
  CHECK(EdgeDtypeRules::builtin().check(gather, {{"self", ScalarType::Float}, {"index", ScalarType::Bool},
                                                 {"__ret_0", ScalarType::Float}}));
}

TEST_CASE("loader errors name the file and line", "[edge][errors]") {
  SECTION("YAML syntax error") {
    std::string path = writeTemp("syntax.yaml", "- func: aten::abs\n  namespace: edge\n  type_alias: [unclosed\n");
    Error e = loadError(path);
    CHECK(e.file() == path);
    CHECK(e.location().rfind("line ", 0) == 0);
    CHECK(e.location() != "line 1");
    CHECK(e.message().find("YAML syntax error") != std::string::npos);
  }
  SECTION("unknown op") {
    std::string path = writeTemp("unknown-op.yaml", R"(- func: aten::abs
  namespace: edge
  inherits: aten::abs
  type_alias:
    T0: [Float]
  type_constraint:
  - self: T0
    __ret_0: T0

- func: aten::frobnicate
  namespace: edge
  inherits: aten::frobnicate
  type_alias:
    T0: [Float]
  type_constraint:
  - self: T0
    __ret_0: T0
)");
    Error e = loadError(path);
    CHECK(e.file() == path);
    CHECK(e.location() == "line 10");
    CHECK(e.message().find("aten::frobnicate") != std::string::npos);
  }
  SECTION("undeclared alias") {
    std::string path = writeTemp("alias.yaml", R"(- func: aten::abs
  namespace: edge
  inherits: aten::abs
  type_alias:
    T0: [Float]
  type_constraint:
  - self: T0
    __ret_0: T1
)");
    Error e = loadError(path);
    CHECK(e.location() == "line 8");
    CHECK(e.message().find("'T1' is not declared") != std::string::npos);
  }
  SECTION("unknown dtype") {
    std::string path = writeTemp("dtype.yaml", R"(- func: aten::abs
  namespace: edge
  inherits: aten::abs
  type_alias:
    T0: [Float, Quaternion]
  type_constraint:
  - self: T0
    __ret_0: T0
)");
    Error e = loadError(path);
    CHECK(e.location() == "line 5");
    CHECK(e.message().find("unknown dtype 'Quaternion'") != std::string::npos);
  }
  SECTION("row leaving out a tensor") {
    std::string path = writeTemp("row.yaml", R"(- func: aten::add.Tensor
  namespace: edge
  inherits: aten::add.Tensor
  type_alias:
    T0: [Float]
  type_constraint:
  - self: T0
    __ret_0: T0
)");
    Error e = loadError(path);
    CHECK(e.location() == "line 7");
    CHECK(e.message().find("'other'") != std::string::npos);
  }
  SECTION("missing file") {
    CHECK_THROWS_AS(EdgeDtypeRules::loadFile("/nonexistent/edge.yaml"), Error);
  }
}
