//===- Serde/ZipArchive.cpp - Read-only zip archives (libzip side) --------===//
#include "Serde/ZipArchive.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <zip.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace exir {

namespace {

// Deflate cannot expand data more than 1032:1; a member declaring more is a
// lie (or a bomb) and would make read() allocate and inflate that much.
constexpr uint64_t kDeflateMaxRatio = 1032;
// Members read whole into memory (JSON, pickles, configs) are far smaller;
// weights are referenced in place and never read through read().
constexpr uint64_t kMaxReadMemberBytes = uint64_t(4) << 30;

std::string quoted(const zip_stat_t &st) { return std::string("'") + (st.name ? st.name : "") + "'"; }

/// The sizes a member declares must be possible for the archive it is in.
void checkDeclaredSizes(const zip_stat_t &st, uint64_t archiveLength, const std::string &displayName) {
  if (!(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE)) return;
  if (st.comp_size > archiveLength)
    throw Error("zip member " + quoted(st) + " declares " + std::to_string(st.comp_size) +
                    " compressed bytes, more than the archive's " + std::to_string(archiveLength),
                displayName);
  if (st.comp_method == ZIP_CM_STORE && st.size != st.comp_size)
    throw Error("zip member " + quoted(st) + " is stored but declares " + std::to_string(st.size) +
                    " bytes and stores " + std::to_string(st.comp_size),
                displayName);
  if (st.comp_method == ZIP_CM_DEFLATE && st.size / kDeflateMaxRatio > st.comp_size)
    throw Error("zip member " + quoted(st) + " declares " + std::to_string(st.size) + " bytes from " +
                    std::to_string(st.comp_size) + " deflated bytes, more than deflate can expand to",
                displayName);
}

} // namespace

struct ZipArchive::Handle {
  zip_t *zip = nullptr;
  ~Handle() {
    if (zip) zip_discard(zip);
  }
};

ZipArchive::ZipArchive(const std::string &path, uint64_t start, std::optional<uint64_t> length,
                       std::string displayName)
    : path_(path), displayName_(displayName.empty() ? path : std::move(displayName)), start_(start),
      handle_(std::make_unique<Handle>()) {
  uint64_t total = exir::fileSize(path);
  fileSize_ = total;
  if (start > total) throw Error("zip range starts past the end of the file", displayName_);
  length_ = length ? *length : total - start;
  if (length_ > total - start) throw Error("zip range extends past the end of the file", displayName_);
  if (length_ == 0) throw Error("not a zip archive: it is empty", displayName_);

  // libzip 1.7 converts each member's DOS time with mktime(), and glibc's
  // mktime re-stats /etc/localtime on every call while TZ is unset: 600k stat
  // calls for 100k weight members. TZ=":/etc/localtime" names the same zone,
  // so times are unchanged, but glibc then reads the file once.
  if (!std::getenv("TZ")) ::setenv("TZ", ":/etc/localtime", 0);

  zip_error_t error;
  zip_error_init(&error);
  zip_source_t *source = zip_source_file_create(path.c_str(), start, static_cast<zip_int64_t>(length_), &error);
  if (!source) {
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error("cannot open zip archive: " + message, displayName_);
  }
  handle_->zip = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!handle_->zip) {
    zip_source_free(source);
    std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw Error("not a valid zip archive: " + message, displayName_);
  }
  zip_error_fini(&error);

  zip_int64_t count = zip_get_num_entries(handle_->zip, 0);
  members_.reserve(static_cast<size_t>(count));
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(handle_->zip, static_cast<zip_uint64_t>(i), 0, &st) != 0)
      throw Error("corrupt zip entry " + std::to_string(i) + ": " + zip_strerror(handle_->zip), displayName_);
    ZipMember m;
    m.name = st.name ? st.name : "";
    checkDeclaredSizes(st, length_, displayName_);
    m.size = st.size;
    m.compressedSize = st.comp_size;
    m.stored = st.comp_method == ZIP_CM_STORE;
    m.crc = st.crc;
    // A stored member holds its bytes as they are: a declared size other than
    // the stored one (or data longer than the archive) is a forged directory.
    if (m.stored && (m.size != m.compressedSize || m.compressedSize > length_))
      throw Error("zip member '" + m.name + "' is stored but declares " + std::to_string(m.size) + " bytes for " +
                      std::to_string(m.compressedSize) + " bytes of data",
                  displayName_);
    memberIndex_.emplace(m.name, members_.size());
    members_.push_back(std::move(m));
  }
}

