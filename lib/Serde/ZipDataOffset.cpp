//===- Serde/ZipDataOffset.cpp - Data offsets of stored zip members -------===//
//
// libzip lists and reads members but has no API for where a member's data
// starts. We read that from the archive ourselves: the end-of-central-directory
// record (and its ZIP64 form, so archives past 4 GiB work), the central
// directory in one read, then each member's local header (data starts after
// its name and extra field). Local headers are read through a window, so an
// archive of 100k small weights costs a few hundred reads, not 100k.
// The archive may be a byte range of a file (a zip stored inside a zip).
//
//===----------------------------------------------------------------------===//
#include "Serde/ZipArchive.h"
#include "Support/Error.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace exir::detail {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndOfDirectory = 0x06054b50,
                   kZip64EndOfDirectory = 0x06064b50, kZip64Locator = 0x07064b50;

uint64_t le(const char *p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(p[i])) << (8 * i);
  return value;
}

/// Byte range [start, start+length) of a file, read with pread.
class Range {
public:
  Range(const std::string &path, uint64_t start, uint64_t length, std::string displayName)
      : start_(start), length_(length), name_(std::move(displayName)) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw Error(std::string("cannot open zip archive: ") + std::strerror(errno), name_);
  }
  ~Range() { ::close(fd_); }
  Range(const Range &) = delete;
  Range &operator=(const Range &) = delete;

  uint64_t length() const { return length_; }
  [[noreturn]] void fail(const std::string &message) const { throw Error(message, name_); }

  /// Exactly `n` bytes at `offset` of the range, or an error naming `what`.
  std::string read(uint64_t offset, uint64_t n, const char *what) const {
    if (offset > length_ || n > length_ - offset)
      fail(std::string("not a valid zip archive: the ") + what + " lies outside the archive");
    std::string out(size_t(n), '\0');
    size_t got = 0;
    while (got < out.size()) {
      ssize_t r = ::pread(fd_, out.data() + got, out.size() - got, off_t(start_ + offset + got));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) fail(std::string("cannot read the ") + what + " of the zip archive");
      got += size_t(r);
    }
    return out;
  }

private:
  int fd_ = -1;
  uint64_t start_, length_;
  std::string name_;
};

struct Entry {
  std::string name;
  uint64_t localHeader;
};

} // namespace

