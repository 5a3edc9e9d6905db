//===- Support/FileIO.cpp - Reading inputs and writing outputs atomically -===//
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Support/Hash.h"
#include "Support/Signals.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <thread>
#include <unistd.h>

namespace exir {

namespace {

std::string errnoText(int error) { return std::strerror(error); }

/// Writes all of [data, data + size) to `fd`, at `offset` (pwrite) or at its
/// file position; returns 0 or the errno of the failure.
int writeFully(int fd, const char *data, size_t size, std::optional<uint64_t> offset) {
  while (size > 0) {
    size_t piece = std::min<size_t>(size, size_t(1) << 30);
    ssize_t n = offset ? ::pwrite(fd, data, piece, off_t(*offset)) : ::write(fd, data, piece);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= size_t(n);
    if (offset) *offset += uint64_t(n);
  }
  return 0;
}

/// Writes all of [data, data + size) to `fd`; throws what `fail` makes of errno.
template <typename Fail> void writeAll(int fd, const char *data, size_t size, Fail fail) {
  if (int error = writeFully(fd, data, size, std::nullopt)) fail(error);
}

} // namespace

/// An output stream buffer over a file descriptor that throws exir::Error on a
/// failed write (a full disk) instead of silently setting badbit, and seeks
/// (sparse outputs skip zero runs with seekp).
///
/// Once an output passes one buffer, filled buffers are written on a second
/// thread while the tool formats the next ones. On the project's virtual
/// machines the kernel's copy into fresh page-cache pages costs ~2 ms per MB
/// (exir-plan's 213 MB at 100k nodes: 0.46 s of its 1.0 s), as much as the
/// formatting itself; the two now overlap. Regular files (and memfds) are
/// written with pwrite at offsets the producer assigns, so seeks need no
/// waiting; other descriptors (pipes, terminals) are written in order.
class FdOutputBuffer : public std::streambuf {
public:
  FdOutputBuffer(int fd, std::string target) : fd_(fd), target_(std::move(target)), active_(kBufferBytes, '\0') {
    setp(active_.data(), active_.data() + active_.size());
    struct stat st;
    if (::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
      off_t at = ::lseek(fd_, 0, SEEK_CUR);
      positional_ = at >= 0;
      offset_ = uint64_t(std::max<off_t>(at, 0));
    }
    preallocate_ = positional_ && allocatesOnWrite(fd_);
  }
  ~FdOutputBuffer() override { stopWriter(); }
  FdOutputBuffer(const FdOutputBuffer &) = delete;
  FdOutputBuffer &operator=(const FdOutputBuffer &) = delete;

  void flushOrThrow() {
    drain();
    waitIdle();
    stopWriter();
    throwIfFailed();
    // Leave the descriptor's offset where sequential writes would have.
    if (positional_) ::lseek(fd_, off_t(offset_), SEEK_SET);
  }

