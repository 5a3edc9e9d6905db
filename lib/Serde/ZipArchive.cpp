//===- Serde/ZipArchive.cpp - Read-only zip archives ----------------------===//
//
// The zip format as PKWARE's APPNOTE describes it, read-only: the end of
// central directory record (and the ZIP64 locator and record, so archives past
// 4 GiB work), the central directory in one read, then every member's local
// header in file order through a window, checked against its directory entry
// as libzip's ZIP_CHECKCONS did (libzip re-read each local header with its own
// seeks and converted every member's DOS time with mktime: most of the time to
// open 100k weight members). Errors name the archive and the byte offset.
//
//===----------------------------------------------------------------------===//
#include "Serde/ZipArchive.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"
#include "Support/Parallel.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace exir {

namespace {

constexpr uint32_t kLocalHeader = 0x04034b50, kCentralHeader = 0x02014b50, kEndOfDirectory = 0x06054b50,
                   kZip64EndOfDirectory = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr uint64_t kLocalHeaderSize = 30, kCentralHeaderSize = 46, kEndOfDirectorySize = 22;
constexpr uint16_t kStored = 0, kDeflated = 8;
constexpr uint16_t kFlagEncrypted = 1, kFlagDataDescriptor = 8;
constexpr uint64_t kMax32 = 0xFFFFFFFF;

// Deflate cannot expand data more than 1032:1; a member declaring more is a
// lie (or a bomb) and would make read() allocate and inflate that much.
constexpr uint64_t kDeflateMaxRatio = 1032;
// Members read whole into memory (JSON, pickles, configs) are far smaller;
// weights are referenced in place and never read through read().
constexpr uint64_t kMaxReadMemberBytes = uint64_t(4) << 30;
// Members from which the local headers are read on two threads (mlp-100k's
// 100k headers took half the time to open the archive).
constexpr size_t kTwoThreadMembers = 8192;

uint64_t le(const char *p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(p[i])) << (8 * i);
  return value;
}

std::string quotedName(const std::string &name) { return "'" + name + "'"; }

/// Replaces the fields of `values` that hold 0xFFFFFFFF, in order, with the
/// 64-bit values of the ZIP64 extended information field (id 1) in `extra`.
/// A central directory entry has only the fields it needs there; a local
/// header (`local`) has both sizes once it has the field at all.
/// False if a field needs a value the extra field does not have.
bool applyZip64Extra(const char *extra, uint64_t extraLength, std::initializer_list<uint64_t *> values,
                     bool local = false) {
  const char *field = nullptr, *fieldsEnd = nullptr;
  for (const char *x = extra, *end = extra + extraLength; end - x >= 4;) {
    uint64_t id = le(x, 2), size = le(x + 2, 2);
    if (uint64_t(end - x - 4) < size) break;
    if (id == 1) {
      field = x + 4;
      fieldsEnd = x + 4 + size;
      break;
    }
    x += 4 + size;
  }
  bool needed = false;
  for (uint64_t *value : values) needed |= *value == kMax32;
  if (!needed) return true;
  for (uint64_t *value : values) {
    if (*value != kMax32) {
      if (local && field && fieldsEnd - field >= 8) field += 8;
      continue;
    }
    if (!field || fieldsEnd - field < 8) return false;
    *value = le(field, 8);
    field += 8;
  }
  return true;
}

/// The sizes a member declares must be possible for the archive it is in.
void checkDeclaredSizes(const ZipMember &m, uint64_t archiveLength, const std::string &displayName) {
  if (m.compressedSize > archiveLength)
    throw Error("zip member " + quotedName(m.name) + " declares " + std::to_string(m.compressedSize) +
                    " compressed bytes, more than the archive's " + std::to_string(archiveLength),
                displayName);
  if (m.method == kStored && m.size != m.compressedSize)
    throw Error("zip member " + quotedName(m.name) + " is stored but declares " + std::to_string(m.size) +
                    " bytes and stores " + std::to_string(m.compressedSize),
                displayName);
  if (m.method == kDeflated && m.size / kDeflateMaxRatio > m.compressedSize)
    throw Error("zip member " + quotedName(m.name) + " declares " + std::to_string(m.size) + " bytes from " +
                    std::to_string(m.compressedSize) + " deflated bytes, more than deflate can expand to",
                displayName);
}

