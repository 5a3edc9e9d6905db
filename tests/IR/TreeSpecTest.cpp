//===- tests/IR/TreeSpecTest.cpp - Checked pytree spec strings ------------===//
//
// torch's treespec_dumps strings are read into a typed tree; malformed ones
// (a node without children_spec, fields of the wrong JSON type, dict keys
// that do not match the children, absurd nesting) are refused with the JSON
// pointer of the offending node, never crash.
//
//===----------------------------------------------------------------------===//
#include "IR/TreeSpec.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {
const char kLeaf[] = R"({"type": null, "context": null, "children_spec": []})";

std::string forwardXY() {
  return std::string(R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [)") +
         R"({"type": "builtins.tuple", "context": "null", "children_spec": [)" + kLeaf + ", " + kLeaf + "]}, " +
         R"({"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
}

/// The message of the exir::Error that `fn` throws; "" when it returns.
template <typename F> std::string thrownBy(F &&fn) {
  try {
    fn();
  } catch (const Error &e) {
    return e.message();
  }
  return "";
}

std::string errorOf(const std::string &text) {
  return thrownBy([&] { parseTreeSpec(text); });
}
} // namespace

TEST_CASE("parseTreeSpec reads torch's forward(x, y) spec", "[treespec]") {
  TreeSpec spec = parseTreeSpec(forwardXY());
  CHECK(spec.type == "builtins.tuple");
  REQUIRE(spec.children.size() == 2);
  CHECK(spec.leafCount() == 2);
  CHECK(spec.children[0].children[1].isLeaf());
  CHECK(spec.children[1].type == "builtins.dict");
}

TEST_CASE("parseTreeSpec reads dict keys from the context", "[treespec]") {
  std::string text = std::string(R"([1, {"type": "builtins.dict", "context": "[\"a\", 1]", "children_spec": [)") +
                     kLeaf + ", " + kLeaf + "]}]";
  TreeSpec spec = parseTreeSpec(text);
  REQUIRE(spec.keys.size() == 2);
  CHECK(spec.keys[0].isString);
  CHECK(spec.keys[0].text == "a");
  CHECK_FALSE(spec.keys[1].isString);
  CHECK(spec.keys[1].text == "1");
}

TEST_CASE("parseTreeSpec refuses malformed specs with a location", "[treespec]") {
  CHECK(errorOf(R"([1, {"type": "builtins.tuple", "context": "null"}])") ==
        "pytree spec /1: missing 'children_spec'");
  CHECK(errorOf(R"([1, {"type": 5, "context": "null", "children_spec": []}])") ==
        "pytree spec /1: 'type' must be a string or null, got number");
  CHECK(errorOf(R"([1, {"type": "builtins.dict", "context": 7, "children_spec": []}])") ==
        "pytree spec /1: 'context' must be a string (JSON text) or null, got number");
  CHECK(errorOf(R"([1, {"type": "builtins.list", "context": "null", "children_spec": [3]}])") ==
        "pytree spec /1/children_spec/0: expected an object {type, context, children_spec}, got number");
  CHECK(errorOf(std::string(R"([1, {"type": "builtins.dict", "context": "[]", "children_spec": [)") + kLeaf +
                "]}]") == "pytree spec /1: a builtins.dict with 1 children has 0 keys");
  CHECK(errorOf(R"([1, {"type": "builtins.dict", "context": "[", "children_spec": []}])")
            .rfind("pytree spec /1/context is not valid JSON", 0) == 0);
  CHECK(errorOf(R"([1, {"type)").rfind("pytree spec is not valid JSON", 0) == 0);
  CHECK(errorOf(R"({"type": null})") == "pytree spec must be [protocol, node], got object");
  CHECK(errorOf(std::string("[2, ") + kLeaf + "]") == "pytree spec /0: unsupported protocol 2 (expected 1)");
  CHECK(errorOf(R"([1, {"type": null, "context": null, "children_spec": [{}]}])") ==
        "pytree spec /1: a leaf (type null) must have a null context and no children");
}

TEST_CASE("parseTreeSpec bounds the nesting", "[treespec]") {
  auto nested = [](size_t depth) {
    std::string text = "[1, ";
    for (size_t i = 0; i < depth; ++i) text += R"({"type": "builtins.list", "context": "null", "children_spec": [)";
    text += kLeaf;
    for (size_t i = 0; i < depth; ++i) text += "]}";
    return text + "]";
  };
  CHECK(parseTreeSpec(nested(kMaxTreeSpecDepth)).leafCount() == 1);
  CHECK(errorOf(nested(kMaxTreeSpecDepth + 1)).find("nests deeper than") != std::string::npos);
  // 50,000 levels: refused while parsing, before anything recurses.
  CHECK(errorOf(nested(50'000)).find("nests deeper than") != std::string::npos);
}

TEST_CASE("checkTreeSpec remembers only accepted specs", "[treespec]") {
  const std::string good = forwardXY(), emptyDict = R"("context": "[]")";
  // The same spec with a dict whose key list does not match its children.
  std::string bad = good;
  bad.replace(bad.find(emptyDict), emptyDict.size(), R"("context": "[\"k\"]")");
  REQUIRE_NOTHROW(parseTreeSpec(good));
  REQUIRE(errorOf(bad).find("has 1 keys") != std::string::npos);

  auto checkError = [](const std::string &text) { return thrownBy([&] { checkTreeSpec(text); }); };
  for (int round = 0; round < 3; ++round) {
    CHECK(checkError(good).empty());
    CHECK(checkError(bad) == errorOf(bad)); // refused every time, not remembered
  }
  // More distinct accepted texts than the memo holds, then each again.
  std::vector<std::string> many;
  for (int i = 0; i < 20; ++i) {
    std::string t = good;
    t.replace(t.find(emptyDict), emptyDict.size(), emptyDict + std::string(size_t(i), ' '));
    many.push_back(t);
  }
  for (int round = 0; round < 2; ++round)
    for (const auto &t : many) CHECK(checkError(t).empty());
  CHECK(checkError(bad) == errorOf(bad));
  CHECK(checkError("[1, {}]").find("missing") != std::string::npos);
}
