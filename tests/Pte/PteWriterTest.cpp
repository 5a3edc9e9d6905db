//===- tests/Pte/PteWriterTest.cpp - Layout rules of writePte ------------===//
//
// Golden models from pte-format.md (§3.2 add.pte, §2.2 arduino x + 1.0), the
// constant-segment padding rule, delegate blobs in segments vs inline with
// deduplication, mutable and named data, file-backed payload streaming,
// determinism and option validation.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDiff.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Pte/PteWriter.h"
#include "Pte/PteTestUtil.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace exir::pte;
using namespace exir::pte::test;

namespace {

bool programsEqual(const Program &a, const Program &b) {
  std::ostringstream out;
  bool equal = diffPte(a, b, out);
  UNSCOPED_INFO(out.str());
  return equal;
}

/// A program with one plan whose delegates carry the given blobs.
Program delegateModel(const std::vector<std::string> &blobs) {
  Program program = goldenAddModel();
  auto &plan = program.executionPlan[0];
  for (size_t i = 0; i < blobs.size(); ++i) {
    BackendDelegate delegate;
    delegate.id = "BackendWithCompilerDemo";
    delegate.processedData = BlobSource::fromBytes(blobs[i]);
    delegate.compileSpecs = {{"max_value", std::string("\x04", 1)}};
    plan.delegates.push_back(delegate);
    plan.chains[0].instructions.push_back(DelegateCall{int32_t(i), {0, 1, 2}});
  }
  return program;
}

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("exir_pte_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

} // namespace

TEST_CASE("golden add.pte: structure of forward(x, y) = x + y", "[pte][writer]") {
  Program model = goldenAddModel();
  std::string bytes = writePteToString(model);
  CHECK(bytes.substr(4, 4) == "ET12");
  CHECK(bytes.substr(8, 4) != "eh00"); // no extended header: all segments are empty

  Program p = readPte(bytes, "add.pte");
  CHECK_FALSE(p.layout.extendedHeader.has_value());
  CHECK(p.layout.segments == std::vector<DataSegment>{{0, 0}});
  CHECK(p.layout.constantSegment == SubsegmentOffsets{0, {0}});
  CHECK(p.layout.constantBuffer == std::vector<BlobSource>{});
  CHECK(p.layout.backendDelegateData == std::vector<BlobSource>{});
  CHECK_FALSE(p.layout.mutableDataSegments.has_value());
  CHECK_FALSE(p.namedData.has_value());
  REQUIRE(p.executionPlan.size() == 1);
  const auto &plan = p.executionPlan[0];
  CHECK(plan.values == model.executionPlan[0].values);
  CHECK(std::get<KernelCall>(plan.chains.at(0).instructions.at(0)).args == std::vector<int32_t>{0, 1, 3, 2, 2});
  CHECK(plan.nonConstBufferSizes == std::vector<int64_t>{0, 48});
  CHECK(plan.operators == std::vector<Operator>{{"aten::add", "out"}});
  CHECK(plan.chains[0].inputs.empty());
  CHECK(plan.chains[0].outputs.empty());
  CHECK(programsEqual(model, p));

  // Same structure as the upstream file with this content, and the same flatc view.
  Program upstream = readPteFile(corpusDir() + "et_add_portable_2024-09.pte");
  CHECK(programsEqual(upstream, p));
  std::ostringstream ours, theirs;
  dumpPteJson(p, ours);
  dumpPteJson(upstream, theirs);
  CHECK(ours.str() == theirs.str());
}

TEST_CASE("one float constant gives the arduino golden layout", "[pte][writer]") {
  std::string bytes = writePteToString(goldenConstantAddModel());
  REQUIRE(bytes.size() > 64);
  CHECK(bytes.substr(4, 4) == "ET12");
  CHECK(bytes.substr(8, 4) == "eh00");
  CHECK(readLE(bytes, 12, 4) == 32);
  uint64_t programSize = readLE(bytes, 16, 8);
  uint64_t segmentBase = readLE(bytes, 24, 8);
  uint64_t segmentDataSize = readLE(bytes, 32, 8);
  CHECK(segmentBase % 128 == 0);
  CHECK(segmentBase >= programSize);
  CHECK(segmentBase - programSize < 128);
  CHECK(segmentDataSize == 4);
  CHECK(bytes.size() == segmentBase + 4);
  CHECK(bytes.substr(bytes.size() - 4) == std::string("\x00\x00\x80\x3f", 4));
  // Padding between the flatbuffer and the segment is zeros.
  CHECK(bytes.substr(programSize, segmentBase - programSize) == std::string(segmentBase - programSize, '\0'));
  // The root offset was moved past the 32-byte header.
  CHECK(readLE(bytes, 0, 4) >= 40);

  Program p = readPte(bytes, "model.pte");
  CHECK(p.layout.segments == std::vector<DataSegment>{{0, 4}});
  CHECK(p.layout.constantSegment == SubsegmentOffsets{0, {0, 0}});
  REQUIRE(p.constants.size() == 2);
  CHECK(p.constants[1].bytes() == std::string("\x00\x00\x80\x3f", 4));
  CHECK(programsEqual(goldenConstantAddModel(), p));
}

TEST_CASE("constant tensors are padded to the constant alignment, the last one is not", "[pte][writer]") {
  Program model = goldenConstantAddModel();
  model.constants = {BlobSource(), BlobSource::fromBytes(std::string(5, '\x11')),
                     BlobSource::fromBytes(std::string(16, '\x22')), BlobSource::fromBytes(std::string(3, '\x33'))};
  auto check = [&](uint64_t alignment, std::vector<uint64_t> offsets, uint64_t segmentSize) {
    WriteOptions options;
    options.constantAlignment = alignment;
    std::string bytes = writePteToString(model, options);
    Program p = readPte(bytes, "constants.pte");
    CHECK(p.layout.constantSegment->offsets == offsets);
    CHECK(p.layout.segments->at(0).size == segmentSize);
    uint64_t base = p.layout.extendedHeader->segmentBaseOffset;
    // Padding bytes are zero and the data sits at its offset.
    CHECK(bytes.substr(base, 5) == std::string(5, '\x11'));
    CHECK(bytes.substr(base + 5, offsets[2] - 5) == std::string(offsets[2] - 5, '\0'));
    CHECK(bytes.substr(base + offsets[3], 3) == std::string(3, '\x33'));
    CHECK(bytes.size() == base + segmentSize);
    // The header is padded to a multiple of the largest alignment (zeros after
    // the 32 header bytes); the Verifier in readPte checked the alignments.
    uint64_t paddedHeader = std::max<uint64_t>(alignment, 32);
    CHECK(readLE(bytes, 0, 4) >= 8 + paddedHeader);
    CHECK(bytes.substr(40, paddedHeader - 32) == std::string(paddedHeader - 32, '\0'));
  };
  check(16, {0, 0, 16, 32}, 35);
  check(128, {0, 0, 128, 256}, 259);
  check(1, {0, 0, 5, 21}, 24);
}

TEST_CASE("no constants: placeholder offsets [0]", "[pte][writer]") {
  Program model = goldenAddModel();
  model.constants.clear(); // an empty list still gets the placeholder
  Program p = readPte(writePteToString(model), "none.pte");
  CHECK(p.layout.constantSegment == SubsegmentOffsets{0, {0}});
  CHECK(p.constants.size() == 1);
}

TEST_CASE("delegate blobs go to segments, deduplicated, or inline", "[pte][writer]") {
  Program model = delegateModel({"blob-A", "blob-B", "blob-A", ""});

  SECTION("segments (default)") {
    std::string bytes = writePteToString(model);
    Program p = readPte(bytes, "delegates.pte");
    const auto &delegates = p.executionPlan[0].delegates;
    // Segment 0 is the (empty) constant segment; A and B get one segment each.
    REQUIRE(p.layout.segments->size() == 3);
    CHECK(p.layout.segments->at(0) == DataSegment{0, 0});
    CHECK(p.layout.segments->at(1) == DataSegment{0, 6});
    CHECK(p.layout.segments->at(2) == DataSegment{128, 6});
    CHECK(delegates[0].processed == BackendDelegateDataReference{DataLocation::Segment, 1});
    CHECK(delegates[1].processed == BackendDelegateDataReference{DataLocation::Segment, 2});
    CHECK(delegates[2].processed == BackendDelegateDataReference{DataLocation::Segment, 1});
    // The empty blob stays inline.
    CHECK(delegates[3].processed == BackendDelegateDataReference{DataLocation::Inline, 0});
    CHECK(p.layout.backendDelegateData->size() == 1);
    CHECK(p.layout.extendedHeader->segmentDataSize == 134);
    CHECK(delegates[1].processedData.bytes() == "blob-B");
    CHECK(programsEqual(model, p));
  }
  SECTION("inline") {
    WriteOptions options;
    options.inlineDelegates = true;
    options.delegateAlignment = 64;
    std::string bytes = writePteToString(model, options);
    CHECK(bytes.substr(8, 4) != "eh00"); // nothing in segments
    Program p = readPte(bytes, "inline.pte");
    const auto &delegates = p.executionPlan[0].delegates;
    CHECK(p.layout.segments->size() == 1);
    REQUIRE(p.layout.backendDelegateData->size() == 3);
    CHECK(delegates[0].processed == BackendDelegateDataReference{DataLocation::Inline, 0});
    CHECK(delegates[1].processed == BackendDelegateDataReference{DataLocation::Inline, 1});
    CHECK(delegates[2].processed == BackendDelegateDataReference{DataLocation::Inline, 0});
    CHECK(delegates[3].processed == BackendDelegateDataReference{DataLocation::Inline, 2});
    // force_align: the inline bytes start at a multiple of the delegate alignment.
    for (const auto &blob : *p.layout.backendDelegateData)
      if (!blob.empty()) CHECK(blob.offset() % 64 == 0);
    CHECK(programsEqual(model, p));
  }
}

TEST_CASE("mutable data and named data segments", "[pte][writer]") {
  Program model = goldenAddModel();
  auto &values = model.executionPlan[0].values;
  std::get<Tensor>(values[0]).dataBufferIdx = 1; // planned with initial state
  std::get<Tensor>(values[1]).dataBufferIdx = 2;
  model.mutableData = {BlobSource(), BlobSource::fromBytes(std::string("\x01\x02\x03\x04", 4)),
                       BlobSource::fromBytes(std::string("\x05\x06\x07\x08", 4))};
  model.namedData = std::vector<NamedData>{{"w0", 0, BlobSource::fromBytes("named-bytes"), 1},
                                           {"w1", 0, BlobSource::fromBytes("aligned"), 256},
                                           {"w0-again", 0, BlobSource::fromBytes("named-bytes"), 1}};
  std::string bytes = writePteToString(model);
  Program p = readPte(bytes, "mutable.pte");
  REQUIRE(p.layout.segments->size() == 4);
  CHECK(p.layout.segments->at(1) == DataSegment{0, 8}); // packed, no padding
  CHECK(p.layout.mutableDataSegments == std::vector<SubsegmentOffsets>{{1, {0, 0, 4}}});
  CHECK(p.layout.segments->at(2) == DataSegment{128, 11});
  CHECK(p.layout.segments->at(3) == DataSegment{256, 7}); // lcm(128, 256)
  REQUIRE(p.namedData.has_value());
  CHECK(p.namedData->at(0).segmentIndex == 2);
  CHECK(p.namedData->at(1).segmentIndex == 3);
  CHECK(p.namedData->at(2).segmentIndex == 2); // same bytes share a segment
  CHECK(p.mutableData.at(2).bytes() == std::string("\x05\x06\x07\x08", 4));
  CHECK(programsEqual(model, p));

  model.namedData->at(1).alignment = 24;
  CHECK_THROWS_AS(writePteToString(model), exir::Error);
}

TEST_CASE("file-backed constants are streamed from disk", "[pte][writer]") {
  std::string path = tempPath("weights.bin");
  std::string payload;
  for (size_t i = 0; i < (3u << 20) + 17; ++i) payload.push_back(char((i * 131) % 251));
  {
    std::ofstream out(path, std::ios::binary);
    out << "HEADER!!" << payload;
  }
  Program model = goldenConstantAddModel();
  auto &weight = std::get<Tensor>(model.executionPlan[0].values[0]);
  weight.scalarType = exir::ScalarType::Byte;
  weight.sizes = {int32_t(payload.size())};
  weight.dimOrder = {0};
  model.constants[1] = BlobSource::fromFile(path, 8, payload.size());
  std::string bytes = writePteToString(model);
  Program p = readPte(bytes, "big.pte");
  CHECK(p.constants.at(1).size() == payload.size());
  CHECK((p.constants.at(1).bytes() == payload)); // parenthesized: no multi-megabyte expansion
  CHECK(p.constants.at(1) == model.constants[1]); // equal by content across storage kinds

  // A range past the end of the file fails cleanly.
  model.constants[1] = BlobSource::fromFile(path, 8, payload.size() + 1);
  CHECK_THROWS_AS(writePteToString(model), exir::Error);
  std::filesystem::remove(path);
}

TEST_CASE("writePte is deterministic and rejects bad input", "[pte][writer]") {
  CHECK(writePteToString(goldenConstantAddModel()) == writePteToString(goldenConstantAddModel()));
  CHECK(writePteToString(delegateModel({"x", "y"})) == writePteToString(delegateModel({"x", "y"})));

  for (uint64_t bad : {uint64_t(0), uint64_t(3), uint64_t(24), uint64_t(100)}) {
    INFO(bad);
    WriteOptions segment, constant, delegate;
    segment.segmentAlignment = bad;
    constant.constantAlignment = bad;
    delegate.delegateAlignment = bad;
    CHECK_THROWS_AS(writePteToString(goldenAddModel(), segment), exir::Error);
    CHECK_THROWS_AS(writePteToString(goldenAddModel(), constant), exir::Error);
    CHECK_THROWS_AS(writePteToString(goldenAddModel(), delegate), exir::Error);
  }
  try {
    WriteOptions options;
    options.segmentAlignment = 100;
    writePteToString(goldenAddModel(), options);
    FAIL("expected an error");
  } catch (const exir::Error &e) {
    CHECK(e.message() == "segment alignment must be a power of two, got 100");
  }

  Program badPlaceholder = goldenConstantAddModel();
  badPlaceholder.constants[0] = BlobSource::fromBytes("x");
  CHECK_THROWS_AS(writePteToString(badPlaceholder), exir::Error);

  Program badIndex = goldenConstantAddModel();
  std::get<Tensor>(badIndex.executionPlan[0].values[0]).dataBufferIdx = 2;
  CHECK_THROWS_AS(writePteToString(badIndex), exir::Error);
}

TEST_CASE("segment alignment option moves segments", "[pte][writer]") {
  WriteOptions options;
  options.segmentAlignment = 4096;
  std::string bytes = writePteToString(delegateModel({"first", "second"}), options);
  Program p = readPte(bytes, "aligned.pte");
  CHECK(p.layout.extendedHeader->segmentBaseOffset == 4096);
  CHECK(p.layout.segments->at(2).offset == 4096);
  CHECK(bytes.size() == 4096 + 4096 + 6);
}

TEST_CASE("a file-backed blob with an expected CRC-32 fails when the bytes changed", "[pte][blob]") {
  std::string path = std::string(EXIR_BINARY_DIR) + "/pte-crc-test.bin";
  exir::writeFileAtomically(path, std::string("0123456789abcdef"));
  uint32_t crc = exir::crc32Update(0, "456789ab");
  BlobSource good = BlobSource::fromFile(path, 4, 8).withExpectedCrc32(crc, "constant 'w'");
  CHECK(good.bytes() == "456789ab");
  exir::writeFileAtomically(path, std::string("0123456789ABCDEF")); // same size, other bytes
  CHECK_THROWS_WITH(good.bytes(), Catch::Contains("constant 'w': bytes 4..12 changed since they were referenced"));
  CHECK(BlobSource::fromFile(path, 4, 8).bytes() == "456789AB"); // unchecked blobs still read
}

/// An 8 MiB-ish file of holes around three short runs of bytes (head, middle, tail).
static void writeSparseFile(const std::string &path, uint64_t size) {
  std::ofstream out(path, std::ios::binary);
  out << "head";
  out.seekp(std::streamoff(5 << 20));
  out << "middle";
  out.seekp(std::streamoff(size - 4));
  out << "tail";
}

TEST_CASE("holes of a sparse file stream as zero runs, unread, and keep the CRC-32 check", "[pte][blob]") {
  std::string path = tempPath("sparse.bin");
  const uint64_t size = 8 << 20;
  writeSparseFile(path, size);
  std::string dense = BlobSource::fromFile(path, 2, size - 3).bytes();
  REQUIRE(dense.size() == size - 3);
  uint32_t crc = exir::crc32Update(0, dense);
  BlobSource blob = BlobSource::fromFile(path, 2, size - 3).withExpectedCrc32(crc, "constant 'w'");
  std::string data;
  uint64_t zeros = 0, total = 0;
  blob.forEachExtent(
      [&](std::string_view chunk) {
        data.append(chunk);
        total += chunk.size();
      },
      [&](uint64_t count) {
        data.append(count, '\0');
        zeros += count;
        total += count;
      });
  CHECK(total == size - 3);
  CHECK((data == dense));
  // Where the file system has holes (ext4, tmpfs, xfs, btrfs) most of the bytes are never read.
  CHECK(zeros >= size / 2);
  CHECK(blob.sha256Hex() == exir::sha256Hex(dense)); // forEachChunk feeds the zero runs as bytes
  BlobSource wrong = BlobSource::fromFile(path, 2, size - 3).withExpectedCrc32(crc ^ 1, "constant 'w'");
  CHECK_THROWS_WITH(wrong.forEachExtent([](std::string_view) {}, [](uint64_t) {}),
                    Catch::Contains("changed since they were referenced"));
  std::filesystem::remove(path);
}

TEST_CASE("under a ScopedFileCache blobs read the same bytes, holes and errors", "[pte][blob]") {
  std::string path = tempPath("cached.bin");
  const uint64_t size = 8 << 20;
  writeSparseFile(path, size);
  auto extents = [](const BlobSource &blob) {
    std::string data;
    uint64_t zeros = 0;
    blob.forEachExtent([&](std::string_view chunk) { data.append(chunk); },
                       [&](uint64_t count) {
                         data.append(count, '\0');
                         zeros += count;
                       });
    return std::make_pair(data, zeros);
  };
  // Small blobs (served from the cache's window), one across the window's end, large ones.
  std::vector<std::pair<uint64_t, uint64_t>> ranges = {{0, 4}, {1, 3}, {(5 << 20) - 2, 10}, {(5 << 20) + 3, 20000},
                                                       {2, size - 3}, {size - 10, 10}, {(5 << 20) - 100000, 200000}};
  std::vector<std::pair<std::string, uint64_t>> plain;
  for (auto [offset, length] : ranges) plain.push_back(extents(BlobSource::fromFile(path, offset, length)));
  {
    ScopedFileCache files;
    ScopedFileCache nested; // shares the outer cache
    for (size_t i = 0; i < ranges.size(); ++i) {
      auto [offset, length] = ranges[i];
      BlobSource blob = BlobSource::fromFile(path, offset, length);
      INFO("range " << offset << "+" << length);
      CHECK((extents(blob) == plain[i]));
      CHECK(blob.readPart(1, 5) == plain[i].first.substr(1, 5));
      uint32_t crc = exir::crc32Update(0, plain[i].first);
      CHECK(blob.withExpectedCrc32(crc, "w").bytes() == plain[i].first);
      CHECK_THROWS_WITH(blob.withExpectedCrc32(crc ^ 1, "w").bytes(), Catch::Contains("changed since"));
    }
    CHECK_THROWS_WITH(BlobSource::fromFile(path, size - 2, 4).bytes(), Catch::Contains("file too short"));
    CHECK_THROWS_WITH(BlobSource::fromFile(path, size - 2, 4).readPart(0, 4), Catch::Contains("file too short"));
    CHECK_THROWS_WITH(BlobSource::fromFile(path + ".missing", 0, 4).bytes(), Catch::Contains("cannot open file"));
  }
  std::filesystem::remove(path);
}

TEST_CASE("sameBytes compares file ranges byte by byte", "[pte][blob]") {
  std::string path = tempPath("same.bin");
  std::string half;
  for (size_t i = 0; i < (3u << 20) / 2 + 7; ++i) half.push_back(char((i * 13) % 251));
  std::string other = half;
  other.back() ^= 1; // differs only in the last byte, past the first 1 MiB chunk
  exir::writeFileAtomically(path, half + half + other);
  uint64_t n = half.size();
  BlobSource a = BlobSource::fromFile(path, 0, n), b = BlobSource::fromFile(path, n, n),
             c = BlobSource::fromFile(path, 2 * n, n);
  CHECK(a.sameBytes(b));
  CHECK(!a.sameBytes(c));
  CHECK(a.sameBytes(BlobSource::fromBytes(half)));
  CHECK(!c.sameBytes(BlobSource::fromBytes(half)));
  CHECK(!a.sameBytes(BlobSource::fromFile(path, 0, n - 1)));
  {
    ScopedFileCache files;
    CHECK(b.sameBytes(a));
    CHECK(!c.sameBytes(a));
  }
  std::filesystem::remove(path);
}

TEST_CASE("readPteFile leaves segments in the file", "[pte][reader]") {
  std::string path = tempPath("segments.pte");
  std::string payload;
  for (size_t i = 0; i < (1u << 20) + 5; ++i) payload.push_back(char((i * 7) % 253));
  Program model = goldenConstantAddModel();
  auto &weight = std::get<Tensor>(model.executionPlan[0].values[0]);
  weight.scalarType = exir::ScalarType::Byte;
  weight.sizes = {int32_t(payload.size())};
  weight.dimOrder = {0};
  model.constants[1] = BlobSource::fromBytes(payload);
  std::string bytes = writePteToString(model);
  exir::writeFileAtomically(path, bytes);
  Program fromFile = readPteFile(path);
  Program inMemory = readPte(bytes, path);
  REQUIRE(fromFile.constants.size() == 2);
  CHECK(fromFile.constants[1].isFile()); // a file range, read only when used
  CHECK(fromFile.constants[1].path() == path);
  CHECK((fromFile.constants[1].bytes() == payload));
  std::ostringstream a, b;
  TextDumpOptions hashes; // the hashes compare the payload bytes too
  hashes.hashes = true;
  dumpPteText(fromFile, a, hashes);
  dumpPteText(inMemory, b, hashes);
  CHECK(a.str() == b.str());
  // A file cut inside the segments fails as it does in memory.
  std::string cut = bytes.substr(0, bytes.size() - 1);
  exir::writeFileAtomically(path, cut);
  auto message = [](const std::function<void()> &read) {
    try {
      read();
    } catch (const exir::Error &e) {
      return e.message() + " @ " + e.location();
    }
    return std::string("no error");
  };
  std::string expected = message([&] { readPte(cut, path); });
  CHECK_THAT(expected, Catch::Contains("truncated"));
  CHECK(message([&] { readPteFile(path); }) == expected);
  std::filesystem::remove(path);
}