  /// PositionalOutput::of: hands what is buffered or queued to the file.
  /// False for a descriptor that takes no offsets (a pipe).
  bool settle(uint64_t &position) {
    if (!positional_) return false;
    drain();
    waitIdle();
    throwIfFailed();
    position = offset_;
    return true;
  }
  /// PositionalOutput::writeAt: any thread, ranges past the settled position.
  void writeAt(uint64_t offset, const char *data, size_t size) { putAt(data, size, offset); }
  /// PositionalOutput::finish.
  void endAt(uint64_t end) {
    struct stat st;
    if (::fstat(fd_, &st) != 0 || (uint64_t(st.st_size) < end && ::ftruncate(fd_, off_t(end)) != 0))
      throw Error("cannot write output file: " + errnoText(errno), target_);
    offset_ = end;
  }
  /// BufferHandoff::exchange.
  std::string exchange(std::string &&filled, size_t size) {
    drain(); // what the stream holds goes first
    if (size == 0) return std::move(filled);
    throwIfFailed();
    hand(filled, size, /*full=*/size >= kBufferBytes);
    throwIfFailed();
    return std::move(filled);
  }

protected:
  int_type overflow(int_type ch) override {
    drain(/*full=*/true);
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char *data, std::streamsize count) override {
    size_t size = size_t(count);
    if (size >= active_.size() && noThread_) {
      // Without a second thread big pieces are written from the caller's
      // memory. With one they are copied into its buffers like small ones, so
      // the writes stay in order. (Large weights do not come this way: exir-emit
      // writes them at their offsets from the threads that make them,
      // pte::writeSegmentData, because the kernel's copy of bytes another vCPU
      // had just written was several times slower here.)
      drain();
      putAt(data, size, offset_);
      offset_ += size;
      return count;
    }
    while (size > 0) {
      size_t room = size_t(epptr() - pptr());
      if (room == 0) {
        drain(/*full=*/true);
        continue;
      }
      size_t n = std::min(room, size);
      std::memcpy(pptr(), data, n);
      pbump(int(n));
      data += n;
      size -= n;
    }
    return count;
  }
  int sync() override {
    drain();
    return 0;
  }
  pos_type seekoff(off_type offset, std::ios::seekdir dir, std::ios::openmode) override {
    drain();
    if (!positional_) {
      waitIdle();
      off_t at = ::lseek(fd_, off_t(offset), dir == std::ios::beg ? SEEK_SET : dir == std::ios::cur ? SEEK_CUR : SEEK_END);
      return at < 0 ? pos_type(off_type(-1)) : pos_type(off_type(at));
    }
    int64_t base = dir == std::ios::beg ? 0 : int64_t(offset_);
    if (dir == std::ios::end) {
      waitIdle();
      struct stat st;
      if (::fstat(fd_, &st) != 0) return pos_type(off_type(-1));
      base = int64_t(st.st_size);
    }
    if (base + int64_t(offset) < 0) return pos_type(off_type(-1));
    offset_ = uint64_t(base + int64_t(offset));
    return pos_type(off_type(offset_));
  }
  pos_type seekpos(pos_type position, std::ios::openmode which) override {
    return seekoff(off_type(position), std::ios::beg, which);
  }

private:
  static constexpr size_t kBufferBytes = size_t(1) << 20;
  static constexpr size_t kQueuedMax = 4; // buffers waiting for the writer

  struct Chunk {
    std::string bytes;
    size_t size;
    uint64_t offset;
  };

  /// Hands what is buffered to the writer (or writes it here, for outputs
  /// that have not yet filled a buffer: a small file needs no thread).
  void drain(bool full = false) {
    size_t size = size_t(pptr() - pbase());
    if (size == 0) return;
    throwIfFailed();
    hand(active_, size, full);
    if (active_.size() < kBufferBytes) active_.resize(kBufferBytes);
    setp(active_.data(), active_.data() + active_.size());
    throwIfFailed();
  }

  /// Sends bytes[0, size) to offset_ and moves offset_ past them: queued for
  /// the writer thread (started once a `full` buffer comes), which then owns
  /// `bytes`, and `bytes` becomes a spare buffer (empty if there is none yet);
  /// without the thread written here, and `bytes` stays. After a failed
  /// write nothing is queued and `bytes` stays (throwIfFailed reports it).
  void hand(std::string &bytes, size_t size, bool full) {
    if (!writer_.joinable() && full && !noThread_) startWriter();
    if (writer_.joinable()) {
      std::unique_lock<std::mutex> lock(mutex_);
      spaceFree_.wait(lock, [&] { return queue_.size() < kQueuedMax || error_; });
      if (!error_) {
        std::string next;
        if (!spare_.empty()) {
          next = std::move(spare_.back());
          spare_.pop_back();
        }
        queue_.push_back(Chunk{std::move(bytes), size, offset_});
        bytes = std::move(next);
        lock.unlock();
        work_.notify_one();
      }
    } else {
      putAt(bytes.data(), size, offset_);
    }
    offset_ += size;
  }

