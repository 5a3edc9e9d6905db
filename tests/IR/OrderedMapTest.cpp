//===- tests/IR/OrderedMapTest.cpp - Insertion-ordered map ----------------===//
//
// Order is what makes our JSON byte-stable: insertion order is kept, an
// overwrite keeps the key's position, and erase keeps the lookup index of the
// entries after it correct.
//
//===----------------------------------------------------------------------===//
#include "IR/OrderedMap.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using exir::OrderedMap;

namespace {
std::vector<std::string> keysOf(const OrderedMap<int> &m) {
  std::vector<std::string> keys;
  for (const auto &[k, v] : m) keys.push_back(k);
  return keys;
}
std::vector<int> valuesOf(const OrderedMap<int> &m) {
  std::vector<int> values;
  for (const auto &[k, v] : m) values.push_back(v);
  return values;
}
} // namespace

TEST_CASE("OrderedMap iterates in insertion order", "[orderedmap]") {
  OrderedMap<int> m;
  m.set("zeta", 1);
  m.set("alpha", 2);
  m.set("mid", 3);
  CHECK(keysOf(m) == std::vector<std::string>{"zeta", "alpha", "mid"});
  CHECK(m.size() == 3);
  CHECK_FALSE(m.empty());
  REQUIRE(m.find("alpha"));
  CHECK(*m.find("alpha") == 2);
  CHECK(m.find("beta") == nullptr);
  CHECK(m.contains("mid"));
  CHECK_FALSE(m.contains("Mid"));
}

TEST_CASE("OrderedMap overwrite keeps the position", "[orderedmap]") {
  OrderedMap<int> m;
  m.set("a", 1);
  m.set("b", 2);
  m.set("c", 3);
  int &ref = m.set("a", 10);
  CHECK(ref == 10);
  CHECK(keysOf(m) == std::vector<std::string>{"a", "b", "c"});
  CHECK(valuesOf(m) == std::vector<int>{10, 2, 3});
  // operator[] on an existing key neither moves nor resets it; on a new key it appends.
  m["b"] += 5;
  m["d"];
  CHECK(keysOf(m) == std::vector<std::string>{"a", "b", "c", "d"});
  CHECK(valuesOf(m) == std::vector<int>{10, 7, 3, 0});
}

TEST_CASE("OrderedMap erase keeps order and lookups of later keys", "[orderedmap]") {
  OrderedMap<int> m;
  for (int i = 0; i < 5; ++i) m.set("k" + std::to_string(i), i);
  CHECK(m.erase("k1"));
  CHECK_FALSE(m.erase("k1"));
  CHECK_FALSE(m.erase("nope"));
  CHECK(keysOf(m) == std::vector<std::string>{"k0", "k2", "k3", "k4"});
  // Every remaining key still finds its own value (the index was shifted).
  for (int i : {0, 2, 3, 4}) {
    REQUIRE(m.find("k" + std::to_string(i)));
    CHECK(*m.find("k" + std::to_string(i)) == i);
  }
  // Re-inserting an erased key appends it at the end.
  m.set("k1", 11);
  CHECK(keysOf(m) == std::vector<std::string>{"k0", "k2", "k3", "k4", "k1"});
  m.set("k3", 33);
  CHECK(valuesOf(m) == std::vector<int>{0, 2, 33, 4, 11});
  m.clear();
  CHECK(m.empty());
  CHECK(m.find("k0") == nullptr);
}

TEST_CASE("OrderedMap equality is order-sensitive", "[orderedmap]") {
  OrderedMap<int> a, b;
  a.set("x", 1);
  a.set("y", 2);
  b.set("y", 2);
  b.set("x", 1);
  CHECK_FALSE(a == b);
  b.erase("y");
  b.set("y", 2);
  CHECK(a == b);
}

TEST_CASE("OrderedMap keeps working past the small-map size", "[orderedmap]") {
  // Small maps are searched linearly and large ones through a hash index; an
  // erase or overwrite must keep both views consistent when crossing over.
  OrderedMap<int> m;
  for (int i = 0; i < 20; ++i) m.set("k" + std::to_string(i), i);
  CHECK(m.size() == 20);
  for (int i = 0; i < 20; ++i) {
    REQUIRE(m.find("k" + std::to_string(i)));
    CHECK(*m.find("k" + std::to_string(i)) == i);
  }
  // Erase down to a small map, checking every survivor after each step.
  for (int i = 0; i < 18; i += 1) {
    REQUIRE(m.erase("k" + std::to_string(i)));
    for (int j = i + 1; j < 20; ++j) {
      INFO("after erasing k" << i << ", looking up k" << j);
      REQUIRE(m.find("k" + std::to_string(j)));
      CHECK(*m.find("k" + std::to_string(j)) == j);
    }
    CHECK_FALSE(m.contains("k" + std::to_string(i)));
  }
  CHECK(keysOf(m) == std::vector<std::string>{"k18", "k19"});
  m.set("k5", 55);
  m.set("k18", 180);
  CHECK(keysOf(m) == std::vector<std::string>{"k18", "k19", "k5"});
  CHECK(valuesOf(m) == std::vector<int>{180, 19, 55});
  // Copies compare equal and look up independently.
  OrderedMap<int> copy = m;
  CHECK(copy == m);
  copy.erase("k19");
  CHECK(*copy.find("k5") == 55);
  CHECK(m.contains("k19"));
}

