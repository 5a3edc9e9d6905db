//===- tests/IR/NodeMetadataTest.cpp - Shared metadata strings ------------===//
//
// A node's metadata values are SharedStrings: copies share one record, the
// reader gives equal values one record, and the map keeps the file's order.
//
//===----------------------------------------------------------------------===//
#include "IR/IR.h"
#include "IR/NodeMetadata.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace exir;

TEST_CASE("SharedString holds its characters and shares them with copies", "[metadata]") {
  SharedString empty;
  CHECK(empty.empty());
  CHECK(empty.view().empty());
  CHECK(std::strcmp(empty.data(), "") == 0);
  CHECK(SharedString("") == empty);
  CHECK_FALSE(SharedString("").sharesRecordWith(empty)); // the empty string holds no record

  std::string text = "  File \"/m.py\", line 3, in forward\n    return F.relu(x)";
  SharedString a(text);
  CHECK(a == text);
  CHECK(a.size() == text.size());
  CHECK(a.data()[a.size()] == '\0');
  CHECK(a.str() == text);

  SharedString copy = a;
  CHECK(copy.sharesRecordWith(a));
  SharedString moved = std::move(copy);
  CHECK(moved.sharesRecordWith(a));
  CHECK(copy.empty()); // NOLINT(bugprone-use-after-move): a moved-from string is empty
  moved = moved; // self-assignment keeps it
  CHECK(moved == text);

  SharedString other(text); // equal characters, another record
  CHECK(other == a);
  CHECK_FALSE(other.sharesRecordWith(a));
  CHECK(SharedString("x") != a);
  CHECK(a != "x");
  CHECK(a == std::string_view(text));
  a = SharedString("replaced");
  CHECK(a == "replaced");
  CHECK(moved == text); // the other owner still holds the old value
}

TEST_CASE("SharedString copies made and dropped on two threads leave the record intact", "[metadata]") {
  SharedString original(std::string(100, 'q'));
  auto churn = [&] {
    for (int i = 0; i < 100000; ++i) {
      SharedString copy = original;
      SharedString again(copy);
      (void)again;
    }
  };
  std::thread t(churn);
  churn();
  t.join();
  CHECK(original == std::string(100, 'q'));
  SharedString last = original;
  original = SharedString();
  CHECK(last == std::string(100, 'q')); // the record outlives the first owner
}

TEST_CASE("StringInterner gives equal strings one record", "[metadata]") {
  StringInterner strings;
  CHECK(strings.intern("").empty());
  CHECK(strings.size() == 0);
  std::vector<SharedString> first;
  for (int i = 0; i < 5000; ++i) first.push_back(strings.intern("frame " + std::to_string(i)));
  CHECK(strings.size() == 5000); // the table grew many times
  for (int i = 0; i < 5000; ++i) {
    SharedString again = strings.intern("frame " + std::to_string(i));
    REQUIRE(again == "frame " + std::to_string(i));
    REQUIRE(again.sharesRecordWith(first[size_t(i)]));
  }
  CHECK(strings.size() == 5000);
  CHECK_FALSE(strings.intern("frame 1").sharesRecordWith(strings.intern("frame 2")));
}

TEST_CASE("NodeMetadata keeps the order, overwrites in place and erases", "[metadata]") {
  NodeMetadata m;
  CHECK(m.empty());
  m.set("stack_trace", "t");
  m.set("nn_module_stack", "n");
  m.set("torch_fn", "f");
  m.set("stack_trace", "t2"); // keeps its position
  std::vector<std::string> keys, values;
  for (const auto &[k, v] : m) {
    keys.push_back(k.str());
    values.push_back(v.str());
  }
  CHECK(keys == std::vector<std::string>{"stack_trace", "nn_module_stack", "torch_fn"});
  CHECK(values == std::vector<std::string>{"t2", "n", "f"});
  REQUIRE(m.find("torch_fn"));
  CHECK(*m.find("torch_fn") == "f");
  CHECK_FALSE(m.find("custom"));
  NodeMetadata copy = m;
  CHECK(copy == m);
  CHECK(copy.find("stack_trace")->sharesRecordWith(*m.find("stack_trace"))); // a copy copies pointers
  CHECK(m.erase("nn_module_stack"));
  CHECK_FALSE(m.erase("nn_module_stack"));
  CHECK(m.size() == 2);
  CHECK_FALSE(m.contains("nn_module_stack"));
  CHECK(copy != m);
}
