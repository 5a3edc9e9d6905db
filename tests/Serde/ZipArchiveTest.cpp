//===- tests/Serde/ZipArchiveTest.cpp - The zip directory reader ----------===//
//
// Archives written byte by byte here (stored members, optionally ZIP64 records
// and data descriptors), then damaged one field at a time: each damage is
// refused with an exir::Error naming the archive and a byte offset. Deflated
// members come from libzip's writer.
//
//===----------------------------------------------------------------------===//
#include "Serde/ZipArchive.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <catch2/catch.hpp>
#include <zip.h>

#include <filesystem>
#include <fstream>

using namespace exir;
namespace fs = std::filesystem;

namespace {

void put(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += char((value >> (8 * i)) & 0xff);
}
void patch(std::string &bytes, size_t at, uint64_t value, int n) {
  for (int i = 0; i < n; ++i) bytes[at + size_t(i)] = char((value >> (8 * i)) & 0xff);
}

struct Options {
  bool zip64 = false;        // sizes and offsets in ZIP64 extra fields and records
  bool descriptor = false;   // local headers with zero sizes and CRC (bit 3), as torch writes
};

/// A zip of STORED members as the APPNOTE lays it out.
std::string buildZip(const std::vector<std::pair<std::string, std::string>> &members, Options options = {}) {
  std::string zip, directory;
  for (const auto &[name, data] : members) {
    uint64_t offset = zip.size();
    uint32_t crc = crc32Update(0, data);
    uint64_t flags = options.descriptor ? 8 : 0;
    // Local header.
    put(zip, 0x04034b50, 4);
    put(zip, options.zip64 ? 45 : 20, 2);
    put(zip, flags, 2);
    put(zip, 0, 2);      // stored
    put(zip, 0, 2);      // time
    put(zip, 0x21, 2);   // date: 1980-01-01
    put(zip, options.descriptor ? 0 : crc, 4);
    uint64_t localSize = options.descriptor ? 0 : options.zip64 ? 0xFFFFFFFF : data.size();
    put(zip, localSize, 4);
    put(zip, localSize, 4);
    put(zip, name.size(), 2);
    put(zip, options.zip64 && !options.descriptor ? 20 : 0, 2);
    zip += name;
    if (options.zip64 && !options.descriptor) {
      put(zip, 1, 2);
      put(zip, 16, 2);
      put(zip, data.size(), 8);
      put(zip, data.size(), 8);
    }
    zip += data;
    if (options.descriptor) {
      put(zip, 0x08074b50, 4);
      put(zip, crc, 4);
      put(zip, data.size(), 4);
      put(zip, data.size(), 4);
    }
    // Central directory entry.
    put(directory, 0x02014b50, 4);
    put(directory, 20, 2);
    put(directory, options.zip64 ? 45 : 20, 2);
    put(directory, flags, 2);
    put(directory, 0, 2);
    put(directory, 0, 2);
    put(directory, 0x21, 2);
    put(directory, crc, 4);
    put(directory, options.zip64 ? 0xFFFFFFFF : data.size(), 4);
    put(directory, options.zip64 ? 0xFFFFFFFF : data.size(), 4);
    put(directory, name.size(), 2);
    put(directory, options.zip64 ? 28 : 0, 2);
    put(directory, 0, 2);  // comment
    put(directory, 0, 2);  // disk
    put(directory, 0, 2);  // internal attributes
    put(directory, 0, 4);  // external attributes
    put(directory, options.zip64 ? 0xFFFFFFFF : offset, 4);
    directory += name;
    if (options.zip64) {
      put(directory, 1, 2);
      put(directory, 24, 2);
      put(directory, data.size(), 8);
      put(directory, data.size(), 8);
      put(directory, offset, 8);
    }
  }
  uint64_t directoryOffset = zip.size();
  zip += directory;
  if (options.zip64) {
    uint64_t record = zip.size();
    put(zip, 0x06064b50, 4);
    put(zip, 44, 8);
    put(zip, 45, 2);
    put(zip, 45, 2);
    put(zip, 0, 4);
    put(zip, 0, 4);
    put(zip, members.size(), 8);
    put(zip, members.size(), 8);
    put(zip, directory.size(), 8);
    put(zip, directoryOffset, 8);
    put(zip, 0x07064b50, 4);
    put(zip, 0, 4);
    put(zip, record, 8);
    put(zip, 1, 4);
  }
  put(zip, 0x06054b50, 4);
  put(zip, 0, 2);
  put(zip, 0, 2);
  put(zip, options.zip64 ? 0xFFFF : members.size(), 2);
  put(zip, options.zip64 ? 0xFFFF : members.size(), 2);
  put(zip, options.zip64 ? 0xFFFFFFFF : directory.size(), 4);
  put(zip, options.zip64 ? 0xFFFFFFFF : directoryOffset, 4);
  put(zip, 0, 2);
  return zip;
}

std::string scratchFile(const std::string &name, const std::string &bytes) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "serde-test-tmp" / "zip";
  fs::create_directories(dir);
  std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

/// Opening (and reading every member of) `bytes` fails with `text` in the
/// message, the archive's path as file and a byte offset as location.
void expectRefused(const std::string &name, const std::string &bytes, const std::string &text) {
  std::string path = scratchFile(name, bytes);
  try {
    ZipArchive zip(path);
    for (const auto &m : zip.members()) zip.read(m.name);
    FAIL("expected an error for " << name);
  } catch (const Error &e) {
    INFO(e.render());
    CHECK(e.message().find(text) != std::string::npos);
    CHECK(e.file() == path);
    CHECK(e.location().rfind("byte ", 0) == 0);
  }
}

const std::vector<std::pair<std::string, std::string>> kMembers = {
    {"m/archive_format", "pt2"}, {"m/data/weights/weight_0", std::string(100, 'w')}, {"m/empty", ""}};

size_t find(const std::string &bytes, const char *signature, size_t from = 0) {
  size_t at = bytes.find(std::string(signature, 4), from);
  REQUIRE(at != std::string::npos);
  return at;
}

} // namespace