TEST_CASE("OrderedMap rewrite drops and renames in one sweep", "[orderedmap]") {
  // Small (linear search) and indexed maps, and a reserved one (indexed while small).
  for (int count : {5, 40, 3000}) {
    INFO("count " << count);
    OrderedMap<int> m;
    if (count == 5) m.reserve(100);
    for (int i = 0; i < count; ++i) m.set("k" + std::to_string(i), i);
    // Drop every third key, rename every odd one kept; order stays.
    m.rewrite([](std::string &key, int &value) {
      if (value % 3 == 0) return false;
      if (value % 2) key = "r" + std::to_string(value);
      return true;
    });
    std::vector<std::string> keys;
    std::vector<int> values;
    for (int i = 0; i < count; ++i) {
      if (i % 3 == 0) continue;
      keys.push_back((i % 2 ? "r" : "k") + std::to_string(i));
      values.push_back(i);
    }
    CHECK(keysOf(m) == keys);
    CHECK(valuesOf(m) == values);
    for (int i = 0; i < count; ++i) {
      std::string kept = (i % 2 ? "r" : "k") + std::to_string(i);
      const int *found = m.find(kept);
      if (i % 3 == 0) {
        CHECK_FALSE(found);
      } else {
        REQUIRE(found);
        CHECK(*found == i);
      }
      if (i % 2 && i % 3) CHECK_FALSE(m.contains("k" + std::to_string(i))); // the old name is gone
    }
    // Inserting after the rewrite still indexes (and finds) the new key.
    m.set("new", -1);
    REQUIRE(m.find("new"));
    CHECK(*m.find("new") == -1);
    CHECK(m.size() == values.size() + 1);
  }
}

TEST_CASE("OrderedMap lookups stay right through index growth", "[orderedmap]") {
  OrderedMap<int> m;
  for (int i = 0; i < 5000; ++i) {
    m.set("key/" + std::to_string(i * 7919), i);
    if (i % 997 == 0)
      for (int j = 0; j <= i; ++j) REQUIRE(m.find("key/" + std::to_string(j * 7919)));
  }
  for (int i = 0; i < 5000; ++i) {
    REQUIRE(m.find("key/" + std::to_string(i * 7919)));
    CHECK(*m.find("key/" + std::to_string(i * 7919)) == i);
    CHECK_FALSE(m.contains("key/" + std::to_string(i * 7919 + 1)));
  }
}

TEST_CASE("OrderedMap::findHashed finds what find finds, searched or indexed", "[orderedmap]") {
  // Sizes on both sides of the small-map limit (searched linearly, then indexed).
  for (int size : {3, 5000}) {
    OrderedMap<int> m;
    for (int i = 0; i < size; ++i) m.set("v" + std::to_string(i), i);
    for (int i = 0; i < size; ++i) {
      std::string key = "v" + std::to_string(i);
      const int *found = m.findHashed(key, exir::hashString(key));
      REQUIRE(found);
      CHECK(found == m.find(key));
    }
    std::string absent = "v" + std::to_string(size);
    CHECK(m.findHashed(absent, exir::hashString(absent)) == nullptr);
  }
}

TEST_CASE("OrderedMap::eraseKeys erases the listed keys and keeps the order", "[orderedmap]") {
  for (int n : {5, 300}) { // searched linearly, indexed
    INFO(n);
    OrderedMap<int> m;
    for (int i = 0; i < n; ++i) m.set("v" + std::to_string(i), i);
    std::vector<std::string> erase = {"absent"};
    for (int i = 0; i < n; i += 2) erase.push_back("v" + std::to_string(i));
    erase.push_back("v0"); // listed twice
    m.eraseKeys(erase);
    REQUIRE(m.size() == size_t(n / 2));
    int expected = 1;
    for (const auto &[key, value] : m) {
      CHECK(key == "v" + std::to_string(expected));
      CHECK(value == expected);
      expected += 2;
    }
    for (int i = 0; i < n; ++i) CHECK(m.contains("v" + std::to_string(i)) == (i % 2 == 1));
    m.eraseKeys(std::vector<std::string>{"absent"});
    CHECK(m.size() == size_t(n / 2));
  }
}

TEST_CASE("OrderedMap filled unindexed finds its keys once indexed, and refuses a repeated key", "[orderedmap]") {
  // Sizes on both sides of the small-map limit; the big one after reserve()
  // (whose table indexUnique reuses) and without.
  for (int size : {5, 3000}) {
    for (bool reserved : {false, true}) {
      OrderedMap<int> m;
      if (reserved) m.reserve(2 * size_t(size));
      m.appendUnindexed(size_t(size));
      REQUIRE(m.size() == size_t(size));
      for (int i = size - 1; i >= 0; --i) { // any order: each item is set in place
        m.itemAt(size_t(i)).first = "k" + std::to_string(i);
        m.itemAt(size_t(i)).second = 10 * i;
      }
      REQUIRE(m.indexUnique());
      for (int i = 0; i < size; ++i) {
        const int *found = m.find("k" + std::to_string(i));
        REQUIRE(found);
        CHECK(*found == 10 * i);
      }
      CHECK_FALSE(m.contains("k" + std::to_string(size)));
      CHECK(keysOf(m).front() == "k0");
      m.set("new", 1); // and it keeps growing as a map
      CHECK(*m.find("new") == 1);
      CHECK(*m.find("k" + std::to_string(size - 1)) == 10 * (size - 1));
    }
    OrderedMap<int> twice;
    twice.appendUnindexed(size_t(size));
    for (int i = 0; i < size; ++i) twice.itemAt(size_t(i)).first = "k" + std::to_string(i == size - 1 ? 0 : i);
    CHECK_FALSE(twice.indexUnique());
  }
}