  void startWriter() {
    try {
      writer_ = std::thread([this] { writeQueued(); });
    } catch (const std::system_error &) {
      noThread_ = true; // write on this thread
    }
  }
  void writeQueued() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      work_.wait(lock, [&] { return !queue_.empty() || stop_; });
      if (queue_.empty()) return;
      Chunk chunk = std::move(queue_.front());
      queue_.pop_front();
      writing_ = true;
      lock.unlock();
      int error = 0;
      if (!error_) error = writeRange(chunk.bytes.data(), chunk.size, chunk.offset);
      lock.lock();
      writing_ = false;
      if (error && !error_) error_ = error;
      spare_.push_back(std::move(chunk.bytes));
      spaceFree_.notify_all();
    }
  }
  void waitIdle() {
    if (!writer_.joinable()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    spaceFree_.wait(lock, [&] { return (queue_.empty() && !writing_) || error_; });
  }
  void stopWriter() {
    if (!writer_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      queue_.clear(); // after flushOrThrow it is empty; after a failure the file is discarded
    }
    work_.notify_one();
    writer_.join();
  }
  void throwIfFailed() {
    int error;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      error = error_;
    }
    if (error) throw Error("cannot write output file: " + errnoText(error), target_);
  }

  /// A regular file on ext4 or XFS: there a delayed-allocation write reserves
  /// and tracks every 4 KiB block as it copies it, and a range allocated
  /// beforehand (fallocate) takes about half the kernel time (2 GB of weights:
  /// 0.32 -> 0.19 s). Not on tmpfs or a memfd, where fallocate would zero pages.
  static bool allocatesOnWrite(int fd) {
    struct statfs fs;
    if (::fstatfs(fd, &fs) != 0) return false;
    constexpr long kExt4 = 0xEF53, kXfs = 0x58465342;
    return long(fs.f_type) == kExt4 || long(fs.f_type) == kXfs;
  }

  /// Writes [data, data + size) at `offset` (positional descriptors) or at the
  /// descriptor's position; returns 0 or the errno of the failure.
  int writeRange(const char *data, size_t size, uint64_t offset) {
    // Only the bytes about to be written are allocated: a run skipped with a
    // seek (a sparse output's zeros) stays a hole.
    constexpr size_t kPreallocateMin = size_t(64) << 10;
    if (preallocate_.load(std::memory_order_relaxed) && size >= kPreallocateMin &&
        ::fallocate(fd_, 0, off_t(offset), off_t(size)) != 0 && errno != EINTR && errno != ENOSPC)
      preallocate_.store(false, std::memory_order_relaxed); // not supported here; the write reports a full disk itself
    return writeFully(fd_, data, size, positional_ ? std::optional<uint64_t>(offset) : std::nullopt);
  }
  void putAt(const char *data, size_t size, uint64_t offset) {
    if (int error = writeRange(data, size, offset)) throw Error("cannot write output file: " + errnoText(error), target_);
  }

  int fd_;
  std::string target_;
  std::string active_;
  bool positional_ = false;
  std::atomic<bool> preallocate_{false};
  uint64_t offset_ = 0; // where the next byte goes

  std::thread writer_;
  bool noThread_ = false;
  std::mutex mutex_;
  std::condition_variable work_, spaceFree_;
  std::deque<Chunk> queue_;
  std::vector<std::string> spare_;
  bool writing_ = false, stop_ = false;
  int error_ = 0;
};

std::optional<BufferHandoff> BufferHandoff::of(std::ostream &out) {
  auto *buffer = dynamic_cast<FdOutputBuffer *>(out.rdbuf());
  if (!buffer || !out) return std::nullopt;
  return BufferHandoff(buffer);
}

std::string BufferHandoff::exchange(std::string &&filled, size_t size) const {
  return buffer_->exchange(std::move(filled), size);
}

std::optional<PositionalOutput> PositionalOutput::of(std::ostream &out) {
  auto *buffer = dynamic_cast<FdOutputBuffer *>(out.rdbuf());
  uint64_t position = 0;
  if (!buffer || !out || !buffer->settle(position)) return std::nullopt;
  return PositionalOutput(buffer, position);
}

void PositionalOutput::writeAt(uint64_t offset, const char *data, size_t size) const {
  buffer_->writeAt(offset, data, size);
}

void PositionalOutput::finish(uint64_t end) const { buffer_->endAt(end); }