TEST_CASE("zip reader: members, data offsets and CRC of hand-built archives", "[serde][zip]") {
  for (Options options : {Options{}, Options{true, false}, Options{false, true}, Options{true, true}}) {
    INFO("zip64 " << options.zip64 << " descriptor " << options.descriptor);
    std::string bytes = buildZip(kMembers, options);
    std::string path = scratchFile("good.zip", bytes);
    ZipArchive zip(path);
    REQUIRE(zip.members().size() == 3);
    CHECK(zip.fileSize() == bytes.size());
    for (const auto &[name, data] : kMembers) {
      INFO(name);
      const ZipMember *m = zip.find(name);
      REQUIRE(m);
      CHECK(m->stored);
      CHECK(m->size == data.size());
      CHECK(zip.read(name) == data);
      CHECK(bytes.substr(size_t(zip.dataOffset(name)), data.size()) == data);
    }
    // The same archive nested at byte 7 of a file: offsets are the file's.
    std::string nested = scratchFile("nested.bin", "0123456" + bytes + "tail");
    ZipArchive inner(nested, 7, bytes.size(), "outer:inner");
    CHECK(inner.dataOffset("m/data/weights/weight_0") == zip.dataOffset("m/data/weights/weight_0") + 7);
    CHECK(inner.read("m/data/weights/weight_0") == std::string(100, 'w'));
  }
}

