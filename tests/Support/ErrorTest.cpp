//===- tests/Support/ErrorTest.cpp - One-line diagnostics, checked math ----===//
//
// Error::render keeps a diagnostic on one line whatever the input names hold
// (control characters escaped, long quoted names cut), and the checked-math
// helpers report overflow instead of wrapping.
//
//===----------------------------------------------------------------------===//
#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <limits>

using namespace exir;

TEST_CASE("oneLineMessage escapes control characters", "[error]") {
  CHECK(oneLineMessage("unknown target 'a\nb'") == "unknown target 'a\\nb'");
  CHECK(oneLineMessage("tab\there\r\x1b[31m") == "tab\\there\\r\\x1b[31m");
  CHECK(oneLineMessage("plain 'name' stays") == "plain 'name' stays");
  CHECK(oneLineMessage("caf\xc3\xa9 '\xe2\x80\xa6'") == "caf\xc3\xa9 '\xe2\x80\xa6'");
}

TEST_CASE("oneLineMessage cuts long quoted names", "[error]") {
  std::string huge(10'000'000, 'x');
  std::string out = oneLineMessage("unknown call target '" + huge + "' [pass p]");
  CHECK(out == "unknown call target '" + std::string(kMaxQuotedInMessage, 'x') + "\xe2\x80\xa6' [pass p]");
  // An apostrophe inside a word opens no quoted run.
  std::string text = "can't read " + std::string(300, 'y');
  CHECK(oneLineMessage(text) == text);
}

TEST_CASE("oneLineMessage bounds the whole line", "[error]") {
  std::string out = oneLineMessage(std::string(100'000, 'z'));
  CHECK(out.size() < kMaxMessageLength + 8);
  CHECK(out.find('\n') == std::string::npos);
}

TEST_CASE("Error::render is one line", "[error]") {
  Error e("unknown call target 'x\ny'", "in\n.json", "/nodes/0");
  CHECK(e.render() == "'in\\n.json': /nodes/0: unknown call target 'x\\ny'");
}

TEST_CASE("checked arithmetic reports overflow", "[checked-math]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  CHECK(checkedMul<int64_t>(int64_t(1) << 62, 4) == std::nullopt);
  CHECK(checkedMul<int64_t>(kMax, 1) == kMax);
  CHECK(checkedAdd<uint64_t>(UINT64_MAX, 1) == std::nullopt);
  CHECK(checkedAlignUp<uint64_t>(UINT64_MAX - 3, 16) == std::nullopt);
  CHECK(checkedAlignUp<uint64_t>(17, 16) == 32u);
  CHECK(checkedProduct(std::vector<int64_t>{int64_t(1) << 61, 8}) == std::nullopt);
  CHECK(checkedProduct(std::vector<int64_t>{3, -4}) == std::nullopt);
  CHECK(checkedProduct(std::vector<int64_t>{16, 3, 3, 3}) == 432);
  CHECK(isPowerOfTwo(uint64_t(1) << 63));
  CHECK_FALSE(isPowerOfTwo(0));
  CHECK_FALSE(isPowerOfTwo(24));
}

TEST_CASE("Error::render keeps the message after a very deep location", "[error]") {
  std::string deep;
  for (int i = 0; i < 5000; ++i) deep += "/as_string_to_argument/a";
  Error e("nesting too deep", "f.json", deep);
  std::string out = e.render();
  CHECK(out.size() < kMaxLocationLength + 100);
  CHECK(out.rfind("'f.json': /as_string_to_argument/a", 0) == 0);
  CHECK(out.find("\xe2\x80\xa6") != std::string::npos);
  CHECK(out.substr(out.size() - std::string(": nesting too deep").size()) == ": nesting too deep");
}
