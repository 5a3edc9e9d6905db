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
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

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

TEST_CASE("writeFileAtomically never writes through a planted symlink", "[fileio]") {
  std::string dir = scratchDir("symlink");
  std::string victim = dir + "/victim.txt";
  writeFileAtomically(victim, std::string("precious"));
  std::string path = dir + "/out.pte";
  // The old temporary name was OUT.tmp.<pid>: plant links for every pid-like
  // name we would have used; none of them may be followed.
  fs::create_symlink(victim, path + ".tmp." + std::to_string(::getpid()));
  writeFileAtomically(path, std::string("output"));
  CHECK(readFileOrStdin(victim) == "precious");
  CHECK(readFileOrStdin(path) == "output");
  CHECK(entriesIn(dir) == 3); // victim, the planted link, the output
}

TEST_CASE("writeFileAtomically gives the output the umask-derived mode", "[fileio]") {
  std::string dir = scratchDir("mode");
  std::string path = dir + "/out.bin";
  mode_t old = ::umask(027);
  writeFileAtomically(path, std::string("x"));
  writeFileAtomically(dir + "/other.bin", std::string("y"));
  ::umask(002);
  writeFileAtomically(dir + "/other.bin", std::string("z"));
  ::umask(old);
  // Not the temporary's private 0600: what a new file gets under the umask.
  CHECK((static_cast<mode_t>(fs::status(path).permissions()) & 0777) == 0640);
  CHECK((static_cast<mode_t>(fs::status(dir + "/other.bin").permissions()) & 0777) == 0664);
}

TEST_CASE("writeFileAtomically refuses a directory as the output", "[fileio]") {
  std::string dir = scratchDir("dirout");
  fs::create_directory(dir + "/sub");
  try {
    writeFileAtomically(dir + "/sub", std::string("x"));
    FAIL("no error thrown");
  } catch (const Error &e) {
    CHECK(e.message() == "cannot write output file: it is a directory");
  }
  CHECK(entriesIn(dir) == 1);
  CHECK(entriesIn(dir + "/sub") == 0);
}

TEST_CASE("writeFileAtomically writes an existing device in place", "[fileio]") {
  // -o /dev/null must not replace the device by a regular file (as root, rename
  // would). Tried on a null device of our own, so a failure cannot break /dev/null.
  std::string dir = scratchDir("device");
  std::string null = dir + "/null";
  if (::mknod(null.c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0) {
    writeFileAtomically(null, std::string("discarded"));
    CHECK(fs::is_character_file(null));
    CHECK(entriesIn(dir) == 1);
  }
  // A full device is an error, not a silent success.
  if (fs::is_character_file("/dev/full"))
    CHECK_THROWS_WITH(writeFileAtomically("/dev/full", std::string(1 << 21, 'x')),
                      Catch::Contains("No space left on device"));
}

TEST_CASE("an OutputTransaction commits every output or none", "[fileio]") {
  std::string dir = scratchDir("transaction");
  std::string a = dir + "/a.json", b = dir + "/b.svg";
  writeFileAtomically(a, std::string("old a"));
  {
    OutputTransaction outputs;
    writeFileAtomically(a, std::string("new a"));
    writeFileAtomically(b, std::string("new b"));
    // Staged, not yet in place.
    CHECK(readFileOrStdin(a) == "old a");
    CHECK_FALSE(fs::exists(b));
    // Destroyed without commit (a later step failed): the temporaries go away.
  }
  CHECK(readFileOrStdin(a) == "old a");
  CHECK(entriesIn(dir) == 1);
  {
    OutputTransaction outputs;
    writeFileAtomically(a, std::string("new a"));
    writeFileAtomically(b, std::string("new b"));
    outputs.commit();
  }
  CHECK(readFileOrStdin(a) == "new a");
  CHECK(readFileOrStdin(b) == "new b");
  CHECK(entriesIn(dir) == 2);
}

TEST_CASE("readers refuse FIFOs, devices and directories by name", "[fileio]") {
  std::string dir = scratchDir("fifo");
  std::string fifo = dir + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO without a writer would block forever.
  CHECK_THROWS_WITH(readFileOrStdin(fifo), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(readFileRange("/dev/zero", 0, 16), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(fileSize(dir), Catch::Contains("is a directory"));
  CHECK_THROWS_WITH(readFileOrStdin(dir + "/absent"), "cannot open file: No such file or directory");
}
