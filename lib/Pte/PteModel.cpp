//===- Pte/PteModel.cpp - BlobSource and schema name tables -------------===//
//
// BlobSource streams file-backed payloads in bounded chunks so large weights
// are never held in memory; the name tables give the schema's spellings used
// by the JSON and text dumps.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteModel.h"

#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_map>

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace exir::pte {

//===----------------------------------------------------------------------===//
// BlobSource
//===----------------------------------------------------------------------===//

BlobSource BlobSource::fromBytes(std::string bytes) {
  BlobSource blob;
  blob.length_ = bytes.size();
  blob.buffer_ = std::make_shared<const std::string>(std::move(bytes));
  return blob;
}

BlobSource BlobSource::fromBuffer(std::shared_ptr<const std::string> buffer, uint64_t offset,
                                  uint64_t length) {
  if (!buffer || offset > buffer->size() || length > buffer->size() - offset)
    throw InternalError("BlobSource::fromBuffer: range outside the buffer");
  BlobSource blob;
  blob.buffer_ = std::move(buffer);
  blob.offset_ = offset;
  blob.length_ = length;
  return blob;
}

BlobSource BlobSource::fromFile(std::string path, uint64_t offset, uint64_t length) {
  if (path.empty()) throw InternalError("BlobSource::fromFile: empty path");
  BlobSource blob;
  blob.path_ = std::move(path);
  blob.offset_ = offset;
  blob.length_ = length;
  return blob;
}

BlobSource BlobSource::fromGenerator(uint64_t length, std::shared_ptr<const Generator> generator) {
  if (!generator) throw InternalError("BlobSource::fromGenerator: no generator");
  BlobSource blob;
  blob.generator_ = std::move(generator);
  blob.length_ = length;
  return blob;
}

std::string_view BlobSource::view() const {
  if (isFile()) throw InternalError("BlobSource::view called on a file-backed blob");
  if (generator_) throw InternalError("BlobSource::view called on a generated blob");
  if (!buffer_) return {};
  return std::string_view(*buffer_).substr(offset_, length_);
}

std::string BlobSource::bytes() const {
  if (!isFile() && !generator_) return std::string(view());
  std::string out;
  out.reserve(length_);
  forEachChunk([&](std::string_view chunk) { out.append(chunk); });
  return out;
}

namespace {

/// An open file descriptor, closed on scope exit.
struct FileHandle {
  explicit FileHandle(const std::string &path) : fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~FileHandle() {
    if (fd >= 0) ::close(fd);
  }
  FileHandle(const FileHandle &) = delete;
  FileHandle &operator=(const FileHandle &) = delete;
  int fd;
};

const char kZeros[1 << 16] = {};

} // namespace

void BlobSource::forEachChunk(const std::function<void(std::string_view)> &sink,
                              size_t chunkSize) const {
  if (chunkSize == 0) chunkSize = 1;
  forEachExtent(sink,
                [&](uint64_t count) {
                  for (; count > 0;) {
                    size_t n = size_t(std::min<uint64_t>({count, sizeof kZeros, chunkSize}));
                    sink(std::string_view(kZeros, n));
                    count -= n;
                  }
                },
                chunkSize);
}

namespace {

/// An open weights file as ScopedFileCache keeps it.
struct CachedFile {
  int fd = -1;
  uint64_t size = 0;
  bool regular = false;
  bool extentsKnown = false; // `data` lists every data extent (holes are the gaps)
  std::vector<std::pair<uint64_t, uint64_t>> data; // [start, end), ascending
  /// Small reads are served from one window of the file: constants of a few
  /// KiB lie one after the other, so 100k of them cost a few hundred preads.
  std::unique_ptr<char[]> window;
  uint64_t windowStart = 0, windowSize = 0;

  static constexpr size_t kWindow = size_t(128) << 10;
  static constexpr size_t kSmallRead = size_t(16) << 10;

  /// Up to `length` (<= kSmallRead) bytes at `offset`, fewer at the end of the
  /// file; valid until the next call.
  std::string_view readSmall(uint64_t offset, size_t length) {
    if (offset < windowStart || offset + length > windowStart + windowSize) {
      if (!window) window.reset(new char[kWindow]);
      windowStart = offset;
      windowSize = readAt(fd, window.get(), kWindow, offset);
    }
    uint64_t skip = offset - windowStart;
    return std::string_view(window.get() + skip, size_t(std::min<uint64_t>(length, windowSize - skip)));
  }
};

} // namespace

struct ScopedFileCache::Impl {
  std::unordered_map<std::string, CachedFile> files;
  ~Impl() {
    for (auto &[path, file] : files) ::close(file.fd);
  }
  CachedFile &get(const std::string &path);
};

namespace {
thread_local ScopedFileCache::Impl *currentFileCache = nullptr;
} // namespace

ScopedFileCache::ScopedFileCache() {
  if (currentFileCache) return;
  impl_ = std::make_unique<Impl>();
  currentFileCache = impl_.get();
}

ScopedFileCache::~ScopedFileCache() {
  if (impl_) currentFileCache = nullptr;
}

CachedFile &ScopedFileCache::Impl::get(const std::string &path) {
  auto found = files.find(path);
  if (found != files.end()) return found->second;
  requireRegularFile(path); // a reference into /dev/zero or a FIFO would never end
  CachedFile file;
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0) {
    if (file.fd >= 0) ::close(file.fd);
    throw Error("cannot open file", path);
  }
  file.regular = S_ISREG(st.st_mode);
  file.size = file.regular ? uint64_t(st.st_size) : UINT64_MAX;
  if (file.regular) {
    // Map the holes once; without SEEK_DATA every byte counts as data.
    file.extentsKnown = true;
    for (uint64_t pos = 0; pos < file.size;) {
      off_t start = ::lseek(file.fd, off_t(pos), SEEK_DATA);
      if (start < 0 && errno == ENXIO) break; // a hole up to the end of the file
      off_t end = start < 0 ? start : ::lseek(file.fd, start, SEEK_HOLE);
      if (end < 0) {
        file.extentsKnown = false;
        file.data.clear();
        break;
      }
      uint64_t dataEnd = std::max<uint64_t>(uint64_t(end), uint64_t(start) + 1);
      file.data.emplace_back(uint64_t(start), dataEnd);
      pos = dataEnd;
    }
  }
  return files.emplace(path, std::move(file)).first->second;
}

