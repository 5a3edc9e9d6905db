//===- tests/IR/ValueIndexTest.cpp - Dense ids for value names ------------===//
//
// Passes number a graph's names with ValueIndex and keep per-value facts in
// vectors, so an id must be stable, dense and in first-insertion order, and a
// lookup must never answer for a different name (names that share long
// prefixes, differ in their last byte or only in length, the empty name),
// also through its cache of recent lookups and across table growth.
//
//===----------------------------------------------------------------------===//
#include "IR/ValueNames.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

using exir::ValueIndex;

TEST_CASE("ValueIndex numbers names densely in first-insertion order", "[valueindex]") {
  std::vector<std::string> names = {"x", "alloc", "alloc_1", "aten_linear_default", "aten_linear_default_1", ""};
  ValueIndex index;
  for (uint32_t i = 0; i < names.size(); ++i) CHECK(index.intern(names[i]) == i);
  CHECK(index.size() == names.size());
  // Again: the same ids, nothing added; a copy of a name (other storage) finds it.
  for (uint32_t i = 0; i < names.size(); ++i) {
    std::string copy = names[i];
    CHECK(index.intern(copy) == i);
    CHECK(index.find(copy) == i);
    CHECK(index.name(i) == names[i]);
  }
  CHECK(index.size() == names.size());
  CHECK(index.find("alloc_2") == ValueIndex::npos);
  CHECK(index.find("allo") == ValueIndex::npos);
  CHECK(ValueIndex().find("x") == ValueIndex::npos);
}

TEST_CASE("ValueIndex tells apart names that differ in one byte or in length only", "[valueindex]") {
  // Lengths 0..40 cross the hash's 4- and 8-byte load boundaries; zero bytes
  // make names of different lengths look alike to a careless loader.
  std::vector<std::string> names;
  for (size_t len = 0; len <= 40; ++len) {
    names.push_back(std::string(len, 'a'));
    names.push_back(std::string(len, '\0'));
    if (len) {
      std::string last = std::string(len - 1, 'a') + "b";
      names.push_back(last);
      std::string first = "b" + std::string(len - 1, 'a');
      names.push_back(first);
    }
  }
  // Duplicates (the empty name twice, "b" twice) get one id.
  ValueIndex index;
  std::vector<uint32_t> ids;
  for (const auto &n : names) ids.push_back(index.intern(n));
  for (size_t i = 0; i < names.size(); ++i)
    for (size_t j = 0; j < names.size(); ++j) CHECK((ids[i] == ids[j]) == (names[i] == names[j]));
  for (size_t i = 0; i < names.size(); ++i) CHECK(index.find(names[i]) == ids[i]);
}

TEST_CASE("ValueIndex keeps ids through growth and repeated lookups", "[valueindex]") {
  std::vector<std::string> names;
  for (int i = 0; i < 20000; ++i) names.push_back("aten_add_tensor_" + std::to_string(i));
  ValueIndex index;
  index.reserve(10); // grows many times
  for (uint32_t i = 0; i < names.size(); ++i) REQUIRE(index.intern(names[i]) == i);
  // Recent and far lookups interleaved (the cache of recent lookups must
  // not answer for another name).
  for (uint32_t i = 0; i < names.size(); ++i) {
    REQUIRE(index.find(names[i]) == i);
    REQUIRE(index.find(names[names.size() - 1 - i]) == names.size() - 1 - i);
    REQUIRE(index.find(names[i / 2]) == i / 2);
  }
  CHECK(index.find("aten_add_tensor_20000") == ValueIndex::npos);
  CHECK(index.find("aten_add_tensor_") == ValueIndex::npos);
  CHECK(index.size() == names.size());
}
