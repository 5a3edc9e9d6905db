//===- tests/IR/CompactVectorTest.cpp - A vector in one pointer -----------===//
//
// CompactVector stands in for std::vector in Argument's lists: every
// operation here is checked against a std::vector doing the same, with
// strings so that a lost or doubled element shows (and ASan sees the rest).
//
//===----------------------------------------------------------------------===//
#include "IR/CompactVector.h"

#include <catch2/catch.hpp>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using exir::CompactVector;

namespace {
std::vector<std::string> asVector(const CompactVector<std::string> &v) { return std::vector<std::string>(v.begin(), v.end()); }
} // namespace

TEST_CASE("CompactVector is one pointer and empty holds nothing", "[compactvector]") {
  STATIC_REQUIRE(sizeof(CompactVector<std::string>) == sizeof(void *));
  CompactVector<int64_t> v;
  CHECK(v.empty());
  CHECK(v.capacity() == 0);
  CHECK(v.begin() == v.end());
  CHECK(v == std::vector<int64_t>{});
  CHECK_THROWS_AS(v.at(0), std::out_of_range);
}

TEST_CASE("CompactVector does what std::vector does, operation by operation", "[compactvector]") {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    CompactVector<std::string> c;
    std::vector<std::string> s;
    for (int step = 0; step < 60; ++step) {
      std::string item = "item-" + std::to_string(rng() % 1000) + std::string(rng() % 20, 'x');
      switch (rng() % 10) {
      case 0:
      case 1:
      case 2: c.push_back(item); s.push_back(item); break;
      case 3: {
        size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        auto it = c.insert(c.begin() + at, item);
        s.insert(s.begin() + long(at), item);
        REQUIRE(*it == item);
        break;
      }
      case 4:
        if (!s.empty()) {
          size_t at = rng() % s.size();
          c.erase(c.begin() + at);
          s.erase(s.begin() + long(at));
        }
        break;
      case 5: {
        size_t n = rng() % 12;
        c.resize(n, item);
        s.resize(n, item);
        break;
      }
      case 6: {
        std::vector<std::string> more = {item, item + "a", item + "b"};
        size_t at = s.empty() ? 0 : rng() % (s.size() + 1);
        c.insert(c.begin() + at, more.begin(), more.end());
        s.insert(s.begin() + long(at), more.begin(), more.end());
        break;
      }
      case 7:
        if (!s.empty()) { // aliasing: the element added is one of the vector's own
          c.push_back(c[0]);
          s.push_back(std::string(s[0]));
        }
        break;
      case 8:
        if (!s.empty()) {
          c.pop_back();
          s.pop_back();
        }
        break;
      case 9: {
        CompactVector<std::string> copy = c; // copies and moves keep the contents
        CompactVector<std::string> moved = std::move(copy);
        c = moved;
        REQUIRE(moved == c);
        break;
      }
      }
      REQUIRE(asVector(c) == s);
      REQUIRE(c.size() == s.size());
      REQUIRE(c.capacity() >= c.size());
    }
    c.clear();
    CHECK(c.empty());
  }
}

TEST_CASE("CompactVector converts from and to std::vector and assigns", "[compactvector]") {
  std::vector<std::string> names = {"a", "bb", std::string(40, 'c')};
  CompactVector<std::string> c = names;
  CHECK(c == names);
  std::vector<std::string> back(c); // explicit: no hidden copies
  CHECK(back == names);
  CompactVector<std::string> moved = std::vector<std::string>(names);
  CHECK(moved == c);
  c = {"x"};
  CHECK(asVector(c) == std::vector<std::string>{"x"});
  c.assign(3, "y");
  CHECK(asVector(c) == std::vector<std::string>{"y", "y", "y"});
  c.assign(3, c[1]); // a value of its own
  CHECK(asVector(c) == std::vector<std::string>{"y", "y", "y"});
  c.assign(names.begin(), names.begin() + 2);
  CHECK(asVector(c) == std::vector<std::string>{"a", "bb"});
  c.reserve(100);
  CHECK(c.capacity() >= 100);
  CHECK(asVector(c) == std::vector<std::string>{"a", "bb"});
  CompactVector<int64_t> ints = {3, 1, 2};
  CHECK(ints < CompactVector<int64_t>{3, 2});
  CHECK(ints.at(2) == 2);
  CHECK(ints.front() == 3);
  CHECK(ints.back() == 2);
}

namespace {
// Copies throw once `failNext` is set; moves never do (CompactVector needs that).
struct Fragile {
  static inline bool failNext = false;
  std::string text;
  explicit Fragile(std::string t) : text(std::move(t)) {}
  Fragile(const Fragile &o) : text(o.text) {
    if (failNext) {
      failNext = false;
      throw std::runtime_error("copy failed");
    }
  }
  Fragile(Fragile &&o) noexcept = default;
  Fragile &operator=(const Fragile &) = default;
  Fragile &operator=(Fragile &&) noexcept = default;
};
} // namespace

TEST_CASE("CompactVector keeps its elements when an element's copy throws", "[compactvector]") {
  CompactVector<Fragile> v;
  v.reserve(4);
  Fragile a("a");
  for (int i = 0; i < 3; ++i) v.push_back(a);
  Fragile::failNext = true; // room left: constructed in place
  CHECK_THROWS_AS(v.push_back(a), std::runtime_error);
  REQUIRE(v.size() == 3);
  v.push_back(Fragile("b"));
  REQUIRE(v.size() == v.capacity()); // full: built before the move to a bigger block
  Fragile::failNext = true;
  CHECK_THROWS_AS(v.push_back(a), std::runtime_error);
  REQUIRE(v.size() == 4);
  CHECK(v[0].text == "a");
  CHECK(v[3].text == "b");
  v.push_back(a);
  CHECK(v.size() == 5);
  CHECK(v[4].text == "a");
}
