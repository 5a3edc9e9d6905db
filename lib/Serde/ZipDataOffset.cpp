//===- Serde/ZipDataOffset.cpp - Data offsets of stored zip members -------===//
//
// The minizip side of ZipArchive, in its own file because minizip's zip.h and
// libzip's zip.h share a name. minizip reads through callbacks that expose a
// byte range of a file as the whole "zip file", so nested archives work.
//
//===----------------------------------------------------------------------===//
#include "Serde/ZipArchive.h"
#include "Support/Error.h"

#include <minizip/unzip.h>

#include <cstdio>
#include <unordered_map>

namespace exir::detail {

namespace {

struct RangeStream {
  FILE *file = nullptr;
  uint64_t start = 0, length = 0, position = 0;
  uint64_t filePosition = 0; // where `file` is; a seek empties stdio's buffer, so skip needless ones
};

struct RangeSpec {
  const char *path;
  uint64_t start, length;
};

voidpf ZCALLBACK openRange(voidpf opaque, const void *, int) {
  auto *spec = static_cast<RangeSpec *>(opaque);
  FILE *file = std::fopen(spec->path, "rb");
  if (!file) return nullptr;
  return new RangeStream{file, spec->start, spec->length, 0, 0};
}

uLong ZCALLBACK readRange(voidpf, voidpf stream, void *buffer, uLong size) {
  auto *s = static_cast<RangeStream *>(stream);
  if (s->position >= s->length) return 0;
  uint64_t available = s->length - s->position;
  if (size > available) size = static_cast<uLong>(available);
  // minizip reads headers a few bytes at a time; seeking before each read made
  // every one of them a system call.
  uint64_t target = s->start + s->position;
  if (target != s->filePosition) {
    if (fseeko(s->file, static_cast<off_t>(target), SEEK_SET) != 0) return 0;
    s->filePosition = target;
  }
  size_t got = std::fread(buffer, 1, size, s->file);
  s->position += got;
  s->filePosition += got;
  if (got < size) s->filePosition = UINT64_MAX; // unknown after a short read: seek next time
  return static_cast<uLong>(got);
}

uLong ZCALLBACK writeRange(voidpf, voidpf, const void *, uLong) { return 0; }

ZPOS64_T ZCALLBACK tellRange(voidpf, voidpf stream) { return static_cast<RangeStream *>(stream)->position; }

long ZCALLBACK seekRange(voidpf, voidpf stream, ZPOS64_T offset, int origin) {
  auto *s = static_cast<RangeStream *>(stream);
  uint64_t base = origin == ZLIB_FILEFUNC_SEEK_SET ? 0
                  : origin == ZLIB_FILEFUNC_SEEK_CUR ? s->position
                                                     : s->length;
  uint64_t target = base + offset;
  if (target > s->length) return -1;
  s->position = target;
  return 0;
}

int ZCALLBACK closeRange(voidpf, voidpf stream) {
  auto *s = static_cast<RangeStream *>(stream);
  int rc = std::fclose(s->file);
  delete s;
  return rc;
}

int ZCALLBACK errorRange(voidpf, voidpf stream) { return std::ferror(static_cast<RangeStream *>(stream)->file); }

} // namespace

std::unordered_map<std::string, uint64_t> zipMemberDataOffsets(const std::string &path, uint64_t start,
                                                               uint64_t length, const std::string &displayName) {
  // One pass over the central directory: looking members up one at a time
  // rescans it per member, quadratic in archives with thousands of weights.
  RangeSpec spec{path.c_str(), start, length};
  zlib_filefunc64_def functions{openRange, readRange, writeRange, tellRange,
                                seekRange, closeRange, errorRange, &spec};
  unzFile zip = unzOpen2_64(path.c_str(), &functions);
  if (!zip) throw Error("not a valid zip archive (minizip could not open it)", displayName);
  std::unordered_map<std::string, uint64_t> offsets;
  std::string failed;
  for (int rc = unzGoToFirstFile(zip); rc == UNZ_OK; rc = unzGoToNextFile(zip)) {
    unz_file_info64 info;
    char name[4096];
    if (unzGetCurrentFileInfo64(zip, &info, name, sizeof name, nullptr, 0, nullptr, 0) != UNZ_OK) {
      failed = "a member's directory entry is unreadable";
      break;
    }
    int method = 0, level = 0;
    if (unzOpenCurrentFile2(zip, &method, &level, /*raw=*/1) != UNZ_OK) {
      failed = std::string("cannot locate the data of zip member '") + name + "'";
      break;
    }
    offsets.emplace(name, start + unzGetCurrentFileZStreamPos64(zip));
    unzCloseCurrentFile(zip);
  }
  unzClose(zip);
  if (!failed.empty()) throw Error(failed, displayName);
  return offsets;
}

} // namespace exir::detail