/// What the central directory says of a member's local header, to compare.
struct LocalExpect {
  uint64_t offset;      // of the local header, in the archive
  uint16_t versionNeeded, time, date;
};

} // namespace

ZipArchive::ZipArchive(const std::string &path, uint64_t start, std::optional<uint64_t> length,
                       std::string displayName)
    : path_(path), displayName_(displayName.empty() ? path : std::move(displayName)), start_(start) {
  uint64_t total = exir::fileSize(path);
  fileSize_ = total;
  if (start > total) throw Error("zip range starts past the end of the file", displayName_);
  length_ = length ? *length : total - start;
  if (length_ > total - start) throw Error("zip range extends past the end of the file", displayName_);
  if (length_ == 0) throw Error("not a zip archive: it is empty", displayName_);
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(std::string("cannot open zip archive: ") + std::strerror(errno), displayName_);
  try {
    readDirectory();
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

ZipArchive::~ZipArchive() { ::close(fd_); }

void ZipArchive::fail(const std::string &message, uint64_t offset) const {
  throw Error(message, displayName_, "byte " + std::to_string(offset));
}

void ZipArchive::readAt(uint64_t offset, char *out, uint64_t n, const char *what) const {
  if (offset > length_ || n > length_ - offset)
    fail(std::string("not a valid zip archive: the ") + what + " lies outside the archive", offset);
  uint64_t got = 0;
  while (got < n) {
    ssize_t r = ::pread(fd_, out + got, size_t(std::min<uint64_t>(n - got, uint64_t(1) << 30)),
                        off_t(start_ + offset + got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) fail(std::string("cannot read the ") + what + " of the zip archive: " + std::strerror(errno), offset);
    if (r == 0) fail(std::string("cannot read the ") + what + " of the zip archive: the file ends before it", offset);
    got += uint64_t(r);
  }
}

void ZipArchive::readDirectory() {
  // End of central directory: 22 bytes plus a comment of up to 64 KiB, at the end.
  uint64_t tailSize = std::min<uint64_t>(length_, kEndOfDirectorySize + 0xFFFF);
  if (tailSize < kEndOfDirectorySize)
    fail("not a valid zip archive: Not a zip archive (shorter than an end of central directory record)", 0);
  std::string tail(size_t(tailSize), '\0');
  readAt(length_ - tailSize, tail.data(), tailSize, "end of central directory");
  size_t eocd = std::string::npos;
  for (size_t at = tail.size() - kEndOfDirectorySize + 1; at-- > 0;)
    if (le(tail.data() + at, 4) == kEndOfDirectory &&
        at + kEndOfDirectorySize + le(tail.data() + at + 20, 2) <= tail.size()) {
      eocd = at;
      break;
    }
  if (eocd == std::string::npos)
    fail("not a valid zip archive: Not a zip archive (no end of central directory record)", length_ - tailSize);
  const char *e = tail.data() + eocd;
  uint64_t eocdOffset = length_ - tailSize + eocd;
  uint64_t disk = le(e + 4, 2), directoryDisk = le(e + 6, 2), diskCount = le(e + 8, 2);
  uint64_t count = le(e + 10, 2), directorySize = le(e + 12, 4), directoryOffset = le(e + 16, 4);
  uint64_t directoryEnd = eocdOffset; // where the directory's records must end
  // ZIP64: a locator just before the record points to the ZIP64 end of central
  // directory, which holds the 64-bit count, size and offset.
  bool zip64 = directorySize == kMax32 || directoryOffset == kMax32; // (65535 members may be real)
  char locator[20];
  if (eocdOffset >= 20) readAt(eocdOffset - 20, locator, 20, "end of central directory");
  if (eocdOffset >= 20 && le(locator, 4) == kZip64Locator) {
    uint64_t recordOffset = le(locator + 8, 8);
    char record[56];
    if (recordOffset > eocdOffset - 20 || eocdOffset - 20 - recordOffset < 56)
      fail("not a valid zip archive: the ZIP64 end of central directory record lies outside the archive",
           eocdOffset - 20);
    readAt(recordOffset, record, 56, "ZIP64 end of central directory");
    if (le(record, 4) != kZip64EndOfDirectory)
      fail("not a valid zip archive: bad ZIP64 end of central directory record signature", recordOffset);
    disk = le(record + 16, 4);
    directoryDisk = le(record + 20, 4);
    diskCount = le(record + 24, 8);
    count = le(record + 32, 8);
    directorySize = le(record + 40, 8);
    directoryOffset = le(record + 48, 8);
    directoryEnd = recordOffset;
  } else if (zip64) {
    fail("not a valid zip archive: ZIP64 end of central directory locator missing", eocdOffset);
  }
  if (disk != 0 || directoryDisk != 0 || diskCount != count)
    fail("not a valid zip archive: Multi-disk zip archives not supported", eocdOffset);
  // The directory ends where its end record starts (libzip's consistency check
  // refused archives with bytes in between, such as self-extractor stubs).
  if (directoryOffset > directoryEnd || directorySize != directoryEnd - directoryOffset)
    fail("not a valid zip archive: Zip archive inconsistent (the central directory at byte " +
             std::to_string(directoryOffset) + ", " + std::to_string(directorySize) +
             " bytes, does not end where its end record starts)",
         eocdOffset);
  if (count > directorySize / kCentralHeaderSize || count >= 0xFFFFFFFF)
    fail("not a valid zip archive: Zip archive inconsistent (" + std::to_string(count) +
             " members cannot fit in a central directory of " + std::to_string(directorySize) + " bytes)",
         eocdOffset);
  std::string directory(size_t(directorySize), '\0');
  readAt(directoryOffset, directory.data(), directorySize, "central directory");

  members_.reserve(size_t(count));
  std::vector<LocalExpect> locals;
  locals.reserve(size_t(count));
  size_t at = 0;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t entryOffset = directoryOffset + at;
    if (directory.size() - at < kCentralHeaderSize)
      fail("not a valid zip archive: Zip archive inconsistent (the central directory ends inside member " +
               std::to_string(i) + "'s entry)",
           entryOffset);
    const char *h = directory.data() + at;
    if (le(h, 4) != kCentralHeader)
      fail("not a valid zip archive: bad central directory entry signature (member " + std::to_string(i) + ")",
           entryOffset);
    uint64_t nameLength = le(h + 28, 2), extraLength = le(h + 30, 2), commentLength = le(h + 32, 2);
    if (directory.size() - at - kCentralHeaderSize < nameLength + extraLength + commentLength)
      fail("not a valid zip archive: Zip archive inconsistent (the central directory ends inside member " +
               std::to_string(i) + "'s entry)",
           entryOffset);
    ZipMember m;
    m.name.assign(h + kCentralHeaderSize, size_t(nameLength));
    m.flags = uint16_t(le(h + 8, 2));
    m.method = uint16_t(le(h + 10, 2));
    m.stored = m.method == kStored;
    m.crc = uint32_t(le(h + 16, 4));
    m.compressedSize = le(h + 20, 4);
    m.size = le(h + 24, 4);
    uint64_t localHeader = le(h + 42, 4);
    if (!applyZip64Extra(h + kCentralHeaderSize + nameLength, extraLength, {&m.size, &m.compressedSize, &localHeader}))
      fail("not a valid zip archive: member " + quotedName(m.name) + " lacks the ZIP64 extra field its sizes need",
           entryOffset);
    locals.push_back({localHeader, uint16_t(le(h + 6, 2)), uint16_t(le(h + 12, 2)), uint16_t(le(h + 14, 2))});
    members_.push_back(std::move(m));
    at += size_t(kCentralHeaderSize + nameLength + extraLength + commentLength);
  }
  if (at != directory.size())
    fail("not a valid zip archive: Zip archive inconsistent (the central directory has " +
             std::to_string(directory.size() - at) + " bytes after its last entry)",
         directoryOffset + at);

  // Local headers in file order, through a window that covers as many of the
  // next headers as fit in 64 KiB (weights between them are not read).
  std::vector<size_t> order(members_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return locals[a].offset < locals[b].offset; });
  constexpr uint64_t kWindow = 64 << 10, kSlack = 1024; // slack: the local extra field, unknown in advance
  // Members order[first, last): each run has its own window.
  auto checkLocalHeaders = [&](size_t first, size_t last) {
    std::string window;
    uint64_t windowStart = 0, windowEnd = 0;
    for (size_t k = first; k < last; ++k) {
      ZipMember &m = members_[order[k]];
      const LocalExpect &expect = locals[order[k]];
      uint64_t offset = expect.offset;
      auto inconsistent = [&](const std::string &what) {
        fail("not a valid zip archive: Zip archive inconsistent (member " + quotedName(m.name) + ": " + what + ")",
             offset);
      };
      if (offset > length_ || length_ - offset < kLocalHeaderSize + m.name.size())
        inconsistent("its local header lies outside the archive");
      if (offset < windowStart || offset + kLocalHeaderSize + m.name.size() > windowEnd) {
        uint64_t end = std::min(length_, offset + kLocalHeaderSize + m.name.size() + kSlack);
        for (size_t next = k + 1; next < order.size(); ++next) {
          uint64_t nextEnd = locals[order[next]].offset + kLocalHeaderSize + members_[order[next]].name.size() + kSlack;
          if (nextEnd > length_ || nextEnd - offset > kWindow) break;
          end = std::max(end, nextEnd);
        }
        window.resize(size_t(end - offset));
        readAt(offset, window.data(), end - offset, "local header");
        windowStart = offset;
        windowEnd = end;
      }
      const char *h = window.data() + (offset - windowStart);
      if (le(h, 4) != kLocalHeader) inconsistent("no local header signature where its directory entry points");
      uint64_t nameLength = le(h + 26, 2), extraLength = le(h + 28, 2);
      uint64_t dataStart = offset + kLocalHeaderSize + nameLength + extraLength;
      if (dataStart > length_) inconsistent("its local header lies outside the archive");
      if (dataStart > windowEnd) { // a long local extra field: read the whole header
        window.resize(size_t(dataStart - offset));
        readAt(offset, window.data(), dataStart - offset, "local header");
        windowStart = offset;
        windowEnd = dataStart;
        h = window.data();
      }
      // As libzip's consistency check: the fields both headers hold must agree
      // (flags may differ); sizes and CRC may be zero in a local header whose
      // member has a data descriptor.
      if (uint16_t(le(h + 4, 2)) > expect.versionNeeded) inconsistent("its local header needs a later version");
      if (le(h + 8, 2) != m.method) inconsistent("its local header has another compression method");
      if (le(h + 10, 2) != expect.time || le(h + 12, 2) != expect.date)
        inconsistent("its local header has another modification time");
      if (nameLength != m.name.size() || std::memcmp(h + kLocalHeaderSize, m.name.data(), m.name.size()) != 0)
        inconsistent("its local header has another name");
      uint64_t crc = le(h + 14, 4), compressed = le(h + 18, 4), uncompressed = le(h + 22, 4);
      if (!applyZip64Extra(h + kLocalHeaderSize + nameLength, extraLength, {&uncompressed, &compressed}, true))
        inconsistent("its local header lacks the ZIP64 extra field its sizes need");
      if (crc != m.crc || compressed != m.compressedSize || uncompressed != m.size) {
        bool descriptor = (le(h + 6, 2) & kFlagDataDescriptor) && crc == 0 && compressed == 0 && uncompressed == 0;
        if (!descriptor) inconsistent("its local header has other sizes or another CRC");
      }
      // Members' data comes before the central directory.
      if (m.compressedSize > directoryOffset || dataStart > directoryOffset - m.compressedSize)
        fail("not a valid zip archive: Not a zip archive (member " + quotedName(m.name) + "'s " +
                 std::to_string(m.compressedSize) + " bytes at byte " + std::to_string(dataStart) +
                 " run into the central directory)",
             offset);
      m.dataOffset = start_ + dataStart;
    }
  };

  auto buildIndex = [&] {
    size_t slots = 16;
    while (slots < 2 * members_.size())
      slots *= 2;
    index_.assign(slots, 0);
    for (size_t i = 0; i < members_.size(); ++i) {
      checkDeclaredSizes(members_[i], length_, displayName_);
      size_t hash = std::hash<std::string_view>{}(members_[i].name);
      uint64_t tag = uint64_t(hash >> 32 ^ hash) << 32;
      for (size_t at = hash & (slots - 1);; at = (at + 1) & (slots - 1)) {
        uint64_t slot = index_[at];
        if (slot == 0) {
          index_[at] = tag | (i + 1);
          break;
        }
        if ((slot & ~uint64_t(0xFFFFFFFF)) == tag && members_[uint32_t(slot) - 1].name == members_[i].name)
          fail("not a valid zip archive: member " + quotedName(members_[i].name) + " appears twice", locals[i].offset);
      }
    }
  };

  // A large archive's local headers are read in two runs side by side, the
  // index built after the second (so that run is the shorter one: the index
  // costs about half as much as the headers): the first run's error is still
  // the one reported first, then the second's, then the index's, as in one pass.
  if (order.size() >= kTwoThreadMembers) {
    size_t split = order.size() / 3 * 2;
    runBeside([&] { checkLocalHeaders(0, split); },
              [&] {
                checkLocalHeaders(split, order.size());
                buildIndex();
              });
  } else {
    checkLocalHeaders(0, order.size());
    buildIndex();
  }
}

const ZipMember *ZipArchive::find(const std::string &name) const {
  size_t hash = std::hash<std::string_view>{}(name);
  uint64_t tag = uint64_t(hash >> 32 ^ hash) << 32;
  size_t mask = index_.size() - 1;
  for (size_t at = hash & mask;; at = (at + 1) & mask) {
    uint64_t slot = index_[at];
    if (slot == 0) return nullptr;
    const ZipMember &m = members_[uint32_t(slot) - 1];
    if ((slot & ~uint64_t(0xFFFFFFFF)) == tag && m.name == name) return &m;
  }
}

const ZipMember &ZipArchive::memberToRead(const std::string &name) const {
  const ZipMember *member = find(name);
  if (!member) throw Error("zip member '" + name + "' not found", displayName_);
  if (member->size > kMaxReadMemberBytes)
    throw Error("zip member '" + name + "' declares " + std::to_string(member->size) +
                    " bytes, more than the 4 GiB a member read into memory may have",
                displayName_);
  if (member->flags & kFlagEncrypted)
    throw Error("cannot open zip member '" + name + "': it is encrypted", displayName_);
  if (member->method != kStored && member->method != kDeflated)
    throw Error("cannot open zip member '" + name + "': Compression method not supported (method " +
                    std::to_string(member->method) + "; stored and deflated are)",
                displayName_);
  return *member;
}

void ZipArchive::readStored(const ZipMember &member, char *out) const {
  // In 1 MiB pieces so each is CRC-checked while still in cache.
  constexpr uint64_t kPiece = 1 << 20;
  uint32_t crc = 0;
  uint64_t offset = member.dataOffset - start_;
  for (uint64_t done = 0; done < member.size;) {
    uint64_t n = std::min(kPiece, member.size - done);
    readAt(offset + done, out + done, n, "data of a member");
    crc = crc32Update(crc, std::string_view(out + done, size_t(n)));
    done += n;
  }
  if (crc != member.crc) fail("cannot read zip member '" + member.name + "': CRC error", offset);
}

template <typename Append> void ZipArchive::readDeflated(const ZipMember &member, Append append) const {
  struct Inflater {
    z_stream z{};
    Inflater() {
      if (inflateInit2(&z, -MAX_WBITS) != Z_OK) throw std::bad_alloc();
    }
    ~Inflater() { inflateEnd(&z); }
  } inflater;
  z_stream &z = inflater.z;
  uint64_t offset = member.dataOffset - start_, consumed = 0, produced = 0;
  auto corrupt = [&] {
    fail("cannot read zip member '" + member.name + "': Compressed data invalid", offset);
  };
  std::vector<char> in(64 << 10), out(64 << 10);
  uint32_t crc = 0;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    if (z.avail_in == 0) {
      if (consumed == member.compressedSize) corrupt(); // the stream does not end
      uint64_t n = std::min<uint64_t>(in.size(), member.compressedSize - consumed);
      readAt(offset + consumed, in.data(), n, "data of a member");
      consumed += n;
      z.next_in = reinterpret_cast<Bytef *>(in.data());
      z.avail_in = uInt(n);
    }
    z.next_out = reinterpret_cast<Bytef *>(out.data());
    z.avail_out = uInt(out.size());
    status = inflate(&z, Z_NO_FLUSH);
    if (status != Z_OK && status != Z_STREAM_END) corrupt();
    size_t got = out.size() - z.avail_out;
    if (got > member.size - produced) // longer than declared
      fail("zip member '" + member.name + "' has the wrong size", offset);
    crc = crc32Update(crc, std::string_view(out.data(), got));
    append(out.data(), got);
    produced += got;
  }
  if (produced != member.size) fail("zip member '" + member.name + "' has the wrong size", offset);
  if (crc != member.crc) fail("cannot read zip member '" + member.name + "': CRC error", offset);
}

