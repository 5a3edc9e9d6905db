//===- Serde/ZipArchive.h - Read-only zip archives with data offsets -*- C++ -*-===//
//
// torch.export archives (.pt2, legacy export zips, ETRecord) are zips whose
// weight members are STORED. We never copy weights: a constant is a DataRef to
// the byte range of a member's data inside the archive file. libzip lists and
// reads members (CRC-checked); the one thing it lacks, the offset of a member's
// data, we read from the central directory (ZIP64 included) and the local
// headers ourselves. An archive can also be a byte range of a file,
// which is how zips nested inside a stored member (torch.save pickles inside a
// legacy export zip) are opened without extracting them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace exir {

struct ZipMember {
  std::string name;
  uint64_t size = 0;           // uncompressed bytes
  uint64_t compressedSize = 0;
  bool stored = false;         // compression method 0 (data usable in place)
  uint32_t crc = 0;
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
  /// Absolute offset, in the underlying file, of a STORED member's data.
  uint64_t dataOffset(const std::string &name) const;

  const std::string &path() const { return path_; }
  const std::string &displayName() const { return displayName_; }
  uint64_t start() const { return start_; }
  /// Size of the whole underlying file when the archive was opened (one stat
  /// per archive rather than one per member that references it).
  uint64_t fileSize() const { return fileSize_; }

private:
  /// Reads a member to its end (libzip checks the CRC); `start(declaredSize)`
  /// returns the sink `(const char *, size_t)` that receives the bytes.
  template <typename Start> void readMember(const std::string &name, Start start) const;
  struct Handle;
  std::string path_, displayName_;
  uint64_t start_ = 0, length_ = 0, fileSize_ = 0;
  std::unique_ptr<Handle> handle_;
  std::vector<ZipMember> members_;
  std::unordered_map<std::string, size_t> memberIndex_;
  /// Filled on the first dataOffset() call, in one pass over the directory.
  mutable std::unordered_map<std::string, uint64_t> dataOffsets_;
  mutable bool dataOffsetsRead_ = false;
};

/// True if the file starts with a zip local-header signature ("PK\3\4").
bool looksLikeZip(const std::string &path);

namespace detail {
/// Data offsets (in the file) of every member of the zip at [start, start+length),
/// read from its central directory (ZIP64 included) and local headers.
std::unordered_map<std::string, uint64_t> zipMemberDataOffsets(const std::string &path, uint64_t start,
                                                               uint64_t length, const std::string &displayName);
} // namespace detail

} // namespace exir