namespace {

/// Runs `produce` on a stream writing to `fd` and flushes it; errors throw.
void produceInto(int fd, const std::string &target, const std::function<void(std::ostream &)> &produce) {
  FdOutputBuffer buffer(fd, target);
  std::ostream out(&buffer);
  // A failed write throws from the buffer; badbit makes the stream pass that on.
  out.exceptions(std::ios::badbit);
  produce(out);
  buffer.flushOrThrow();
}

void writeStdout(const std::string &bytes) {
  flushStdout(); // what the tool printed before comes first
  writeAll(STDOUT_FILENO, bytes.data(), bytes.size(), [](int error) {
    throw Error("cannot write to standard output: " + errnoText(error));
  });
}

/// An anonymous in-memory file for output bound to stdout, or -1 where the
/// kernel has none (then the output is built in a string).
int createStdoutStaging() { return ::memfd_create("exir-stdout", MFD_CLOEXEC); }

/// Copies the whole of `fd` (an anonymous file) to stdout, in the kernel where
/// it can (sendfile), so a 300 MB program never passes through user space.
void copyFileToStdout(int fd) {
  flushStdout(); // what the tool printed before comes first
  auto fail = [](int error) { throw Error("cannot write to standard output: " + errnoText(error)); };
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size < 0) fail(errno);
  off_t offset = 0;
  while (offset < size) {
    ssize_t n = ::sendfile(STDOUT_FILENO, fd, &offset, size_t(std::min<off_t>(size - offset, off_t(1) << 30)));
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EINVAL && errno != ENOSYS) fail(errno);
    break; // stdout takes no sendfile (e.g. opened with O_APPEND): copy by hand
  }
  std::vector<char> buffer(size_t(1) << 20);
  while (offset < size) {
    ssize_t n = ::pread(fd, buffer.data(), std::min<size_t>(buffer.size(), size_t(size - offset)), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error("cannot write to standard output: staged output lost");
    writeAll(STDOUT_FILENO, buffer.data(), size_t(n), fail);
    offset += n;
  }
}

/// The umask, read from /proc (umask() can only be read by setting it, which
/// would race with threads creating files); the umask() dance without /proc.
mode_t processUmask() {
  if (FILE *status = std::fopen("/proc/self/status", "r")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status))
      found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return mode_t(mask);
  }
  mode_t m = ::umask(0);
  ::umask(m);
  return m;
}

std::string randomSuffix() {
  static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
  unsigned char bytes[8];
  if (::getrandom(bytes, sizeof bytes, 0) != ssize_t(sizeof bytes)) {
    static uint64_t counter = 0;
    uint64_t seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                    (uint64_t(::getpid()) << 32) ^ ++counter * 0x9e3779b97f4a7c15ull;
    std::memcpy(bytes, &seed, sizeof bytes);
  }
  std::string out;
  for (unsigned char b : bytes) out += alphabet[b % (sizeof alphabet - 1)];
  return out;
}

/// An output being written. Where the file system allows, it has no name until
/// it is put in place (O_TMPFILE): a run killed by SIGKILL leaves nothing.
/// Otherwise it is `target.tmp.XXXXXXXX`, removed on failure and on signals.
struct TemporaryFile {
  std::string path; // empty while unnamed
  int fd = -1;
  int slot = -1; // Signals.h, while it has a name
};

bool procFdUsable() {
  static const bool usable = ::access("/proc/self/fd", X_OK) == 0;
  return usable;
}

/// Creates `target.tmp.XXXXXXXX` exclusively: never an existing file, never
/// through a symlink, readable by us alone until it is complete.
TemporaryFile createNamedTemporary(const std::string &target) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = target + ".tmp." + randomSuffix();
    int fd = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) return {name, fd, registerTemporaryFile(name)};
    if (errno != EEXIST) throw Error("cannot create output file: " + errnoText(errno), target);
  }
  throw Error("cannot create output file: no free temporary name beside it", target);
}

TemporaryFile createTemporaryBeside(const std::string &target) {
  if (procFdUsable()) {
    // Linking an unnamed file in later needs /proc/self/fd (AT_EMPTY_PATH needs a capability).
    int fd = ::open(parentDirectory(target).c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0) return {"", fd, -1};
    // Not supported by the kernel or the file system: fall back to a named temporary.
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
      throw Error("cannot create output file: " + errnoText(errno), target);
  }
  return createNamedTemporary(target);
}

void discard(TemporaryFile &tmp) {
  if (tmp.fd >= 0) ::close(tmp.fd);
  tmp.fd = -1;
  if (!tmp.path.empty()) ::unlink(tmp.path.c_str());
  unregisterTemporaryFile(tmp.slot);
  tmp.slot = -1;
}

