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

#include <algorithm>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <thread>
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

namespace {

/// The offset of the first byte where `a` and `b` differ, or -1: big outputs
/// are compared by position (Catch would print both 40 MB strings).
int64_t firstDifference(const std::string &a, const std::string &b) {
  auto mismatch = std::mismatch(a.begin(), a.end(), b.begin(), b.end());
  return mismatch.first == a.end() && mismatch.second == b.end() ? -1 : int64_t(mismatch.first - a.begin());
}

/// Writes 400 pseudo-random pieces to `out` and returns the bytes a sequential
/// writer would leave: small pieces, pieces bigger than a buffer (1 MiB; written
/// directly, beside the queued ones), bytes put one at a time, and (where
/// `holes`) seeks that skip runs of zeros; with `handoff`, also whole buffers
/// given to BufferHandoff (a recycled one may hold an earlier piece's bytes).
std::string writeMixedPieces(std::ostream &out, bool holes, bool handoff = false) {
  std::string expected;
  std::optional<BufferHandoff> exchange;
  if (handoff) exchange = BufferHandoff::of(out);
  REQUIRE(exchange.has_value() == handoff);
  std::string buffer;
  uint64_t state = 12345;
  auto next = [&] { return state = state * 6364136223846793005ull + 1442695040888963407ull, state >> 33; };
  for (int piece = 0; piece < 400; ++piece) {
    uint64_t kind = next() % 10;
    size_t size = kind == 0 ? size_t(1) << 21 | (next() % 4096) : size_t(next() % (300 << 10));
    char fill = char('a' + piece % 26);
    if (kind == 1 && holes) {
      out.seekp(std::streamoff(size), std::ios::cur);
      expected.append(size, '\0');
      continue;
    }
    std::string bytes(size, fill);
    if (!bytes.empty()) bytes[0] = char('A' + piece % 26); // each piece's start is visible
    if (kind == 2)
      for (char c : bytes) out.put(c); // one byte at a time, through overflow()
    else if (kind == 3 && exchange) {
      if (buffer.size() < bytes.size() + 7) buffer.resize(bytes.size() + 7, '?');
      std::copy(bytes.begin(), bytes.end(), buffer.begin()); // what follows in it is not part of the output
      buffer = exchange->exchange(std::move(buffer), bytes.size());
    } else
      out.write(bytes.data(), std::streamsize(bytes.size()));
    expected += bytes;
  }
  if (holes) {
    out.seekp(4096, std::ios::cur); // a hole at the end needs a last byte to count
    out.put('!');
    expected.append(4096, '\0');
    expected += '!';
  }
  return expected;
}

} // namespace

TEST_CASE("writeFileAtomically keeps the order of big outputs written from a second thread", "[fileio]") {
  // Past one buffer the output is written on a second thread, at offsets
  // assigned by the producer for a regular file: every piece and hole must land
  // where a sequential writer would put it.
  std::string dir = scratchDir("async");
  std::string path = dir + "/big.bin";
  std::string expected;
  writeFileAtomically(path, [&](std::ostream &out) { expected = writeMixedPieces(out, /*holes=*/true); });
  REQUIRE(expected.size() > (size_t(40) << 20));
  std::string written = readFileOrStdin(path);
  CHECK(written.size() == expected.size());
  CHECK(firstDifference(written, expected) == -1);
  CHECK(entriesIn(dir) == 1);
}

TEST_CASE("BufferHandoff's buffers land in order between the stream's writes", "[fileio]") {
  // Buffers handed off go on the writer thread's queue (or are written at
  // once before the thread starts) after whatever the stream still holds.
  std::string dir = scratchDir("handoff");
  std::string path = dir + "/big.bin";
  std::string expected;
  writeFileAtomically(path, [&](std::ostream &out) { expected = writeMixedPieces(out, /*holes=*/true, true); });
  REQUIRE(expected.size() > (size_t(40) << 20));
  std::string written = readFileOrStdin(path);
  CHECK(written.size() == expected.size());
  CHECK(firstDifference(written, expected) == -1);

  // A small output: no thread, each buffer written as it comes.
  std::string small = dir + "/small.txt";
  writeFileAtomically(small, [&](std::ostream &out) {
    std::optional<BufferHandoff> handoff = BufferHandoff::of(out);
    REQUIRE(handoff);
    out << "head ";
    std::string buffer = "body and junk";
    buffer = handoff->exchange(std::move(buffer), 4);
    out << " tail";
    buffer.assign("!", 1);
    buffer = handoff->exchange(std::move(buffer), 1);
    buffer = handoff->exchange(std::move(buffer), 0);
  });
  CHECK(readFileOrStdin(small) == "head body tail!");
  std::ostringstream text;
  CHECK_FALSE(BufferHandoff::of(text).has_value());
}

TEST_CASE("writeFileAtomically keeps the order of big outputs into a pipe", "[fileio]") {
  // A FIFO has no offsets: queued buffers, direct big writes and handed-off
  // buffers must reach it in the order they were produced.
  std::string dir = scratchDir("async-fifo");
  std::string fifo = dir + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string received;
  std::thread reader([&] {
    int fd = ::open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char chunk[1 << 16];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) != 0;)
      if (n > 0) received.append(chunk, size_t(n));
      else if (errno != EINTR) break;
    ::close(fd);
  });
  std::string expected;
  writeFileAtomically(fifo, [&](std::ostream &out) { expected = writeMixedPieces(out, /*holes=*/false, true); });
  reader.join();
  REQUIRE(expected.size() > (size_t(40) << 20));
  CHECK(received.size() == expected.size());
  CHECK(firstDifference(received, expected) == -1);
}

TEST_CASE("writeFileAtomically stops its writer thread when the producer throws", "[fileio]") {
  std::string dir = scratchDir("async-throw");
  std::string path = dir + "/out.bin";
  CHECK_THROWS_WITH(writeFileAtomically(path,
                                        [](std::ostream &out) {
                                          std::string piece(100 << 10, 'x');
                                          for (int i = 0; i < 100; ++i) out.write(piece.data(), std::streamsize(piece.size()));
                                          throw Error("producer failed");
                                        }),
                    "producer failed");
  CHECK(entriesIn(dir) == 0);
  // A failed write on the second thread reaches the producer (/dev/full is
  // not a regular file: written in order, then refused).
  if (fs::is_character_file("/dev/full"))
    CHECK_THROWS_WITH(writeFileAtomically("/dev/full",
                                          [](std::ostream &out) {
                                            std::string piece(100 << 10, 'x');
                                            for (int i = 0; i < 100; ++i) out.write(piece.data(), std::streamsize(piece.size()));
                                          }),
                      Catch::Contains("No space left on device"));
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