std::string ZipArchive::read(const std::string &name) const {
  const ZipMember &member = memberToRead(name);
  std::string data;
  if (member.stored) {
    // A stored member's size was checked against the archive's length.
    data.resize(size_t(member.size));
    readStored(member, data.data());
    return data;
  }
  // A compressed member's declared size is not trusted with the allocation (a
  // forged 4 GB in a small archive ran out of memory): it grows as it inflates.
  data.reserve(size_t(std::min<uint64_t>(member.size, uint64_t(1) << 20)));
  readDeflated(member, [&](const char *bytes, size_t n) { data.append(bytes, n); });
  return data;
}

simdjson::padded_string ZipArchive::readPadded(const std::string &name) const {
  const ZipMember &member = memberToRead(name);
  if (!member.stored) { // see read(): only a stored member's size is trusted
    std::string text = read(name);
    return simdjson::padded_string(text);
  }
  simdjson::padded_string text(static_cast<size_t>(member.size));
  readStored(member, text.data());
  return text;
}

json::PaddedText ZipArchive::readText(const std::string &name) const {
  json::PaddedText mapped = mapUnchecked(name);
  if (mapped.empty()) return readPadded(name);
  const ZipMember &member = *find(name);
  if (crc32Update(0, std::string_view(mapped.data(), mapped.size())) != member.crc)
    fail("cannot read zip member '" + member.name + "': CRC error", member.dataOffset - start_);
  return mapped;
}

