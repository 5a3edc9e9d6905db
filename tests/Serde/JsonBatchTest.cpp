//===- tests/Serde/JsonBatchTest.cpp - finding big containers and their items ===//
//
// findDeferredContainers is checked against simdjson: every item it cuts out
// must parse alone to the element the whole document's DOM has at that index
// or key, on random documents whose strings hold quotes, backslashes,
// brackets and commas at every offset of the 64-byte blocks it scans.
//
//===----------------------------------------------------------------------===//
#include "Serde/JsonBatch.h"

#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

using namespace exir::json;

namespace {

std::vector<DeferredContainer> findIn(const std::string &text, const std::vector<std::string> &patterns,
                                    size_t minBytes = 1) {
  simdjson::padded_string padded(text);
  return findDeferredContainers(std::string_view(padded.data(), padded.size()), patterns, minBytes);
}

std::string item(const std::string &text, const DeferredContainer &c, size_t k) {
  return text.substr(c.separators[k] + 1, c.separators[k + 1] - c.separators[k] - 1);
}

std::string minified(simdjson::dom::element e) { return simdjson::minify(e); }

// A random JSON value; strings mix escapes and the scanner's special bytes.
std::string randomValue(std::mt19937 &rng, int depth) {
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  auto randomString = [&] {
    static const char *pieces[] = {"a", "{", "}", "[", "]", ",", ":", " ", "\\\"", "\\\\", "\\n", "\\u005b", "xyz"};
    std::string s = "\"";
    int n = pick(depth == 0 ? 90 : 12);
    for (int i = 0; i < n; ++i) s += pieces[pick(13)];
    return s + "\"";
  };
  int kind = depth >= 4 ? pick(3) : pick(6);
  switch (kind) {
  case 0: return randomString();
  case 1: return std::to_string(pick(100000) - 500);
  case 2: return pick(2) ? "true" : "null";
  case 3: {
    std::string s = "[";
    int n = pick(5);
    for (int i = 0; i < n; ++i) s += (i ? ", " : " ") + randomValue(rng, depth + 1);
    return s + "]";
  }
  default: {
    std::string s = "{";
    int n = pick(5);
    for (int i = 0; i < n; ++i) s += std::string(i ? ",\n " : "") + randomString() + ": " + randomValue(rng, depth + 1);
    return s + "}";
  }
  }
}

/// Restores the default scan (AVX2 where the CPU has it) when a test ends.
struct WideScan {
  explicit WideScan(bool allowed) { active = setWideScan(allowed); }
  ~WideScan() { setWideScan(true); }
  bool active = false;
};

} // namespace

TEST_CASE("the items found parse to the whole DOM's elements", "[serde][batch]") {
  // Both scans: the baseline one (SSE2) and, where the CPU has AVX2, the wide one.
  const bool wide = GENERATE(false, true);
  WideScan scan(wide);
  if (wide && !scan.active) WARN("this CPU has no AVX2: only the baseline scan is checked");
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::string nodes = "[", values = "{";
    int n = 2 + static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) {
      nodes += (i ? "," : "") + std::string(rng() % 2 ? " " : "") + randomValue(rng, 0);
      values += (i ? ", " : "") + std::string("\"k") + std::to_string(i) + "\\\"\": " + randomValue(rng, 0);
    }
    nodes += "]";
    values += "}";
    std::string text = R"({"skip": [{"nodes": [1, 2]}], "a\"b": {"nodes": [3, 4]}, "graph": {"nodes": )" + nodes +
                       R"(, "tensor_values": )" + values + R"(, "x": "]]"}})";
    auto found = findIn(text, {"/graph/nodes", "/graph/tensor_values"});
    REQUIRE(found.size() == 2);
    CHECK(found[0].pointer == "/graph/nodes");
    CHECK(!found[0].object);
    CHECK(found[1].pointer == "/graph/tensor_values");
    CHECK(found[1].object);

    simdjson::dom::parser parser;
    simdjson::dom::element whole = parser.parse(text);
    simdjson::dom::array array = whole["graph"]["nodes"].get_array();
    REQUIRE(found[0].size() == array.size());
    size_t k = 0;
    for (simdjson::dom::element e : array) {
      simdjson::dom::parser one;
      CHECK(minified(one.parse(item(text, found[0], k++))) == minified(e));
    }
    simdjson::dom::object object = whole["graph"]["tensor_values"].get_object();
    REQUIRE(found[1].size() == object.size());
    k = 0;
    for (auto field : object) {
      simdjson::dom::parser one;
      std::string wrapped = "{" + item(text, found[1], k++) + "}";
      simdjson::dom::object alone = one.parse(wrapped).get_object();
      REQUIRE(alone.size() == 1);
      CHECK((*alone.begin()).key == field.key);
      CHECK(minified((*alone.begin()).value) == minified(field.value));
    }
  }
}

