//===- tests/Pte/DistinctBlobsTest.cpp - Blob deduplication --------------===//
#include "Pte/DistinctBlobs.h"

#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

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

namespace {
/// A 256 x 256 float storage, gathered transposed by a generator, as the
/// emitter does for a folded permute of a file-backed weight; `partBytes`
/// counts the bytes that the samples gather.
BlobSource transposedView(std::shared_ptr<const std::string> storage, std::shared_ptr<uint64_t> partBytes) {
  constexpr uint64_t n = 256, e = 4;
  auto gathered = [storage](uint64_t offset, uint64_t length) {
    std::string out;
    for (uint64_t at = offset / e; at * e < offset + length && at < n * n; ++at)
      out.append(storage->data() + ((at % n) * n + at / n) * e, e);
    return out.substr(size_t(offset % e), size_t(length));
  };
  auto generator = std::make_shared<BlobSource::Generator>();
  generator->produce = [gathered](const std::function<void(std::string_view)> &sink) { sink(gathered(0, n * n * e)); };
  generator->part = [gathered, partBytes](uint64_t offset, uint64_t length) {
    *partBytes += length;
    return gathered(offset, length);
  };
  return BlobSource::fromGenerator(n * n * e, std::move(generator));
}
} // namespace

TEST_CASE("DistinctBlobs tells gathered views apart by their bytes", "[pte][constants]") {
  std::string bytes(256 * 256 * 4, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = char(i * 7 + i / 251);
  auto storage = std::make_shared<const std::string>(bytes);
  // The same storage but for one element that no sample covers (row 100, column 3
  // lands at dense byte 3 * 1024 + 400 of the transposed view).
  std::string changedBytes = bytes;
  changedBytes[(100 * 256 + 3) * 4] ^= 1;
  auto changed = std::make_shared<const std::string>(changedBytes);
  auto partBytes = std::make_shared<uint64_t>(0);
  BlobSource t = transposedView(storage, partBytes);
  std::string tBytes = t.bytes();
  REQUIRE(tBytes != bytes);

  DistinctBlobs blobs;
  CHECK(blobs.add(t) == 0);
  // The untransposed storage: same size, other bytes.
  CHECK(blobs.add(BlobSource::fromBytes(bytes)) == 1);
  // Sampling a gathered view reads a few hundred bytes of it, not KiBs.
  CHECK(*partBytes > 0);
  CHECK(*partBytes <= 1024);
  // Another view object with the same storage and parameters: the same bytes.
  CHECK(blobs.add(transposedView(storage, partBytes)) == 0);
  // The same view of a storage that differs outside the samples: the SHA-256 decides.
  CHECK(blobs.add(transposedView(changed, partBytes)) == 2);
  // The gathered bytes, wherever they live, match the view.
  CHECK(blobs.add(BlobSource::fromBytes(tBytes)) == 0);
  CHECK(blobs.size() == 3);
}