void BlobSource::forEachExtent(const std::function<void(std::string_view)> &data,
                               const std::function<void(uint64_t)> &zeros, size_t chunkSize) const {
  if (chunkSize == 0) chunkSize = 1;
  if (generator_) {
    uint64_t produced = 0;
    generator_->produce([&](std::string_view chunk) {
      produced += chunk.size();
      for (size_t pos = 0; pos < chunk.size(); pos += chunkSize) data(chunk.substr(pos, chunkSize));
    });
    if (produced != length_)
      throw InternalError("BlobSource: a generator made " + std::to_string(produced) + " bytes, not " +
                          std::to_string(length_));
    return;
  }
  if (!isFile()) {
    std::string_view all = view();
    for (size_t pos = 0; pos < all.size(); pos += chunkSize)
      data(all.substr(pos, chunkSize));
    return;
  }
  if (length_ == 0) return;
  CachedFile *cached = currentFileCache ? &currentFileCache->get(path_) : nullptr;
  std::optional<FileHandle> own;
  int fd;
  bool regular;
  uint64_t fileSize;
  if (cached) {
    fd = cached->fd;
    regular = cached->regular;
    fileSize = cached->size;
  } else {
    requireRegularFile(path_); // a reference into /dev/zero or a FIFO would never end
    own.emplace(path_);
    struct stat st;
    if (own->fd < 0 || ::fstat(own->fd, &st) != 0) throw Error("cannot open file", path_);
    fd = own->fd;
    regular = S_ISREG(st.st_mode);
    fileSize = regular ? uint64_t(st.st_size) : UINT64_MAX;
  }
  uint64_t end = offset_ + length_;
  if (end > fileSize)
    throw Error("file too short: blob of " + std::to_string(length_) + " bytes at offset " +
                    std::to_string(offset_) + " ends past the end of the file",
                path_, "byte " + std::to_string(std::max(offset_, fileSize)));
  std::unique_ptr<char[]> buffer; // for reads the cache's window does not serve
  uint32_t crc = 0;
  bool holesKnown = regular; // until SEEK_DATA fails (not every file system has it)
  if (cached && !cached->extentsKnown) holesKnown = false;
  for (uint64_t pos = offset_; pos < end;) {
    uint64_t dataEnd = end;
    if (holesKnown) {
      // Where the next data starts (end: only a hole is left) and where it ends.
      uint64_t dataStart = end, extentEnd = end;
      if (cached) {
        auto extent = std::upper_bound(cached->data.begin(), cached->data.end(), pos,
                                       [](uint64_t at, const auto &e) { return at < e.second; });
        if (extent != cached->data.end()) {
          dataStart = std::max(extent->first, pos);
          extentEnd = extent->second;
        }
      } else {
        off_t start = ::lseek(fd, off_t(pos), SEEK_DATA);
        if (start < 0 && errno != ENXIO) {
          holesKnown = false;
          continue;
        }
        if (start >= 0) {
          dataStart = uint64_t(start);
          if (dataStart <= pos) {
            off_t holeStart = ::lseek(fd, off_t(pos), SEEK_HOLE);
            if (holeStart < 0) {
              holesKnown = false;
              continue;
            }
            extentEnd = std::max<uint64_t>(uint64_t(holeStart), pos + 1);
          }
        }
      }
      if (dataStart > pos) {
        uint64_t hole = std::min<uint64_t>(dataStart, end) - pos;
        if (expectedCrc_) crc = crc32UpdateZeros(crc, hole);
        zeros(hole);
        pos += hole;
        continue;
      }
      dataEnd = std::min<uint64_t>(extentEnd, end);
    }
    while (pos < dataEnd) {
      size_t want = size_t(std::min<uint64_t>(chunkSize, dataEnd - pos));
      std::string_view chunk;
      if (cached && want <= CachedFile::kSmallRead) {
        chunk = cached->readSmall(pos, want);
      } else {
        if (!buffer) buffer.reset(new char[size_t(std::min<uint64_t>(chunkSize, length_))]);
        chunk = std::string_view(buffer.get(), readAt(fd, buffer.get(), want, pos));
      }
      if (chunk.size() != want)
        throw Error("file too short: blob of " + std::to_string(length_) + " bytes at offset " +
                        std::to_string(offset_) + " ends past the end of the file",
                    path_, "byte " + std::to_string(pos + chunk.size()));
      if (expectedCrc_) crc = crc32Update(crc, chunk);
      data(chunk);
      pos += want;
    }
  }
  if (expectedCrc_ && crc != *expectedCrc_) {
    char text[64];
    std::snprintf(text, sizeof text, "CRC-32 %08x, expected %08x", unsigned(crc), unsigned(*expectedCrc_));
    throw Error(what_ + ": bytes " + std::to_string(offset_) + ".." + std::to_string(offset_ + length_) +
                    " changed since they were referenced (" + text + "): the file was replaced after the artifact was written",
                path_);
  }
}

