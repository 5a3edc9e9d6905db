//===- tests/Support/FileIOTest.cpp - Atomic writes and range reads -------===//
//
// writeFileAtomically must leave nothing behind (neither the target nor its
// temporary file) when the producer throws, and must not touch an existing
// file then; readFileRange must refuse ranges past the end with a message that
// names the range and the file size.
//
//===----------------------------------------------------------------------===//
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <limits>

using namespace exir;
namespace fs = std::filesystem;

namespace {

/// A fresh, empty scratch directory under the build tree.
std::string scratchDir(const std::string &name) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "unittests-tmp" / "support" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

size_t entriesIn(const std::string &dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto &entry : fs::directory_iterator(dir)) ++n;
  return n;
}

} // namespace

TEST_CASE("writeFileAtomically writes the produced bytes", "[fileio]") {
  std::string dir = scratchDir("write");
  std::string path = dir + "/out.bin";
  writeFileAtomically(path, [](std::ostream &out) { out << "hello" << '\0' << "world"; });
  CHECK(readFileOrStdin(path) == std::string("hello\0world", 11));
  CHECK(fileSize(path) == 11);
  // The string overload replaces the file; only the target remains in the directory.
  writeFileAtomically(path, std::string("abc"));
  CHECK(readFileOrStdin(path) == "abc");
  CHECK(entriesIn(dir) == 1);
}

TEST_CASE("writeFileAtomically leaves no file when the producer throws", "[fileio]") {
  std::string dir = scratchDir("throw");
  std::string path = dir + "/out.pte";
  CHECK_THROWS_AS(writeFileAtomically(path,
                                      [](std::ostream &out) {
                                        out << "partial output";
                                        throw Error("producer failed");
                                      }),
                  Error);
  CHECK_FALSE(fs::exists(path));
  CHECK(entriesIn(dir) == 0); // the temporary file is gone too
}

TEST_CASE("writeFileAtomically keeps an existing file when the producer throws", "[fileio]") {
  std::string dir = scratchDir("keep");
  std::string path = dir + "/out.json";
  writeFileAtomically(path, std::string("old contents"));
  try {
    writeFileAtomically(path, [](std::ostream &out) {
      out << "new";
      throw Error("boom", "in.json", "/nodes/3");
    });
    FAIL("no error thrown");
  } catch (const Error &e) {
    // The producer's error passes through unchanged.
    CHECK(e.render() == "'in.json': /nodes/3: boom");
  }
  CHECK(readFileOrStdin(path) == "old contents");
  CHECK(entriesIn(dir) == 1);
}

TEST_CASE("writeFileAtomically reports a missing directory", "[fileio]") {
  std::string dir = scratchDir("missing");
  std::string path = dir + "/no/such/dir/out.bin";
  try {
    writeFileAtomically(path, std::string("x"));
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.file() == path);
    CHECK_THAT(e.message(), Catch::StartsWith("cannot create output file: "));
  }
}

TEST_CASE("readFileRange reads a slice and refuses ranges past the end", "[fileio]") {
  std::string dir = scratchDir("range");
  std::string path = dir + "/weights.bin";
  writeFileAtomically(path, std::string("0123456789"));
  CHECK(readFileRange(path, 0, 10) == "0123456789");
  CHECK(readFileRange(path, 3, 4) == "3456");
  CHECK(readFileRange(path, 10, 0) == "");

  try {
    readFileRange(path, 8, 4);
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.message() == "data reference [8, +4) points past the end of the file (10 bytes)");
    CHECK(e.file() == path);
  }
  CHECK_THROWS_WITH(readFileRange(path, 11, 0),
                    "data reference [11, +0) points past the end of the file (10 bytes)");
  // offset + length would overflow uint64: still refused, not wrapped around.
  CHECK_THROWS_AS(readFileRange(path, 5, std::numeric_limits<uint64_t>::max()), Error);
}

TEST_CASE("reading a missing file names it", "[fileio]") {
  std::string path = scratchDir("absent") + "/nothing.bin";
  try {
    readFileOrStdin(path);
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.file() == path);
    CHECK_THAT(e.message(), Catch::StartsWith("cannot open file: "));
  }
  CHECK_THROWS_AS(readFileRange(path, 0, 1), Error);
  CHECK_THROWS_AS(fileSize(path), Error);
}

TEST_CASE("parentDirectory", "[fileio]") {
  CHECK(parentDirectory("a/b/model.json") == "a/b");
  CHECK(parentDirectory("/abs/model.json") == "/abs");
  CHECK(parentDirectory("model.json") == ".");
}