/// Renames the temporary over `target` (naming an unnamed one first, beside it).
void putInPlace(TemporaryFile &tmp, const std::string &target) {
  if (tmp.path.empty()) {
    std::string self = "/proc/self/fd/" + std::to_string(tmp.fd);
    for (int attempt = 0;; ++attempt) {
      std::string name = target + ".tmp." + randomSuffix();
      tmp.slot = registerTemporaryFile(name);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
        tmp.path = name;
        break;
      }
      int error = errno;
      unregisterTemporaryFile(tmp.slot);
      tmp.slot = -1;
      if (error != EEXIST || attempt == 100) throw Error("cannot write output file: " + errnoText(error), target);
    }
  }
  if (::rename(tmp.path.c_str(), target.c_str()) != 0)
    throw Error("cannot write output file: " + errnoText(errno), target);
  unregisterTemporaryFile(tmp.slot);
  tmp.slot = -1;
  tmp.path.clear(); // it is the target now
  ::close(tmp.fd);
  tmp.fd = -1;
}

OutputTransaction *activeTransaction = nullptr;

} // namespace

size_t readAt(int fd, char *out, size_t length, uint64_t offset) {
  size_t got = 0;
  while (got < length) {
    ssize_t n = ::pread(fd, out + got, length - got, off_t(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
  }
  return got;
}

struct OutputStaging {
  static void stage(OutputTransaction &t, const TemporaryFile &tmp, const std::string &target) {
    t.staged_.push_back({tmp.path, target, tmp.fd, tmp.slot});
  }
  static TemporaryFile temporaryOf(const OutputTransaction::Staged &s) { return {s.temporary, s.fd, s.slot}; }
  static void stageStdout(OutputTransaction &t, int fd, std::string bytes = {}) {
    t.stdout_.push_back({fd, std::move(bytes)});
  }
};

void requireRegularFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error("cannot open file: " + errnoText(errno), path);
  if (S_ISDIR(st.st_mode)) throw Error("cannot read file: it is a directory", path);
  if (!S_ISREG(st.st_mode))
    throw Error("cannot read file: it is not a regular file (a FIFO, socket or device); "
                "use '-' to read standard input",
                path);
}

std::string readFileOrStdin(const std::string &path) {
  if (path == "-") {
    // Big reads straight into the result through std::cin's buffer (stdio's
    // fread for the real stdin): a piped program JSON is hundreds of MB.
    std::string data;
    struct stat st;
    size_t expected = ::fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode) ? size_t(st.st_size) : 0;
    data.resize(std::max<size_t>(expected + 1, size_t(1) << 20));
    size_t size = 0;
    for (;;) {
      if (size == data.size()) data.resize(data.size() * 2);
      std::streamsize n = std::cin.rdbuf()->sgetn(data.data() + size, std::streamsize(data.size() - size));
      if (n <= 0) break;
      size += size_t(n);
    }
    if (std::ferror(stdin)) throw Error("cannot read standard input: " + errnoText(errno), path);
    data.resize(size);
    return data;
  }
  requireRegularFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file: " + errnoText(errno), path);
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw Error("cannot read file", path);
  std::string data(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(data.data(), size);
  if (!in) throw Error("cannot read file", path);
  return data;
}

void writeFileAtomically(const std::string &path,
                         const std::function<void(std::ostream &)> &produce) {
  if (path == "-") {
    // Produce fully before writing, so errors print no partial output. The
    // output goes to an anonymous file, not a string: a program JSON is
    // hundreds of MB, and a growing string would copy it several times.
    int fd = createStdoutStaging();
    if (fd < 0) {
      std::ostringstream buffer;
      produce(buffer);
      if (activeTransaction) OutputStaging::stageStdout(*activeTransaction, -1, buffer.str());
      else writeStdout(buffer.str());
      return;
    }
    try {
      produceInto(fd, "<stdout>", produce);
      if (activeTransaction) {
        OutputStaging::stageStdout(*activeTransaction, fd);
        return;
      }
      copyFileToStdout(fd);
    } catch (...) {
      ::close(fd);
      throw;
    }
    ::close(fd);
    return;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) throw Error("cannot write output file: it is a directory", path);
    if (!S_ISREG(st.st_mode)) {
      // A device or FIFO (/dev/null, a named pipe): nothing to rename over it.
      int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0) throw Error("cannot open output file: " + errnoText(errno), path);
      try {
        produceInto(fd, path, produce);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      return;
    }
  }
  TemporaryFile tmp = createTemporaryBeside(path);
  try {
    produceInto(tmp.fd, path, produce);
    // The temporary was private (0600); the output gets the mode a new file would.
    if (::fchmod(tmp.fd, 0666 & ~processUmask()) != 0)
      throw Error("cannot write output file: " + errnoText(errno), path);
    if (activeTransaction) {
      OutputStaging::stage(*activeTransaction, tmp, path); // it keeps the descriptor
      return;
    }
    putInPlace(tmp, path);
  } catch (...) {
    discard(tmp);
    throw;
  }
}