ZipArchive::~ZipArchive() = default;

const ZipMember *ZipArchive::find(const std::string &name) const {
  auto it = memberIndex_.find(name);
  return it == memberIndex_.end() ? nullptr : &members_[it->second];
}

std::string ZipArchive::read(const std::string &name) const {
  std::string data;
  readMember(name, [&](uint64_t declared) {
    // A stored member's size was checked against the archive's length, so it is
    // reserved whole (a 120 MB model.json grown by doubling copied itself ~2x);
    // a compressed one's size is not trusted with the allocation (a forged 4 GB
    // in a small archive ran out of memory): it grows as it is read.
    data.reserve(static_cast<size_t>(find(name)->stored ? declared : std::min<uint64_t>(declared, uint64_t(1) << 20)));
    return [&](const char *bytes, size_t n) { data.append(bytes, n); };
  });
  return data;
}

simdjson::padded_string ZipArchive::readPadded(const std::string &name) const {
  const ZipMember *member = find(name);
  if (!member || !member->stored) { // see read(): only a stored member's size is trusted
    std::string text = read(name);
    return simdjson::padded_string(text);
  }
  simdjson::padded_string text(static_cast<size_t>(member->size));
  size_t at = 0;
  readMember(name, [&](uint64_t) {
    return [&](const char *bytes, size_t n) {
      std::memcpy(text.data() + at, bytes, n);
      at += n;
    };
  });
  return text;
}

template <typename Start> void ZipArchive::readMember(const std::string &name, Start start) const {
  const ZipMember *member = find(name);
  if (!member) throw Error("zip member '" + name + "' not found", displayName_);
  if (member->size > kMaxReadMemberBytes)
    throw Error("zip member '" + name + "' declares " + std::to_string(member->size) +
                    " bytes, more than the 4 GiB a member read into memory may have",
                displayName_);
  zip_file_t *file = zip_fopen(handle_->zip, name.c_str(), 0);
  if (!file)
    throw Error("cannot open zip member '" + name + "': " + zip_strerror(handle_->zip), displayName_);
  // Reading to the end makes libzip verify the CRC.
  auto append = start(member->size);
  uint64_t size = 0;
  char buffer[1 << 16];
  zip_int64_t got;
  while ((got = zip_fread(file, buffer, sizeof buffer)) > 0) {
    if (static_cast<uint64_t>(got) > member->size - size) break; // longer than declared
    append(buffer, static_cast<size_t>(got));
    size += static_cast<uint64_t>(got);
  }
  std::string message = got < 0 ? zip_file_strerror(file) : "";
  zip_fclose(file);
  if (got < 0) throw Error("cannot read zip member '" + name + "': " + message, displayName_);
  if (got > 0 || size != member->size)
    throw Error("zip member '" + name + "' has the wrong size", displayName_);
}

uint64_t ZipArchive::dataOffset(const std::string &name) const {
  const ZipMember *member = find(name);
  if (!member) throw Error("zip member '" + name + "' not found", displayName_);
  if (!member->stored)
    throw Error("zip member '" + name + "' is compressed; only stored members can be referenced in place",
                displayName_);
  if (!dataOffsetsRead_) {
    dataOffsets_ = detail::zipMemberDataOffsets(path_, start_, length_, displayName_);
    dataOffsetsRead_ = true;
  }
  auto it = dataOffsets_.find(name);
  if (it == dataOffsets_.end())
    throw Error("cannot locate the data of zip member '" + name + "'", displayName_);
  return it->second;
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
