//===- Serde/ZipArchive.h - Read-only zip archives with data offsets -*- C++ -*-===//
//
// torch.export archives (.pt2, legacy export zips, ETRecord) are zips whose
// weight members are STORED. We never copy weights: a constant is a DataRef to
// the byte range of a member's data inside the archive file. The reader is our
// own (PKWARE APPNOTE: end of central directory, ZIP64 included, the central
// directory, each member's local header checked against its directory entry),
// so opening an archive of 100k weight members is one pass over its directory
// and a few hundred reads, and every member's data offset comes with it.
// Members are read STORED or deflated, CRC-checked. An archive can also be a
// byte range of a file, which is how zips nested inside a stored member
// (torch.save pickles inside a legacy export zip) are opened without
// extracting them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Serde/JsonDom.h"

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace exir {

struct ZipMember {
  std::string name;
  uint64_t size = 0;           // uncompressed bytes
  uint64_t compressedSize = 0;
  bool stored = false;         // compression method 0 (data usable in place)
  uint32_t crc = 0;
  uint16_t method = 0;         // compression method (0 stored, 8 deflated)
  uint16_t flags = 0;          // general purpose bit flags
  uint64_t dataOffset = 0;     // absolute offset of the (compressed) data in the file
};

class ZipArchive {
public:
  /// Opens `path`, or the `length` bytes at `start` of it (a nested zip).
  /// `displayName` names the archive in errors (defaults to `path`).
  /// Throws exir::Error if it is not a readable zip.
  explicit ZipArchive(const std::string &path, uint64_t start = 0,
                      std::optional<uint64_t> length = std::nullopt, std::string displayName = {});
  ~ZipArchive();
  ZipArchive(const ZipArchive &) = delete;
  ZipArchive &operator=(const ZipArchive &) = delete;

  const std::vector<ZipMember> &members() const { return members_; }
  const ZipMember *find(const std::string &name) const;
  /// The whole (decompressed, CRC-checked) content of a member.
  std::string read(const std::string &name) const;
  /// read() into a buffer simdjson parses in place (no second copy of a large JSON member).
  simdjson::padded_string readPadded(const std::string &name) const;
  /// The same text, a STORED member mapped from the file where it can be (no
  /// copy, no freshly zeroed pages: a 100k-node model JSON is 120 MB), CRC-checked.
  json::PaddedText readText(const std::string &name) const;
  /// readText()'s mapping of a STORED member before its CRC check, so that the
  /// check can run beside parsing the text (checkStoredCrc); empty where
  /// readText() would read a copy. Throws what readText() throws before it maps.
  json::PaddedText mapUnchecked(const std::string &name) const;
  /// readText()'s CRC check of a STORED member (the same error), on bytes it
  /// maps itself; nothing for a compressed member (its reader checks it).
  void checkStoredCrc(const std::string &name) const;
  /// Absolute offset, in the underlying file, of a STORED member's data.
  uint64_t dataOffset(const std::string &name) const;
  /// The same for a member of this archive found already.
  uint64_t dataOffset(const ZipMember &member) const;

  const std::string &path() const { return path_; }
  const std::string &displayName() const { return displayName_; }
  uint64_t start() const { return start_; }
  /// Size of the whole underlying file when the archive was opened (one stat
  /// per archive rather than one per member that references it).
  uint64_t fileSize() const { return fileSize_; }

private:
  void readDirectory();
  /// Exactly `n` bytes at `offset` of the archive into `out`; `what` names them in errors.
  void readAt(uint64_t offset, char *out, uint64_t n, const char *what) const;
  /// The member, checked to be readable into memory whole.
  const ZipMember &memberToRead(const std::string &name) const;
  /// A STORED member's bytes into `out` (member.size bytes), CRC-checked.
  void readStored(const ZipMember &member, char *out) const;
  /// A deflated member's bytes, passed to `append(const char *, size_t)` as they inflate.
  template <typename Append> void readDeflated(const ZipMember &member, Append append) const;
  [[noreturn]] void fail(const std::string &message, uint64_t offset) const;

  std::string path_, displayName_;
  uint64_t start_ = 0, length_ = 0, fileSize_ = 0;
  int fd_ = -1;
  std::vector<ZipMember> members_;
  /// Open-addressing index of members_ by name: (hash tag << 32) | (position + 1),
  /// 0 when free. Flat, so 100k lookups do not each chase a node of a std::unordered_map.
  std::vector<uint64_t> index_;
};

/// True if the file starts with a zip local-header signature ("PK\3\4").
bool looksLikeZip(const std::string &path);

} // namespace exir
