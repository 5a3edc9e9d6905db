//===- tests/Pte/SegmentDataTest.cpp - segment data written on threads ---===//
//
// writeSegmentData writes runs of payloads on several threads into an output
// that takes writes at offsets; the file must hold exactly the bytes the
// sequential writer streams, holes where zeros were skipped, and report the
// first failing payload's error with no output left behind.
//
//===----------------------------------------------------------------------===//
#include "Pte/SegmentSink.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace exir::pte;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("exir_segdata_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::string randomBytes(std::mt19937 &rng, size_t n) {
  std::string s(n, '\0');
  for (char &c : s) c = char(rng() & 0xff);
  return s;
}

/// A generator that feeds its bytes in uneven chunks, as a gathered view does.
BlobSource generated(std::string bytes) {
  auto shared = std::make_shared<const std::string>(std::move(bytes));
  auto generator = std::make_shared<BlobSource::Generator>();
  generator->produce = [shared](const std::function<void(std::string_view)> &sink) {
    for (size_t at = 0, step = 1; at < shared->size(); at += step, step = step * 3 + 7)
      sink(std::string_view(*shared).substr(at, step));
  };
  generator->part = [shared](uint64_t offset, uint64_t length) { return shared->substr(offset, length); };
  return BlobSource::fromGenerator(shared->size(), generator);
}

/// Payloads of every kind, placed with 128-byte aligned gaps: small and large
/// in-memory ones, all-zero ones, file ranges (one over holes), generated ones.
struct Payloads {
  std::vector<BlobSource> blobs;
  std::vector<PlacedBlob> placed;
  uint64_t total = 0;
};

Payloads makePayloads(const std::string &weights, const std::string &sparseWeights) {
  std::mt19937 rng(7);
  Payloads p;
  p.blobs.push_back(BlobSource::fromBytes(std::string(3u << 20, '\0')));
  for (int i = 0; i < 300; ++i) p.blobs.push_back(BlobSource::fromBytes(randomBytes(rng, 1 + rng() % 3000)));
  p.blobs.push_back(BlobSource::fromFile(weights, 5, (6u << 20) + 11));
  p.blobs.push_back(generated(randomBytes(rng, (5u << 20) + 3)));
  p.blobs.push_back(BlobSource::fromFile(sparseWeights, 1, (8u << 20) - 2));
  for (int i = 0; i < 50; ++i) p.blobs.push_back(BlobSource::fromFile(weights, rng() % 4096, 1 + rng() % 70000));
  p.blobs.push_back(generated(randomBytes(rng, 300000)));
  p.blobs.push_back(BlobSource::fromBytes(std::string(1000, '\0'))); // the last payload: zeros
  uint64_t at = 64; // a leading gap, as the .ptd has
  for (const BlobSource &blob : p.blobs) {
    p.placed.push_back({at, &blob});
    at = (at + blob.size() + 127) / 128 * 128;
  }
  p.total = at + 77; // trailing zeros
  return p;
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Offset of the first differing byte, or -1 (Catch printing two 25 MB strings takes minutes).
int64_t firstDifference(const std::string &a, const std::string &b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (a[i] != b[i]) return int64_t(i);
  return a.size() == b.size() ? -1 : int64_t(n);
}

struct Files {
  std::string weights = tempPath("weights.bin"), sparse = tempPath("sparse.bin"), out = tempPath("out.bin");
  Files() {
    std::mt19937 rng(3);
    exir::writeFileAtomically(weights, randomBytes(rng, 7u << 20));
    std::ofstream s(sparse, std::ios::binary);
    s << "head";
    s.seekp(std::streamoff(5 << 20));
    s << "middle";
    s.seekp(std::streamoff((8 << 20) - 4));
    s << "tail";
  }
  ~Files() {
    for (const auto &p : {weights, sparse, out}) std::filesystem::remove(p);
  }
};

} // namespace