TEST_CASE("containers are found only where a pattern names them", "[serde][batch]") {
  std::string text = R"({"methods": {"forward": {"nodes": [1, 2, 3]}, "b\u0061d": {"nodes": [4, 5]},)"
                     R"( "small": {"nodes": [6, 7]}, "list": [{"nodes": [8, 9]}], "one": {"nodes": [10]}}})";
  auto found = findIn(text, {"/methods/*/nodes"});
  REQUIRE(found.size() == 2); // not through an escaped key, an array, or with one item
  CHECK(found[0].pointer == "/methods/forward/nodes");
  CHECK(found[0].size() == 3);
  CHECK(found[1].pointer == "/methods/small/nodes");
  // Their places among the skeleton's containers (root 0, methods 1, forward 2, ...).
  CHECK(found[0].ordinal == 3);
  CHECK(found[1].ordinal == 7);
  // A named container kept whole keeps the containers inside it in the count.
  auto later = findIn(R"({"a": {"nodes": [[1], [2]]}, "b": {"nodes": [3, 4, 5, 6]}})", {"/*/nodes"}, 11);
  REQUIRE(later.size() == 1);
  CHECK(later[0].pointer == "/b/nodes");
  CHECK(later[0].ordinal == 6);
  CHECK(findIn(text, {"/methods/forward/nodes"}).size() == 1);
  CHECK(findIn(text, {"/methods/*/nodes"}, 9).size() == 1); // [1, 2, 3] is 9 bytes, [6, 7] 6
  auto outer = findIn(text, {"/methods/*/nodes", "/methods"}); // never one inside another
  REQUIRE(outer.size() == 1);
  CHECK(outer[0].pointer == "/methods");
  CHECK(outer[0].size() == 5);
}

TEST_CASE("the wide scan finds what the baseline scan finds", "[serde][batch]") {
  std::mt19937 rng(11);
  for (int round = 0; round < 300; ++round) {
    std::string nodes = "[";
    int n = 2 + static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i) nodes += (i ? ", " : "") + randomValue(rng, static_cast<int>(rng() % 3));
    std::string text = R"({"graph": {"nodes": )" + nodes + "]}}";
    std::vector<DeferredContainer> baseline, wide;
    {
      WideScan scan(false);
      baseline = findIn(text, {"/graph/nodes"});
    }
    {
      WideScan scan(true);
      if (!scan.active && round == 0) WARN("this CPU has no AVX2: both scans are the baseline one");
      wide = findIn(text, {"/graph/nodes"});
    }
    REQUIRE(baseline.size() == 1);
    REQUIRE(wide.size() == 1);
    CHECK(wide[0].separators == baseline[0].separators);
    CHECK(wide[0].ordinal == baseline[0].ordinal);
  }
}

TEST_CASE("texts that are not plain JSON defer nothing", "[serde][batch]") {
  const std::vector<std::string> patterns = {"/nodes"};
  CHECK(findIn(R"({"nodes": [1, 2]})", patterns).size() == 1);
  CHECK(findIn(R"({"nodes": [1, 2})", patterns).empty());             // unbalanced
  CHECK(findIn(R"({"nodes": [1, 2]]})", patterns).empty());           // a ] too many
  CHECK(findIn(R"({"nodes": [1, 2], "nodes": [3, 4]})", patterns).empty()); // repeated
  CHECK(findIn(R"({"nodes": [1, 2]} {"nodes": [3, 4]})", patterns).empty()); // two documents
  CHECK(findIn(R"({"nodes": [1, "2]})", patterns).empty());           // a string never closed
}