std::string BlobSource::readPart(uint64_t offset, uint64_t length) const {
  if (offset >= length_) return {};
  length = std::min(length, length_ - offset);
  if (generator_) return generator_->part(offset, length);
  if (!isFile()) return std::string(view().substr(size_t(offset), size_t(length)));
  std::string out;
  size_t got;
  if (currentFileCache && length <= CachedFile::kSmallRead) {
    out = currentFileCache->get(path_).readSmall(offset_ + offset, size_t(length));
    got = out.size();
    out.resize(size_t(length));
  } else {
    std::optional<FileHandle> own;
    int fd;
    if (currentFileCache) {
      fd = currentFileCache->get(path_).fd;
    } else {
      own.emplace(path_);
      if (own->fd < 0) throw Error("cannot open file", path_);
      fd = own->fd;
    }
    out.assign(size_t(length), '\0');
    got = readAt(fd, out.data(), out.size(), offset_ + offset);
  }
  if (got != out.size())
    throw Error("file too short: blob of " + std::to_string(length_) + " bytes at offset " +
                    std::to_string(offset_) + " ends past the end of the file",
                path_, "byte " + std::to_string(offset_ + offset + got));
  return out;
}

BlobSource BlobSource::withExpectedCrc32(uint32_t crc, std::string what) const {
  BlobSource blob = *this;
  blob.expectedCrc_ = crc;
  blob.what_ = std::move(what);
  return blob;
}

std::string BlobSource::sha256Hex() const {
  Sha256 hasher;
  forEachChunk([&](std::string_view chunk) { hasher.update(chunk); });
  return hasher.hexDigest();
}

