//===- tests/Serde/TorchPickleTest.cpp - Hostile pickles ------------------===//
//
// The legacy .pt2 / torch.save reader walks the unpickled value tree: a list
// that contains itself, a million nested lists and a memo-shared tree that
// expands exponentially are refused with one message, without recursing
// through the stack or leaking the cycle.
//
//===----------------------------------------------------------------------===//
#include "Serde/TorchPickle.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {
std::string errorOf(const std::string &pickle) {
  try {
    readPickledTensors(pickle, "data.pkl");
  } catch (const Error &e) {
    return e.message();
  }
  return "";
}
} // namespace

TEST_CASE("a pickled list that contains itself is refused", "[pickle]") {
  // PROTO 2, EMPTY_LIST, BINPUT 0, BINGET 0, APPEND, STOP
  std::string pickle("\x80\x02]q\x00h\x00" "a.", 9);
  CHECK(errorOf(pickle) == "pickle: container at '0' contains itself");
}

TEST_CASE("deeply nested pickled lists are refused", "[pickle]") {
  const size_t depth = 1'000'000;
  std::string pickle = "\x80\x02" + std::string(depth, ']') + std::string(depth - 1, 'a') + ".";
  CHECK(errorOf(pickle) == "pickle: containers nest deeper than 1000 levels");
}

TEST_CASE("a pickle whose shared references expand exponentially is refused", "[pickle]") {
  // x0 = []; x(k+1) = [xk, xk] through the memo: 2^40 paths in 40 levels.
  std::string pickle = std::string("\x80\x02]q\x00", 5) + "0"; // POP: only the memo keeps it
  for (int k = 0; k < 40; ++k) {
    pickle += "](h";
    pickle += char(k);
    pickle += "h";
    pickle += char(k);
    pickle += "eq";
    pickle += char(k + 1);
    pickle += "0";
  }
  pickle += "h";
  pickle += char(40);
  pickle += ".";
  CHECK(errorOf(pickle).find("too many shared references") != std::string::npos);
}

TEST_CASE("nested pickled containers within the bound are read", "[pickle]") {
  std::string pickle = "\x80\x02" + std::string(50, ']') + std::string(49, 'a') + ".";
  CHECK(readPickledTensors(pickle, "data.pkl").empty());
}