json::PaddedText ZipArchive::mapUnchecked(const std::string &name) const {
  const ZipMember &member = memberToRead(name);
  if (!member.stored) return {};
  return json::PaddedText::mapRange(path_, member.dataOffset, member.size);
}

void ZipArchive::checkStoredCrc(const std::string &name) const {
  const ZipMember &member = memberToRead(name);
  if (!member.stored) return;
  // In 16 MiB mappings of their own, each unmapped once summed: the parser's
  // mapping of the same bytes may be freed first, and the pages do not stay
  // in the process twice (a 120 MB model JSON).
  constexpr uint64_t kPiece = 16 << 20;
  auto page = uint64_t(sysconf(_SC_PAGESIZE));
  uint32_t crc = 0;
  std::string buffer;
  for (uint64_t done = 0; done < member.size;) {
    uint64_t n = std::min(kPiece, member.size - done);
    uint64_t at = member.dataOffset + done, from = at / page * page;
    size_t span = size_t(at - from + n);
    // Populated in one call: cheaper than a fault per 64 KiB.
    void *base = mmap(nullptr, span, PROT_READ, MAP_SHARED | MAP_POPULATE, fd_, off_t(from));
    if (base == MAP_FAILED) {
      buffer.resize(size_t(n));
      readAt(at - start_, buffer.data(), n, "data of a member");
      crc = crc32Update(crc, buffer);
    } else {
      crc = crc32Update(crc, std::string_view(static_cast<const char *>(base) + (at - from), size_t(n)));
      munmap(base, span);
    }
    done += n;
  }
  if (crc != member.crc) fail("cannot read zip member '" + member.name + "': CRC error", member.dataOffset - start_);
}

uint64_t ZipArchive::dataOffset(const std::string &name) const {
  const ZipMember *member = find(name);
  if (!member) throw Error("zip member '" + name + "' not found", displayName_);
  return dataOffset(*member);
}

uint64_t ZipArchive::dataOffset(const ZipMember &member) const {
  if (!member.stored)
    throw Error("zip member '" + member.name + "' is compressed; only stored members can be referenced in place",
                displayName_);
  if (member.flags & kFlagEncrypted)
    throw Error("zip member '" + member.name + "' is encrypted; its data cannot be referenced in place",
                displayName_);
  return member.dataOffset;
}

bool looksLikeZip(const std::string &path) {
  if (path == "-") return false;
  requireRegularFile(path); // a FIFO would block here, /dev/zero read forever
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  // A local file header, or the end-of-directory record of an archive with no members.
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' &&
         ((magic[2] == 3 && magic[3] == 4) || (magic[2] == 5 && magic[3] == 6));
}

} // namespace exir