void writeFileAtomically(const std::string &path, const std::string &bytes) {
  writeFileAtomically(path, [&](std::ostream &out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

OutputTransaction::OutputTransaction() {
  if (activeTransaction) throw std::logic_error("OutputTransaction: one is already active");
  activeTransaction = this;
}

OutputTransaction::~OutputTransaction() {
  if (activeTransaction == this) activeTransaction = nullptr;
  for (const Staged &s : staged_) {
    TemporaryFile tmp = OutputStaging::temporaryOf(s);
    discard(tmp);
  }
  for (const StagedStdout &s : stdout_)
    if (s.fd >= 0) ::close(s.fd);
}

void OutputTransaction::commit() {
  if (activeTransaction == this) activeTransaction = nullptr;
  while (!staged_.empty()) {
    TemporaryFile tmp = OutputStaging::temporaryOf(staged_.front());
    try {
      putInPlace(tmp, staged_.front().target);
    } catch (...) {
      discard(tmp); // the destructor removes the rest
      staged_.erase(staged_.begin());
      throw;
    }
    staged_.erase(staged_.begin());
  }
  std::vector<StagedStdout> outputs = std::move(stdout_);
  stdout_.clear();
  for (size_t i = 0; i < outputs.size(); ++i) {
    try {
      if (outputs[i].fd >= 0) copyFileToStdout(outputs[i].fd);
      else writeStdout(outputs[i].bytes);
    } catch (...) {
      for (size_t k = i; k < outputs.size(); ++k)
        if (outputs[k].fd >= 0) ::close(outputs[k].fd);
      throw;
    }
    if (outputs[i].fd >= 0) ::close(outputs[i].fd);
  }
}

void flushStdout() {
  errno = 0;
  std::cout.flush();
  bool failed = !std::cout;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) failed = true;
  if (!failed) return;
  int error = errno;
  std::cout.clear();
  std::clearerr(stdout);
  throw Error(std::string("cannot write to standard output") + (error ? ": " + errnoText(error) : ""));
}

std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length) {
  requireRegularFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open data file: " + errnoText(errno), path);
  in.seekg(0, std::ios::end);
  uint64_t size = static_cast<uint64_t>(in.tellg());
  if (offset > size || length > size - offset)
    throw Error("data reference [" + std::to_string(offset) + ", +" + std::to_string(length) +
                    ") points past the end of the file (" + std::to_string(size) + " bytes)",
                path);
  std::string data(length, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(data.data(), static_cast<std::streamsize>(length));
  if (!in) throw Error("cannot read data file", path);
  return data;
}

std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length,
                          std::optional<uint32_t> expectedCrc) {
  std::string data = readFileRange(path, offset, length);
  if (expectedCrc) {
    uint32_t crc = crc32Update(0, data);
    if (crc != *expectedCrc) {
      char text[64];
      std::snprintf(text, sizeof text, "CRC-32 %08x, expected %08x", unsigned(crc), unsigned(*expectedCrc));
      throw Error("bytes " + std::to_string(offset) + ".." + std::to_string(offset + length) +
                      " do not match their CRC-32 (" + text +
                      "): the file is corrupt or was replaced after it was referenced",
                  path);
    }
  }
  return data;
}

uint64_t fileSize(const std::string &path) {
  requireRegularFile(path);
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot open file: " + ec.message(), path);
  return size;
}

std::string parentDirectory(const std::string &path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

} // namespace exir
