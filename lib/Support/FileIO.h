//===- Support/FileIO.h - Reading inputs and writing outputs atomically ---===//
//
// Every tool reads a file or "-" (stdin) and writes a file or "-" (stdout).
// Outputs are written to a temporary file beside the target and renamed, so a
// failing tool never leaves a partial output file behind. The temporary has no
// name until it is complete (O_TMPFILE, linked in through /proc/self/fd), so not
// even SIGKILL leaves one; where that is not supported it is created
// exclusively (O_EXCL|O_NOFOLLOW, mode 0600, a random name), so a planted file
// or symlink is never written through. Either way it gets the usual
// umask-derived mode just before the rename. While an OutputTransaction is
// active (runTool opens one around every tool's work), outputs are only
// staged, and all of them are renamed into place when it commits: a run that
// fails after writing one output leaves none.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace exir {

/// Reads a whole file ("-" = stdin). Throws exir::Error naming the file.
std::string readFileOrStdin(const std::string &path);

/// Throws exir::Error unless `path` names an existing regular file, saying why
/// (the errno text, "is a directory", or "is not a regular file" for a FIFO,
/// socket or device, which a tool would block on or read forever).
void requireRegularFile(const std::string &path);

/// Writes through `produce` to `path` ("-" = stdout) via temp file + rename.
/// If `produce` throws, the temporary file is removed and nothing appears.
/// A `path` that exists and is a device or FIFO (/dev/null) is written in place;
/// a directory is refused. Write errors (a full disk, a full stdout) throw.
void writeFileAtomically(const std::string &path,
                         const std::function<void(std::ostream &)> &produce);

/// Convenience wrapper for an in-memory payload.
void writeFileAtomically(const std::string &path, const std::string &bytes);

/// Every output written while it is active is staged (a temporary file; for
/// stdout an anonymous in-memory file) and only put in place by commit(); destroying it without
/// commit() removes the temporaries. One is active at a time (not nested).
class OutputTransaction {
public:
  OutputTransaction();
  ~OutputTransaction();
  OutputTransaction(const OutputTransaction &) = delete;
  OutputTransaction &operator=(const OutputTransaction &) = delete;

  /// Renames every staged file into place (in the order written), then writes
  /// what was staged for stdout. Throws exir::Error if one cannot be.
  void commit();

private:
  friend struct OutputStaging;
  struct Staged {
    std::string temporary, target; // temporary: empty while it has no name
    int fd;                        // open until put in place
    int slot;                      // Signals.h
  };
  std::vector<Staged> staged_;
  struct StagedStdout {
    int fd;            // an anonymous file holding the output, or -1:
    std::string bytes; // the output itself (no anonymous files here)
  };
  std::vector<StagedStdout> stdout_; // in the order written
};

class FdOutputBuffer;

/// Writes at absolute offsets into an output stream that writeFileAtomically
/// made over a file that takes them (a regular file, or the in-memory file
/// staging stdout), from several threads at once: exir-emit writes large
/// weights side by side instead of through the stream's one buffer.
class PositionalOutput {
public:
  /// Hands everything `out` buffered to the file and returns a writer for the
  /// bytes past position(); nullopt for a stream that is not such an output
  /// (a pipe, a string stream). Nothing may be written through `out` until
  /// finish().
  static std::optional<PositionalOutput> of(std::ostream &out);
  /// Where the stream's next byte would have gone.
  uint64_t position() const { return position_; }
  /// Writes `size` bytes at `offset`; safe to call from several threads for
  /// ranges that do not overlap. Throws exir::Error (a full disk).
  void writeAt(uint64_t offset, const char *data, size_t size) const;
  /// Makes the file at least `end` bytes long (unwritten ranges read as
  /// zeros: a trailing hole) and moves the stream on to `end`.
  void finish(uint64_t end) const;

private:
  PositionalOutput(FdOutputBuffer *buffer, uint64_t position) : buffer_(buffer), position_(position) {}
  FdOutputBuffer *buffer_;
  uint64_t position_;
};

/// Hands whole buffers to an output stream that writeFileAtomically made,
/// without copying them: the stream's writer thread writes the buffer itself
/// and gives it back later as the buffer for a following exchange. The
/// JSON writers fill 1 MiB buffers; copying each into the stream's own buffer
/// was 3% of exir-plan's instructions at 100k nodes (213 MB of output).
class BufferHandoff {
public:
  /// nullopt for a stream that is not such an output (a string stream).
  static std::optional<BufferHandoff> of(std::ostream &out);
  /// Queues filled[0, size) after everything written to the stream so far
  /// and returns a buffer to fill next: empty, or of any size with any
  /// contents. Throws exir::Error (a full disk).
  std::string exchange(std::string &&filled, size_t size) const;

private:
  explicit BufferHandoff(FdOutputBuffer *buffer) : buffer_(buffer) {}
  FdOutputBuffer *buffer_;
};

/// Flushes std::cout and throws exir::Error if anything written to it was lost
/// (a full disk, /dev/full, a closed pipe without SIGPIPE).
void flushStdout();

/// Reads `length` bytes at `offset` of an open file into `out` (pread, retried
/// when interrupted or short); returns how many it got: fewer at the end of the
/// file or on an error.
size_t readAt(int fd, char *out, size_t length, uint64_t offset);

/// Reads `length` bytes at `offset` of a file; throws if the file is shorter.
std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length);

/// readFileRange, and when `expectedCrc` is given (a DataRef's crc32, a zip
/// member's CRC) the bytes must have that CRC-32: a corrupt archive member or
/// a file replaced since it was referenced throws exir::Error.
std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length,
                          std::optional<uint32_t> expectedCrc);

/// Size of a file in bytes; throws if it cannot be opened.
uint64_t fileSize(const std::string &path);

/// Directory part of a path ("." when there is none).
std::string parentDirectory(const std::string &path);

} // namespace exir
