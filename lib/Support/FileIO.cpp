//===- Support/FileIO.cpp - Reading inputs and writing outputs atomically -===//
#include "Support/FileIO.h"
#include "Support/Error.h"
#include "Support/Hash.h"
#include "Support/Signals.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace exir {

namespace {

std::string errnoText(int error) { return std::strerror(error); }

/// Writes all of [data, data + size) to `fd`; throws what `fail` makes of errno.
template <typename Fail> void writeAll(int fd, const char *data, size_t size, Fail fail) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, std::min<size_t>(size, size_t(1) << 30));
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(errno);
    }
    data += n;
    size -= size_t(n);
  }
}

/// An output stream buffer over a file descriptor that throws exir::Error on a
/// failed write (a full disk) instead of silently setting badbit, and seeks
/// with lseek (sparse outputs skip zero runs with seekp).
class FdOutputBuffer : public std::streambuf {
public:
  FdOutputBuffer(int fd, std::string target)
      : fd_(fd), target_(std::move(target)), buffer_(size_t(1) << 20), preallocate_(allocatesOnWrite(fd)) {
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    if (preallocate_) {
      off_t at = ::lseek(fd_, 0, SEEK_CUR);
      preallocate_ = at >= 0;
      offset_ = uint64_t(std::max<off_t>(at, 0));
    }
  }
  void flushOrThrow() { drain(); }

protected:
  int_type overflow(int_type ch) override {
    drain();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char *data, std::streamsize count) override {
    size_t size = size_t(count);
    if (size >= buffer_.size()) {
      drain();
      put(data, size);
      return count;
    }
    while (size > 0) {
      size_t room = size_t(epptr() - pptr());
      if (room == 0) {
        drain();
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
    int whence = dir == std::ios::beg ? SEEK_SET : dir == std::ios::cur ? SEEK_CUR : SEEK_END;
    off_t at = ::lseek(fd_, off_t(offset), whence);
    if (at >= 0) offset_ = uint64_t(at);
    return at < 0 ? pos_type(off_type(-1)) : pos_type(off_type(at));
  }
  pos_type seekpos(pos_type position, std::ios::openmode which) override {
    return seekoff(off_type(position), std::ios::beg, which);
  }

private:
  void drain() {
    char *begin = pbase(), *end = pptr();
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    put(begin, size_t(end - begin));
  }
  /// A regular file on ext4 or XFS: there a delayed-allocation write reserves
  /// and tracks every 4 KiB block as it copies it, and a range allocated
  /// beforehand (fallocate) takes about half the kernel time (2 GB of weights:
  /// 0.32 -> 0.19 s). Not on tmpfs or a memfd, where fallocate would zero pages.
  static bool allocatesOnWrite(int fd) {
    struct stat st;
    struct statfs fs;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || ::fstatfs(fd, &fs) != 0) return false;
    constexpr long kExt4 = 0xEF53, kXfs = 0x58465342;
    return long(fs.f_type) == kExt4 || long(fs.f_type) == kXfs;
  }

  void put(const char *data, size_t size) {
    // Only the bytes about to be written are allocated: a run skipped with a
    // seek (a sparse output's zeros) stays a hole.
    constexpr size_t kPreallocateMin = size_t(64) << 10;
    if (preallocate_ && size >= kPreallocateMin &&
        ::fallocate(fd_, 0, off_t(offset_), off_t(size)) != 0 && errno != EINTR && errno != ENOSPC)
      preallocate_ = false; // not supported here; the write reports a full disk itself
    writeAll(fd_, data, size, [&](int error) {
      throw Error("cannot write output file: " + errnoText(error), target_);
    });
    offset_ += size;
  }

  int fd_;
  std::string target_;
  std::vector<char> buffer_;
  bool preallocate_;
  uint64_t offset_ = 0; // the descriptor's file offset
};

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