std::unordered_map<std::string, uint64_t> zipMemberDataOffsets(const std::string &path, uint64_t start,
                                                               uint64_t length, const std::string &displayName) {
  Range zip(path, start, length, displayName);
  // End of central directory: 22 bytes plus a comment of up to 64 KiB, at the end.
  uint64_t tailSize = std::min<uint64_t>(zip.length(), 22 + 0xFFFF);
  if (tailSize < 22) zip.fail("not a valid zip archive: no end of central directory record");
  std::string tail = zip.read(zip.length() - tailSize, tailSize, "end of central directory");
  size_t eocd = std::string::npos;
  for (size_t at = tail.size() - 22 + 1; at-- > 0;)
    if (le(tail.data() + at, 4) == kEndOfDirectory && at + 22 + le(tail.data() + at + 20, 2) <= tail.size()) {
      eocd = at;
      break;
    }
  if (eocd == std::string::npos) zip.fail("not a valid zip archive: no end of central directory record");
  const char *e = tail.data() + eocd;
  uint64_t eocdOffset = zip.length() - tailSize + eocd;
  uint64_t count = le(e + 10, 2), directorySize = le(e + 12, 4), directoryOffset = le(e + 16, 4);
  uint64_t directoryEnd = eocdOffset; // where the directory's records end in the file
  // ZIP64: a locator just before the record points to the ZIP64 end of central
  // directory, which holds the 64-bit count, size and offset.
  bool zip64 = directorySize == 0xFFFFFFFF || directoryOffset == 0xFFFFFFFF; // (65535 members may be real)
  std::string locator = eocdOffset >= 20 ? zip.read(eocdOffset - 20, 20, "end of central directory") : "";
  if (!locator.empty() && le(locator.data(), 4) == kZip64Locator) {
    uint64_t recordOffset = le(locator.data() + 8, 8);
    std::string record = zip.read(recordOffset, 56, "ZIP64 end of central directory");
    if (le(record.data(), 4) != kZip64EndOfDirectory)
      zip.fail("not a valid zip archive: bad ZIP64 end of central directory record");
    count = le(record.data() + 32, 8);
    directorySize = le(record.data() + 40, 8);
    directoryOffset = le(record.data() + 48, 8);
    directoryEnd = recordOffset;
  } else if (zip64) {
    zip.fail("not a valid zip archive: ZIP64 end of central directory locator missing");
  }
  // Bytes before the zip data (a self-extractor stub) shift every offset.
  if (directoryOffset > directoryEnd || directorySize > directoryEnd - directoryOffset)
    zip.fail("not a valid zip archive: the central directory lies outside the archive");
  uint64_t shift = directoryEnd - directoryOffset - directorySize;
  std::string directory = zip.read(directoryOffset + shift, directorySize, "central directory");

  std::vector<Entry> entries;
  entries.reserve(size_t(std::min<uint64_t>(count, directorySize / 46)));
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    if (directory.size() - at < 46 || le(directory.data() + at, 4) != kCentralHeader)
      zip.fail("a member's directory entry is unreadable");
    const char *h = directory.data() + at;
    uint64_t nameLength = le(h + 28, 2), extraLength = le(h + 30, 2), commentLength = le(h + 32, 2);
    if (directory.size() - at - 46 < nameLength + extraLength + commentLength)
      zip.fail("a member's directory entry is unreadable");
    uint64_t compressed = le(h + 20, 4), uncompressed = le(h + 24, 4), localHeader = le(h + 42, 4);
    // ZIP64 extended information: the 64-bit values of the fields set to 0xFFFFFFFF, in this order.
    for (const char *x = h + 46 + nameLength, *end = x + extraLength; end - x >= 4;) {
      uint64_t id = le(x, 2), size = le(x + 2, 2);
      if (uint64_t(end - x - 4) < size) break;
      if (id == 1) {
        const char *field = x + 4, *fieldsEnd = x + 4 + size;
        for (uint64_t *value : {&uncompressed, &compressed, &localHeader})
          if (*value == 0xFFFFFFFF && fieldsEnd - field >= 8) {
            *value = le(field, 8);
            field += 8;
          }
      }
      x += 4 + size;
    }
    entries.push_back({std::string(h + 46, size_t(nameLength)), localHeader + shift});
    at += 46 + nameLength + extraLength + commentLength;
  }

  // Local headers in file order, through a 64 KiB window.
  std::vector<size_t> order(entries.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return entries[a].localHeader < entries[b].localHeader; });
  std::string window;
  uint64_t windowStart = 0;
  std::unordered_map<std::string, uint64_t> offsets;
  offsets.reserve(entries.size());
  for (size_t i : order) {
    const Entry &entry = entries[i];
    uint64_t offset = entry.localHeader;
    if (offset < windowStart || offset + 30 > windowStart + window.size()) {
      if (offset > zip.length() || zip.length() - offset < 30)
        zip.fail("cannot locate the data of zip member '" + entry.name + "'");
      windowStart = offset;
      window = zip.read(offset, std::min<uint64_t>(zip.length() - offset, 64 << 10), "local header");
    }
    const char *h = window.data() + (offset - windowStart);
    if (le(h, 4) != kLocalHeader) zip.fail("cannot locate the data of zip member '" + entry.name + "'");
    offsets.emplace(entry.name, start + offset + 30 + le(h + 26, 2) + le(h + 28, 2));
  }
  return offsets;
}

} // namespace exir::detail
