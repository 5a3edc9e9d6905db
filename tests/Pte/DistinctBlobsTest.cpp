//===- tests/Pte/DistinctBlobsTest.cpp - Blob deduplication --------------===//
#include "Pte/DistinctBlobs.h"

#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <unistd.h>

using namespace exir;
using namespace exir::pte;

TEST_CASE("DistinctBlobs hashes only blobs of equal size", "[pte][constants]") {
  DistinctBlobs blobs;
  // Unreadable paths prove that nothing is read: distinct sizes never hash,
  // and the same file range matches without reading.
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 0, 16)) == 0);
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 64, 32)) == 1);
  CHECK(blobs.add(BlobSource::fromFile("/nonexistent/a", 0, 16)) == 0);
  // Equal sizes compare bytes.
  CHECK(blobs.add(BlobSource::fromBytes("abcd")) == 2);
  CHECK(blobs.add(BlobSource::fromBytes("abce")) == 3);
  CHECK(blobs.add(BlobSource::fromBytes("abcd")) == 2);
  CHECK(blobs.size() == 4);
}

namespace {
std::string writeTempFile(const std::string &name, const std::string &bytes) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("exir_distinct_" + std::to_string(::getpid()) + "_" + name))
                         .string();
  std::ofstream(path, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
  return path;
}
} // namespace

TEST_CASE("DistinctBlobs does not hash large equal-size blobs whose samples differ", "[pte][constants]") {
  // Three 64 KiB tensors: b differs from a in its first bytes, c only in the
  // middle of a quarter (outside the samples), d equals a.
  std::string a(64 << 10, 'a'), b = a, c = a;
  b[10] = 'b';
  c[64 << 8] = 'c';
  std::string path = writeTempFile("weights", a + b + c + a);
  // A wrong expected CRC makes every complete read (hashing) throw: adding a
  // and b must not read either whole.
  auto blob = [&](uint64_t index) {
    return BlobSource::fromFile(path, index * a.size(), a.size()).withExpectedCrc32(0, "weight");
  };
  DistinctBlobs blobs;
  CHECK(blobs.add(blob(0)) == 0);
  CHECK(blobs.add(blob(1)) == 1);
  CHECK(blobs.add(blob(0)) == 0); // the same range: no read at all
  // c has a's samples, so the bytes decide (hashing here checks the CRC).
  CHECK_THROWS_AS(blobs.add(blob(2)), exir::Error);
  DistinctBlobs checked;
  auto plain = [&](uint64_t index) { return BlobSource::fromFile(path, index * a.size(), a.size()); };
  CHECK(checked.add(plain(0)) == 0);
  CHECK(checked.add(plain(1)) == 1);
  CHECK(checked.add(plain(2)) == 2);
  CHECK(checked.add(plain(3)) == 0); // other range, same bytes
  CHECK(checked.add(BlobSource::fromBytes(c)) == 2);
  std::filesystem::remove(path);
}

TEST_CASE("DistinctBlobs adds many equal-size blobs in linear time", "[pte][constants]") {
  // 200k distinct 8-byte blobs: comparing each with every earlier one (the
  // quadratic way) would take minutes; one lookup each takes well under a second.
  DistinctBlobs blobs;
  for (uint64_t i = 0; i < 200000; ++i) {
    std::string bytes(8, '\0');
    std::memcpy(bytes.data(), &i, 8);
    REQUIRE(blobs.add(BlobSource::fromBytes(bytes)) == i);
  }
  std::string first(8, '\0');
  CHECK(blobs.add(BlobSource::fromBytes(first)) == 0);
  CHECK(blobs.size() == 200000);
}
