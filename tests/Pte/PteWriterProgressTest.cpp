//===- tests/Pte/PteWriterProgressTest.cpp - progress while streaming ----===//
//
// The writer reports segment bytes as it streams them, so a tool can show a
// progress bar while gigabytes of weights are copied.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteWriter.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

using namespace exir::pte;
using namespace exir::pte::test;

TEST_CASE("writePte reports streamed segment bytes up to the total", "[pte][writer]") {
  exir::pte::Program p = goldenConstantAddModel();
  // A constant larger than one 1 MiB chunk, so progress is reported several times.
  p.constants.push_back(BlobSource::fromBytes(std::string(3u << 20, '\x7f')));
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  WriteOptions options;
  options.progress = [&](uint64_t written, uint64_t total) { calls.emplace_back(written, total); };
  std::string bytes = writePteToString(p, options);
  REQUIRE(calls.size() >= 4);
  for (size_t i = 1; i < calls.size(); ++i) {
    CHECK(calls[i].first > calls[i - 1].first);
    CHECK(calls[i].second == calls[0].second);
  }
  // The last call is the end of the last segment: segment_data_size of the header.
  CHECK(calls.back().first == calls.back().second);
  CHECK(calls.back().second == readLE(bytes, 32, 8));
}
