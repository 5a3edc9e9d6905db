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

/// Reads exactly `length` bytes at `offset`; returns how many it got (fewer at the end of the file).
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
  requireRegularFile(path_); // a reference into /dev/zero or a FIFO would never end
  FileHandle file(path_);
  struct stat st;
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0) throw Error("cannot open file", path_);
  bool regular = S_ISREG(st.st_mode);
  uint64_t fileSize = regular ? uint64_t(st.st_size) : UINT64_MAX;
  uint64_t end = offset_ + length_;
  if (end > fileSize)
    throw Error("file too short: blob of " + std::to_string(length_) + " bytes at offset " +
                    std::to_string(offset_) + " ends past the end of the file",
                path_, "byte " + std::to_string(std::max(offset_, fileSize)));
  std::unique_ptr<char[]> buffer(new char[size_t(std::min<uint64_t>(chunkSize, length_))]);
  uint32_t crc = 0;
  bool holesKnown = regular; // until SEEK_DATA fails (not every file system has it)
  for (uint64_t pos = offset_; pos < end;) {
    uint64_t dataEnd = end;
    if (holesKnown) {
      off_t dataStart = ::lseek(file.fd, off_t(pos), SEEK_DATA);
      if (dataStart < 0 && errno == ENXIO) dataStart = off_t(end); // a hole up to the end of the file
      if (dataStart < 0) {
        holesKnown = false;
      } else if (uint64_t(dataStart) > pos) {
        uint64_t hole = std::min<uint64_t>(uint64_t(dataStart), end) - pos;
        if (expectedCrc_) crc = crc32UpdateZeros(crc, hole);
        zeros(hole);
        pos += hole;
        continue;
      } else {
        off_t holeStart = ::lseek(file.fd, off_t(pos), SEEK_HOLE);
        if (holeStart < 0) holesKnown = false;
        else dataEnd = std::min<uint64_t>(std::max<uint64_t>(uint64_t(holeStart), pos + 1), end);
      }
    }
    while (pos < dataEnd) {
      size_t want = size_t(std::min<uint64_t>(chunkSize, dataEnd - pos));
      size_t got = readAt(file.fd, buffer.get(), want, pos);
      if (got != want)
        throw Error("file too short: blob of " + std::to_string(length_) + " bytes at offset " +
                        std::to_string(offset_) + " ends past the end of the file",
                    path_, "byte " + std::to_string(pos + got));
      std::string_view chunk(buffer.get(), want);
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
  FileHandle file(path_);
  if (file.fd < 0) throw Error("cannot open file", path_);
  std::string out(size_t(length), '\0');
  size_t got = readAt(file.fd, out.data(), out.size(), offset_ + offset);
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