TEST_CASE("zip reader: a deflated member inflates, CRC-checked", "[serde][zip]") {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "serde-test-tmp" / "zip";
  fs::create_directories(dir);
  std::string path = (dir / "deflated.zip").string();
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i % 97) + "\n";
  int err = 0;
  zip_t *za = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  REQUIRE(za);
  zip_source_t *src = zip_source_buffer(za, text.data(), text.size(), 0);
  REQUIRE(zip_file_add(za, "a.txt", src, ZIP_FL_OVERWRITE) == 0);
  REQUIRE(zip_set_file_compression(za, 0, ZIP_CM_DEFLATE, 9) == 0);
  REQUIRE(zip_close(za) == 0);
  {
    ZipArchive zip(path);
    REQUIRE(zip.find("a.txt"));
    CHECK(!zip.find("a.txt")->stored);
    CHECK(zip.find("a.txt")->compressedSize < text.size() / 4);
    CHECK(zip.read("a.txt") == text);
    simdjson::padded_string padded = zip.readPadded("a.txt");
    CHECK(std::string_view(padded.data(), padded.size()) == text);
    CHECK_THROWS_WITH(zip.dataOffset("a.txt"), Catch::Contains("is compressed"));
  }
  // A byte of the deflated stream changed: invalid data or a CRC mismatch, never silence.
  std::string bytes = readFileOrStdin(path);
  ZipArchive zip(path);
  size_t data = size_t(zip.find("a.txt")->dataOffset);
  bytes[data + zip.find("a.txt")->compressedSize / 2] ^= 0x10;
  std::string damaged = scratchFile("deflated-damaged.zip", bytes);
  ZipArchive broken(damaged);
  try {
    broken.read("a.txt");
    FAIL("expected an error");
  } catch (const Error &e) {
    INFO(e.render());
    CHECK((e.message().find("Compressed data invalid") != std::string::npos ||
           e.message().find("CRC error") != std::string::npos ||
           e.message().find("has the wrong size") != std::string::npos));
  }
}

TEST_CASE("zip reader: damaged directories are refused with a byte offset", "[serde][zip]") {
  const std::string good = buildZip(kMembers);
  size_t eocd = good.size() - 22;
  size_t directory = find(good, "PK\1\2");

  SECTION("no end of central directory record") {
    expectRefused("truncated.zip", good.substr(0, eocd + 10), "Not a zip archive");
    expectRefused("tiny.zip", "PK\3\4", "Not a zip archive");
  }
  SECTION("truncated directory: more members than the directory holds") {
    std::string bytes = good;
    patch(bytes, eocd + 8, 4, 2);
    patch(bytes, eocd + 10, 4, 2);
    expectRefused("count.zip", bytes, "Zip archive inconsistent");
  }
  SECTION("truncated directory: the directory's size is short") {
    std::string bytes = good;
    patch(bytes, eocd + 12, eocd - directory - 10, 4);
    expectRefused("short.zip", bytes, "does not end where its end record starts");
  }
  SECTION("bad central directory signature") {
    std::string bytes = good;
    bytes[directory + 2] = 'X';
    expectRefused("central-signature.zip", bytes, "bad central directory entry signature");
  }
  SECTION("bad local header signature") {
    std::string bytes = good;
    bytes[find(good, "PK\3\4", 1) + 3] = 'X';
    expectRefused("local-signature.zip", bytes, "no local header signature");
  }
  SECTION("a local header beyond the file") {
    std::string bytes = good;
    patch(bytes, find(good, "PK\1\2", directory + 1) + 42, 0x7FFFFFF0, 4);
    expectRefused("local-offset.zip", bytes, "lies outside the archive");
  }
  SECTION("the directory offset beyond the file") {
    std::string bytes = good;
    patch(bytes, eocd + 16, 0xFFFFFFF0, 4);
    expectRefused("directory-offset.zip", bytes, "Zip archive inconsistent");
  }
  SECTION("a local header that disagrees with its directory entry") {
    std::string bytes = good;
    patch(bytes, find(good, "PK\3\4", 1) + 22, 99, 4); // uncompressed size
    expectRefused("sizes.zip", bytes, "other sizes");
  }
  SECTION("stored data longer than the archive before its directory") {
    std::string bytes = good;
    for (size_t at : {find(good, "PK\3\4", 1) + 18, find(good, "PK\3\4", 1) + 22})
      patch(bytes, at, 100000, 4);
    size_t entry = find(good, "PK\1\2", directory + 1);
    for (size_t at : {entry + 20, entry + 24}) patch(bytes, at, 100000, 4);
    expectRefused("data-length.zip", bytes, "run into the central directory");
  }
  SECTION("a member whose data fails its CRC") {
    std::string bytes = good;
    bytes[find(good, "wwww")] = 'x';
    expectRefused("crc.zip", bytes, "CRC error");
  }
  SECTION("two members of one name") {
    std::string bytes = buildZip({{"a", "1"}, {"a", "2"}});
    expectRefused("duplicate.zip", bytes, "appears twice");
  }
}