TEST_CASE("segment data written on threads is the bytes the sequential writer streams", "[pte][segments]") {
  Files files;
  Payloads p = makePayloads(files.weights, files.sparse);
  for (bool sparse : {false, true}) {
    // Into a string stream, which takes no offsets (nor seeks past its end:
    // not sparse): always sequential.
    std::ostringstream expectedStream;
    expectedStream << "head";
    writeSegmentData(expectedStream, p.total, p.placed, {false, {}, 1, 0});
    expectedStream << "tail";
    std::string expected = expectedStream.str();
    REQUIRE(expected.size() == 8 + p.total);
    std::ostringstream again;
    again << "head";
    writeSegmentData(again, p.total, p.placed, {false, {}, 4, 0});
    again << "tail";
    CHECK(firstDifference(again.str(), expected) == -1);

    for (unsigned threads : {1u, 2u, 3u, 8u}) {
      CAPTURE(sparse, threads);
      exir::writeFileAtomically(files.out, [&](std::ostream &out) {
        out << "head";
        writeSegmentData(out, p.total, p.placed, {sparse, {}, threads, 0});
        out << "tail";
      });
      CHECK(firstDifference(readAll(files.out), expected) == -1);
      if (sparse) {
        // The 3 MiB of zeros and the sparse file's holes were skipped, not written.
        struct stat st;
        REQUIRE(::stat(files.out.c_str(), &st) == 0);
        CHECK(uint64_t(st.st_blocks) * 512 < uint64_t(st.st_size) - (6u << 20));
      }
    }
  }
}

TEST_CASE("segment data ending in skipped zeros still has its full size", "[pte][segments]") {
  Files files;
  std::vector<BlobSource> blobs = {BlobSource::fromBytes(std::string(200, 'x')),
                                   BlobSource::fromBytes(std::string(5u << 20, '\0'))};
  std::vector<PlacedBlob> placed = {{0, &blobs[0]}, {256, &blobs[1]}};
  uint64_t total = 256 + (5u << 20) + 1000;
  exir::writeFileAtomically(files.out, [&](std::ostream &out) {
    writeSegmentData(out, total, placed, {true, {}, 2, 0});
  });
  std::string bytes = readAll(files.out);
  REQUIRE(bytes.size() == total);
  CHECK(bytes.substr(0, 200) == std::string(200, 'x'));
  CHECK(bytes.find_first_not_of('\0', 200) == std::string::npos);
}

TEST_CASE("progress of segment data written on threads rises to the total on the calling thread",
          "[pte][segments]") {
  Files files;
  Payloads p = makePayloads(files.weights, files.sparse);
  std::vector<std::pair<uint64_t, uint64_t>> calls;
  std::thread::id caller = std::this_thread::get_id();
  bool otherThread = false;
  SegmentDataOptions options{true, {}, 3, 0};
  options.progress = [&](uint64_t written, uint64_t total) {
    otherThread |= std::this_thread::get_id() != caller;
    calls.emplace_back(written, total);
  };
  exir::writeFileAtomically(files.out, [&](std::ostream &out) { writeSegmentData(out, p.total, p.placed, options); });
  CHECK_FALSE(otherThread);
  REQUIRE(calls.size() >= 2);
  for (size_t i = 1; i < calls.size(); ++i) {
    CHECK(calls[i].first > calls[i - 1].first);
    CHECK(calls[i].second == p.total);
  }
  CHECK(calls.back().first == p.total);
}

TEST_CASE("a payload that cannot be read fails the output written on threads", "[pte][segments]") {
  Files files;
  Payloads p = makePayloads(files.weights, files.sparse);
  // File ranges past the end of the weights file, in the middle of the
  // payloads; the earlier one's error is reported, as by a single thread.
  BlobSource broken = BlobSource::fromFile(files.weights, 7u << 20, 100);
  BlobSource brokenAtEnd = BlobSource::fromFile(files.weights, 7u << 20, 200);
  // A later payload that fails after the earlier one has: its error must not
  // replace the earlier one's.
  auto slow = std::make_shared<BlobSource::Generator>();
  slow->produce = [](const std::function<void(std::string_view)> &) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    throw exir::Error("a later payload failed");
  };
  slow->part = [](uint64_t, uint64_t) { return std::string(); };
  BlobSource slowFailure = BlobSource::fromGenerator(1000, slow);
  p.placed[200].blob = &broken;
  p.placed[301].blob = &slowFailure; // the 6 MiB file range: a run of its own
  p.placed[p.placed.size() - 3].blob = &brokenAtEnd;
  std::filesystem::remove(files.out);
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    for (int round = 0; round < 5; ++round) {
      CAPTURE(threads, round);
      CHECK_THROWS_WITH(exir::writeFileAtomically(files.out,
                                                  [&](std::ostream &out) {
                                                    writeSegmentData(out, p.total, p.placed, {true, {}, threads, 0});
                                                  }),
                        Catch::Contains("file too short: blob of 100 bytes"));
      CHECK_FALSE(std::filesystem::exists(files.out));
    }
  }
}