bool BlobSource::sameBytes(const BlobSource &other) const {
  if (length_ != other.length_) return false;
  if (length_ == 0) return true;
  if (!isFile() && !other.isFile() && !generator_ && !other.generator_) return view() == other.view();
  if (isFile() && other.isFile() && path_ == other.path_ && offset_ == other.offset_) return true;
  // Hashing streams holes of sparse files without reading them; a byte compare
  // through readPart would read them (2 GB of holes cost more than the hash).
  return sha256Hex() == other.sha256Hex();
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

std::optional<uint64_t> Tensor::byteSize() const {
  uint64_t bytes = elementSize(scalarType);
  if (bytes == 0) return std::nullopt;
  for (int32_t dim : sizes) {
    if (dim < 0) return std::nullopt;
    if (dim != 0 && bytes > UINT64_MAX / uint64_t(dim)) return std::nullopt;
    bytes *= uint64_t(dim);
  }
  return bytes;
}

std::optional<size_t> Program::findPlan(const std::string &name) const {
  for (size_t i = 0; i < executionPlan.size(); ++i)
    if (executionPlan[i].name == name) return i;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

const char *enumName(TensorShapeDynamism v) {
  switch (v) {
  case TensorShapeDynamism::Static: return "STATIC";
  case TensorShapeDynamism::DynamicBound: return "DYNAMIC_BOUND";
  case TensorShapeDynamism::DynamicUnbound: return "DYNAMIC_UNBOUND";
  }
  return nullptr;
}

const char *enumName(TensorDataLocation v) {
  switch (v) {
  case TensorDataLocation::Segment: return "SEGMENT";
  case TensorDataLocation::External: return "EXTERNAL";
  }
  return nullptr;
}

const char *enumName(DeviceType v) {
  switch (v) {
  case DeviceType::Cpu: return "CPU";
  case DeviceType::Cuda: return "CUDA";
  }
  return nullptr;
}

const char *enumName(DataLocation v) {
  switch (v) {
  case DataLocation::Inline: return "INLINE";
  case DataLocation::Segment: return "SEGMENT";
  }
  return nullptr;
}

const char *scalarTypeSchemaName(ScalarType t) {
  switch (t) {
  case ScalarType::Byte: return "BYTE";
  case ScalarType::Char: return "CHAR";
  case ScalarType::Short: return "SHORT";
  case ScalarType::Int: return "INT";
  case ScalarType::Long: return "LONG";
  case ScalarType::Half: return "HALF";
  case ScalarType::Float: return "FLOAT";
  case ScalarType::Double: return "DOUBLE";
  case ScalarType::Bool: return "BOOL";
  case ScalarType::QInt8: return "QINT8";
  case ScalarType::QUInt8: return "QUINT8";
  case ScalarType::QInt32: return "QINT32";
  case ScalarType::BFloat16: return "BFLOAT16";
  case ScalarType::QUInt4x2: return "QUINT4X2";
  case ScalarType::QUInt2x4: return "QUINT2X4";
  case ScalarType::Bits16: return "BITS16";
  case ScalarType::Float8_e5m2: return "FLOAT8E5M2";
  case ScalarType::Float8_e4m3fn: return "FLOAT8E4M3FN";
  case ScalarType::Float8_e5m2fnuz: return "FLOAT8E5M2FNUZ";
  case ScalarType::Float8_e4m3fnuz: return "FLOAT8E4M3FNUZ";
  case ScalarType::UInt16: return "UINT16";
  case ScalarType::UInt32: return "UINT32";
  case ScalarType::UInt64: return "UINT64";
  default: return nullptr; // complex and BITSnxm types are not declared in the schema
  }
}

const char *kernelTypeName(size_t code) {
  static const char *const names[] = {"NONE",   "Null",    "Int",        "Bool",
                                      "Double", "Tensor",  "String",     "IntList",
                                      "DoubleList", "BoolList", "TensorList", "OptionalTensorList"};
  return code < std::size(names) ? names[code] : nullptr;
}

const char *instructionTypeName(size_t code) {
  static const char *const names[] = {"NONE",     "KernelCall",    "DelegateCall",
                                      "MoveCall", "JumpFalseCall", "FreeCall"};
  return code < std::size(names) ? names[code] : nullptr;
}

} // namespace exir::pte