TEST_CASE("zip reader: damaged ZIP64 records are refused with a byte offset", "[serde][zip]") {
  const std::string good = buildZip(kMembers, {true, false});
  size_t locator = good.size() - 22 - 20, record = find(good, "PK\6\6");
  SECTION("locator missing") {
    std::string bytes = good;
    bytes[locator + 2] = 'X';
    expectRefused("zip64-locator.zip", bytes, "ZIP64 end of central directory locator missing");
  }
  SECTION("bad record signature") {
    std::string bytes = good;
    bytes[record + 2] = 'X';
    expectRefused("zip64-record.zip", bytes, "bad ZIP64 end of central directory record signature");
  }
  SECTION("record offset beyond the file") {
    std::string bytes = good;
    patch(bytes, locator + 8, uint64_t(1) << 40, 8);
    expectRefused("zip64-record-offset.zip", bytes, "lies outside the archive");
  }
  SECTION("directory offset beyond the file") {
    std::string bytes = good;
    patch(bytes, record + 48, uint64_t(1) << 40, 8);
    expectRefused("zip64-directory-offset.zip", bytes, "Zip archive inconsistent");
  }
  SECTION("a directory entry without its ZIP64 extra field") {
    std::string bytes = good;
    size_t entry = find(good, "PK\1\2");
    patch(bytes, entry + 46 + 16, 0x9999, 2); // the extra field's id: no longer ZIP64
    expectRefused("zip64-extra.zip", bytes, "lacks the ZIP64 extra field");
  }
}

TEST_CASE("zip reader: a large archive's local headers report the first damage in file order", "[serde][zip]") {
  // 8192+ members are checked in two runs side by side (the first two thirds
  // of the file, and the rest then the name index): the error is still the
  // first one in file order, and an index error only comes when no header is
  // damaged.
  std::vector<std::pair<std::string, std::string>> members;
  for (int i = 0; i < 9000; ++i) members.emplace_back("m/w" + std::to_string(i), std::string(size_t(i % 7), 'x'));
  const std::string good = buildZip(members);
  // The local header of member i: the i-th "PK\3\4" (no data holds one).
  auto header = [&](int i) {
    size_t at = 0;
    for (int k = 0; k <= i; ++k) at = find(good, "PK\3\4", k ? at + 4 : 0);
    return at;
  };
  size_t early = header(10), late = header(8000);
  auto damageName = [](std::string &bytes, size_t at) { bytes[at + 30] = 'M'; }; // 'm/...' -> 'M/...'
  auto outcome = [&](const std::string &name, const std::string &bytes) {
    std::string path = scratchFile(name, bytes);
    try {
      ZipArchive zip(path);
      CHECK(zip.members().size() == members.size());
      CHECK(zip.read("m/w8999") == std::string(8999 % 7, 'x'));
      return std::string("read");
    } catch (const Error &e) {
      CHECK(e.file() == path);
      return e.location() + ": " + e.message();
    }
  };
  CHECK(outcome("large-good.zip", good) == "read");
  std::string lateOnly = good, both = good;
  damageName(lateOnly, late);
  damageName(both, late);
  damageName(both, early);
  std::string lateError = "byte " + std::to_string(late) +
                          ": not a valid zip archive: Zip archive inconsistent (member 'm/w8000': its local header "
                          "has another name)";
  CHECK(outcome("large-late.zip", lateOnly) == lateError);
  CHECK(outcome("large-both.zip", both) == "byte " + std::to_string(early) +
                                               ": not a valid zip archive: Zip archive inconsistent (member 'm/w10': "
                                               "its local header has another name)");
  // A name twice: found by the index once every header is good, and after a
  // damaged header otherwise.
  auto twice = members;
  twice[8500].first = "m/w20";
  std::string duplicate = buildZip(twice);
  CHECK(outcome("large-duplicate.zip", duplicate).find("member 'm/w20' appears twice") != std::string::npos);
  std::string duplicateAndLate = buildZip(twice);
  damageName(duplicateAndLate, late);
  CHECK(outcome("large-duplicate-late.zip", duplicateAndLate) == lateError);
}
