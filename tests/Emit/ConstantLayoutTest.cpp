//===- tests/Emit/ConstantLayoutTest.cpp - constants as the runtime reads them -===//
//
// Views into a storage (an offset slice, a transposed or broadcast view, a
// channels-last weight) become dense bytes in the emitted dim order; a view
// reading past its data reference is an error naming the constant; equal
// bytes are found without hashing blobs of distinct sizes.
//
//===----------------------------------------------------------------------===//
#include "Emit/ConstantLayout.h"
#include "Support/Error.h"
#include "Support/Hash.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <fcntl.h>
#include <unistd.h>

using namespace exir;
using exir::pte::BlobSource;

namespace {

std::string floats(std::initializer_list<float> values) {
  std::string out;
  for (float v : values) out.append(reinterpret_cast<const char *>(&v), sizeof v);
  return out;
}

/// A file holding `prefix` then `bytes`, removed at the end of the test.
struct TempFile {
  std::string path;
  TempFile(const std::string &name, const std::string &prefix, const std::string &bytes) {
    path = (std::filesystem::temp_directory_path() / ("exir_layout_test_" + std::to_string(::getpid()) + "_" + name))
               .string();
    std::ofstream(path, std::ios::binary) << prefix << bytes;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

ConstantTensor view(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t storageOffset) {
  ConstantTensor c;
  c.dtype = ScalarType::Float;
  c.sizes = std::move(sizes);
  c.strides = std::move(strides);
  c.storageOffset = storageOffset;
  return c;
}

} // namespace

TEST_CASE("dense constants are ranges of their storage", "[emit][constants]") {
  std::string storage = floats({0, 1, 2, 3, 4, 5});
  TempFile file("dense", "HEADER..", storage);
  ConstantTensor whole = view({2, 3}, {3, 1}, 0);
  whole.data.file = file.path;
  whole.data.offset = 8;
  whole.data.length = storage.size();

  BlobSource all = emit::denseConstantBytes(whole, {0, 1}, "constant 'w'");
  CHECK(all.isFile());
  CHECK(all.offset() == 8);
  CHECK(all.size() == 24);

  // The second row of the same storage (a slice with a storage offset).
  ConstantTensor row = whole;
  row.sizes = {3};
  row.strides = {1};
  row.storageOffset = 3;
  BlobSource slice = emit::denseConstantBytes(row, {0}, "constant 'row'");
  CHECK(slice.isFile());
  CHECK(slice.offset() == 8 + 12);
  CHECK(slice.bytes() == floats({3, 4, 5}));

  // Size-1 dims may carry any stride.
  ConstantTensor column = view({3, 1}, {1, 99}, 0);
  column.data.inlineBytes = storage;
  CHECK(emit::denseConstantBytes(column, {0, 1}, "c").bytes() == floats({0, 1, 2}));
}

TEST_CASE("non-dense constants are gathered into the emitted dim order", "[emit][constants]") {
  std::string storage = floats({0, 1, 2, 3, 4, 5});
  // The transpose of a 2x3 matrix: 3x2 with strides (1, 3).
  ConstantTensor transposed = view({3, 2}, {1, 3}, 0);
  transposed.data.inlineBytes = storage;
  CHECK(emit::denseConstantBytes(transposed, {0, 1}, "t").bytes() == floats({0, 3, 1, 4, 2, 5}));

  // Every other element, from element 1.
  ConstantTensor strided = view({3}, {2}, 1);
  strided.data.inlineBytes = storage;
  CHECK(emit::denseConstantBytes(strided, {0}, "s").bytes() == floats({1, 3, 5}));

  // A broadcast row (stride 0).
  ConstantTensor broadcast = view({2, 3}, {0, 1}, 0);
  broadcast.data.inlineBytes = storage;
  CHECK(emit::denseConstantBytes(broadcast, {0, 1}, "b").bytes() == floats({0, 1, 2, 0, 1, 2}));

  // A file-backed transposed view is gathered from its storage when its bytes
  // are read (the writer streams it), and the storage's CRC is checked then;
  // a part of it (DistinctBlobs' sample) reads only the elements it needs.
  TempFile file("gather", "", storage);
  ConstantTensor fromFile = transposed;
  fromFile.data.inlineBytes.reset();
  fromFile.data.file = file.path;
  fromFile.data.length = storage.size();
  pte::BlobSource lazy = emit::denseConstantBytes(fromFile, {0, 1}, "constant 'lm_head.weight'");
  CHECK(lazy.size() == 24);
  CHECK(lazy.bytes() == floats({0, 3, 1, 4, 2, 5}));
  CHECK(lazy.readPart(4, 12) == floats({3, 1, 4}));
  CHECK(lazy.sha256Hex() == pte::BlobSource::fromBytes(floats({0, 3, 1, 4, 2, 5})).sha256Hex());
  fromFile.data.crc32 = 0x12345678; // wrong on purpose
  CHECK_THROWS_WITH(emit::denseConstantBytes(fromFile, {0, 1}, "constant 'lm_head.weight'").bytes(),
                    Catch::Contains("constant 'lm_head.weight'") && Catch::Contains("changed since they were referenced"));
}

TEST_CASE("a large file-backed transposed view is gathered when its bytes are read", "[emit][constants]") {
  // 640 x 512 floats (1.25 MiB), viewed transposed: bigger than what is gathered eagerly.
  const int64_t rows = 640, cols = 512;
  std::vector<float> values(size_t(rows * cols));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i);
  std::string storage(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
  TempFile file("gather-large", "", storage);
  ConstantTensor t = view({cols, rows}, {1, cols}, 0);
  t.data.file = file.path;
  t.data.length = storage.size();
  std::vector<float> expected;
  for (int64_t i = 0; i < cols; ++i)
    for (int64_t j = 0; j < rows; ++j) expected.push_back(values[size_t(j * cols + i)]);
  std::string want(reinterpret_cast<const char *>(expected.data()), expected.size() * sizeof(float));
  pte::BlobSource lazy = emit::denseConstantBytes(t, {0, 1}, "w");
  CHECK(lazy.size() == want.size());
  CHECK(lazy.bytes() == want);
  CHECK(lazy.readPart(4096, 64) == want.substr(4096, 64));
  CHECK(lazy.readPart(want.size() - 6, 100) == want.substr(want.size() - 6));
  CHECK(lazy.sameBytes(pte::BlobSource::fromBytes(want)));
}

TEST_CASE("channels-last constants keep their dim order, others become contiguous", "[emit][constants]") {
  CHECK(emit::emittedDimOrder({0, 2, 3, 1}) == std::vector<uint8_t>{0, 2, 3, 1});
  CHECK(emit::emittedDimOrder({0, 2, 3, 4, 1}) == std::vector<uint8_t>{0, 2, 3, 4, 1});
  CHECK(emit::emittedDimOrder({1, 0}) == std::vector<uint8_t>{0, 1});
  CHECK(emit::emittedDimOrder({0, 3, 2, 1}) == std::vector<uint8_t>{0, 1, 2, 3});

  // N=1, C=2, H=1, W=2 stored contiguously (NCHW), emitted channels-last (NHWC).
  ConstantTensor nchw = view({1, 2, 1, 2}, {4, 2, 2, 1}, 0);
  nchw.data.inlineBytes = floats({0, 1, 2, 3});
  CHECK(emit::denseConstantBytes(nchw, {0, 2, 3, 1}, "w").bytes() == floats({0, 2, 1, 3}));
  // Already channels-last in storage: a plain range.
  ConstantTensor nhwc = view({1, 2, 1, 2}, {4, 1, 4, 2}, 0);
  nhwc.data.inlineBytes = floats({0, 2, 1, 3});
  CHECK(emit::denseConstantBytes(nhwc, {0, 2, 3, 1}, "w").bytes() == floats({0, 2, 1, 3}));
}

TEST_CASE("a view that reads past its data reference names the constant", "[emit][constants]") {
  ConstantTensor c = view({2, 3}, {3, 1}, 1); // needs 7 floats
  c.data.inlineBytes = floats({0, 1, 2, 3, 4, 5});
  CHECK_THROWS_WITH(emit::denseConstantBytes(c, {0, 1}, "constant 'fc.weight'"),
                    "constant 'fc.weight': the view reads 28 bytes of its storage but the data reference holds 24");
  CHECK(c.storageBytesNeeded() == 28u);
  CHECK(view({0, 5}, {5, 1}, 0).storageBytesNeeded() == 0u);
  CHECK_FALSE(view({2}, {-1}, 0).storageBytesNeeded());
  CHECK_FALSE(view({2, 2}, {1}, 0).storageBytesNeeded());
}

namespace {
/// Whether `path` has a hole (the file system keeps them: tmpfs and ext4 do).
bool hasHole(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY);
  off_t hole = ::lseek(fd, 0, SEEK_HOLE), size = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  return hole >= 0 && hole < size;
}
} // namespace

TEST_CASE("a large transposed view is gathered alike from a buffer, from its data extents and from streamed reads",
          "[emit][constants]") {
  // The storage at an offset that is not page aligned, CRC-checked: read into
  // the thread's buffer (up to 64 MiB; larger storages are mapped) and
  // gathered there. With a wrong CRC the streamed read takes over and reports
  // it; with a hole in the storage (a sparse weights file) only its data is read.
  const int64_t rows = 600, cols = 520;
  std::vector<float> values(size_t(rows * cols));
  for (size_t i = 0; i < values.size(); ++i) values[i] = float(i % 1000 == 0 ? 0 : i);
  std::string storage(reinterpret_cast<const char *>(values.data()), values.size() * sizeof(float));
  std::string prefix(100, 'p');
  TempFile file("gather-mapped", prefix, storage);
  ConstantTensor t = view({cols, rows}, {1, cols}, 0);
  t.data.file = file.path;
  t.data.offset = prefix.size();
  t.data.length = storage.size();
  t.data.crc32 = crc32Update(0, storage);
  std::string want;
  for (int64_t i = 0; i < cols; ++i)
    for (int64_t j = 0; j < rows; ++j) want.append(storage, size_t((j * cols + i) * 4), 4);
  CHECK(emit::denseConstantBytes(t, {0, 1}, "w").bytes() == want);
  CHECK(emit::lastStorageRead() == emit::StorageRead::Buffered);
  CHECK(emit::denseConstantBytes(t, {0, 1}, "w").readPart(1000, 77) == want.substr(1000, 77));
  t.data.crc32 = *t.data.crc32 ^ 1;
  CHECK_THROWS_WITH(emit::denseConstantBytes(t, {0, 1}, "constant 'w'").bytes(),
                    Catch::Contains("constant 'w'") && Catch::Contains("changed since they were referenced"));

  // The first 256 KiB of the storage zero, written as a hole where the file system has them.
  std::string sparse = storage;
  std::fill(sparse.begin(), sparse.begin() + (256 << 10), '\0');
  std::string path = file.path + ".sparse";
  {
    std::ofstream out(path, std::ios::binary);
    out.seekp(std::streamoff(256 << 10));
    out.write(sparse.data() + (256 << 10), std::streamsize(sparse.size() - (256 << 10)));
  }
  ConstantTensor s = view({cols, rows}, {1, cols}, 0);
  s.data.file = path;
  s.data.length = sparse.size();
  s.data.crc32 = crc32Update(0, sparse);
  std::string wantSparse;
  for (int64_t i = 0; i < cols; ++i)
    for (int64_t j = 0; j < rows; ++j) wantSparse.append(sparse, size_t((j * cols + i) * 4), 4);
  CHECK(emit::denseConstantBytes(s, {0, 1}, "w").bytes() == wantSparse);
  CHECK(emit::lastStorageRead() == (hasHole(path) ? emit::StorageRead::Sparse : emit::StorageRead::Buffered));
  CHECK(emit::denseConstantBytes(s, {0, 1}, "w").readPart(0, 4096) == wantSparse.substr(0, 4096));
  std::filesystem::remove(path);
}

TEST_CASE("a transposed view of a sparse storage reads its data extents only", "[emit][constants]") {
  // Holes before, between and after two data extents, the storage 100 bytes
  // into its file: gathered from an anonymous mapping where only the extents
  // are read; the CRC-32 covers extents and holes alike.
  const int64_t rows = 600, cols = 520;
  const size_t size = size_t(rows * cols * 4);
  std::string storage(size, '\0');
  struct Extent {
    size_t at, length;
  };
  const Extent extents[] = {{256 << 10, 100 << 10}, {656 << 10, 8 << 10}};
  for (const Extent &e : extents)
    for (size_t i = 0; i < e.length; ++i) storage[e.at + i] = char(1 + (i * 7 + e.at) % 251);
  const std::string prefix(100, 'p');
  std::string path = (std::filesystem::temp_directory_path() / ("exir-sparse-" + std::to_string(::getpid()))).string();
  auto writeFile = [&](bool withData) {
    std::filesystem::remove(path);
    {
      std::ofstream out(path, std::ios::binary);
      out.write(prefix.data(), std::streamsize(prefix.size()));
      for (const Extent &e : extents) {
        if (!withData) break;
        out.seekp(std::streamoff(prefix.size() + e.at));
        out.write(storage.data() + e.at, std::streamsize(e.length));
      }
    }
    std::filesystem::resize_file(path, prefix.size() + size); // the trailing hole
  };
  auto viewOf = [&](const std::string &bytes) {
    ConstantTensor v = view({cols, rows}, {1, cols}, 0);
    v.data.file = path;
    v.data.offset = prefix.size();
    v.data.length = size;
    v.data.crc32 = crc32Update(0, bytes);
    return v;
  };
  auto transposed = [&](const std::string &bytes) {
    std::string out;
    for (int64_t i = 0; i < cols; ++i)
      for (int64_t j = 0; j < rows; ++j) out.append(bytes, size_t((j * cols + i) * 4), 4);
    return out;
  };
  // Where the file system keeps no holes the file is dense and is buffered.
  auto expectedRead = [&] { return hasHole(path) ? emit::StorageRead::Sparse : emit::StorageRead::Buffered; };

  writeFile(true);
  ConstantTensor v = viewOf(storage);
  CHECK(emit::denseConstantBytes(v, {0, 1}, "w").bytes() == transposed(storage));
  CHECK(emit::lastStorageRead() == expectedRead());

  // A CRC-32 that does not match: the streamed read reports it.
  v.data.crc32 = *v.data.crc32 ^ 1;
  CHECK_THROWS_WITH(emit::denseConstantBytes(v, {0, 1}, "constant 'w'").bytes(),
                    Catch::Contains("constant 'w'") && Catch::Contains("changed since they were referenced"));
  CHECK(emit::lastStorageRead() == emit::StorageRead::Whole);

  // A storage that is one hole: zeros.
  writeFile(false);
  const std::string zeros(size, '\0');
  CHECK(emit::denseConstantBytes(viewOf(zeros), {0, 1}, "w").bytes() == zeros);
  CHECK(emit::lastStorageRead() == expectedRead());
  std::filesystem::remove(path);
}
