//===- tests/Pte/FlatTensorTest.cpp - FlatTensor .ptd files ---------------===//
//
// The .ptd layout byte for byte (identifier, FH01 header, aligned segments),
// keys with equal bytes sharing a segment, the reader on what the writer
// wrote, sparse output, and the reader's errors.
//
//===----------------------------------------------------------------------===//
#include "Pte/FlatTensor.h"
#include "Support/Error.h"
#include "Pte/PteTestUtil.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace exir;
using exir::pte::BlobSource;
using exir::pte::test::readLE;

namespace {

std::string tempPath(const std::string &name) {
  return (std::filesystem::temp_directory_path() / ("exir_ptd_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

ptd::NamedData entry(std::string key, std::string bytes, std::vector<int32_t> sizes) {
  ptd::NamedData e;
  e.key = std::move(key);
  e.data = BlobSource::fromBytes(std::move(bytes));
  e.tensorLayout = ptd::TensorLayout{ScalarType::Float, std::move(sizes), {0}};
  return e;
}

ptd::File threeKeys() {
  ptd::File file;
  file.namedData.push_back(entry("embed.weight", std::string(12, 'e'), {3}));
  file.namedData.push_back(entry("fc.bias", std::string(8, 'b'), {2}));
  file.namedData.push_back(entry("lm_head.weight", std::string(12, 'e'), {3})); // tied to embed.weight
  return file;
}

} // namespace

TEST_CASE("writePtd lays out header, flatbuffer and aligned segments", "[ptd]") {
  std::string bytes = ptd::writePtdToString(threeKeys());
  CHECK(bytes.substr(4, 4) == "FT01");
  CHECK(bytes.substr(8, 4) == "FH01");
  CHECK(readLE(bytes, 12, 4) == 40);
  CHECK(readLE(bytes, 16, 8) == 48); // flatbuffer offset = padded header length
  uint64_t flatbufferSize = readLE(bytes, 24, 8);
  uint64_t base = readLE(bytes, 32, 8);
  uint64_t dataSize = readLE(bytes, 40, 8);
  CHECK(base % 128 == 0);
  CHECK(base >= 48 + flatbufferSize);
  // Two distinct blobs: 'e' x12 at 0, 'b' x8 at 128.
  CHECK(dataSize == 128 + 8);
  CHECK(bytes.size() == base + dataSize);
  CHECK(bytes.substr(base, 12) == std::string(12, 'e'));
  CHECK(bytes.substr(base + 12, 116) == std::string(116, '\0'));
  CHECK(bytes.substr(base + 128, 8) == std::string(8, 'b'));
}

TEST_CASE("readPtd reads back keys, layouts and shared segments", "[ptd]") {
  std::string path = tempPath("roundtrip.ptd");
  std::ofstream(path, std::ios::binary) << ptd::writePtdToString(threeKeys());
  ptd::File file = ptd::readPtd(path);
  CHECK(file.version == 0);
  REQUIRE(file.segments.size() == 2);
  CHECK(file.segments[0].offset == 0);
  CHECK(file.segments[0].size == 12);
  CHECK(file.segments[1].offset == 128);
  REQUIRE(file.namedData.size() == 3);
  CHECK(file.namedData[0].key == "embed.weight");
  CHECK(file.namedData[2].key == "lm_head.weight");
  CHECK(file.namedData[0].segmentIndex == 0);
  CHECK(file.namedData[1].segmentIndex == 1);
  CHECK(file.namedData[2].segmentIndex == 0);
  REQUIRE(file.namedData[1].tensorLayout);
  CHECK(file.namedData[1].tensorLayout->sizes == std::vector<int32_t>{2});
  CHECK(file.namedData[1].tensorLayout->scalarType == ScalarType::Float);
  CHECK(file.namedData[1].data.bytes() == std::string(8, 'b'));
  CHECK(file.namedData[2].data.bytes() == std::string(12, 'e'));
  std::filesystem::remove(path);
}

TEST_CASE("writePtd refuses duplicate keys, readPtd refuses damaged files", "[ptd]") {
  ptd::File dup = threeKeys();
  dup.namedData.push_back(entry("fc.bias", "x", {1}));
  CHECK_THROWS_WITH(ptd::writePtdToString(dup), "duplicate key 'fc.bias' in the .ptd");

  std::string bytes = ptd::writePtdToString(threeKeys());
  std::string path = tempPath("damaged.ptd");
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 1);
  CHECK_THROWS_WITH(ptd::readPtd(path), Catch::Contains("lies past the end of the file"));
  std::string noHeader = bytes;
  noHeader[8] = 'X';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << noHeader;
  CHECK_THROWS_WITH(ptd::readPtd(path), Catch::Contains("missing the 'FH01' header"));
  std::filesystem::remove(path);
}

TEST_CASE("sparse writePtd leaves zero runs as holes with the same bytes", "[ptd]") {
  // A 64 MiB all-zero weight, from a sparse source file.
  std::string source = tempPath("zeros.bin");
  std::ofstream(source).close();
  std::filesystem::resize_file(source, uint64_t(64) << 20);
  struct stat st {};
  REQUIRE(::stat(source.c_str(), &st) == 0);
  bool holes = uint64_t(st.st_blocks) * 512 < (uint64_t(1) << 20);
  ptd::File file;
  ptd::NamedData big;
  big.key = "big";
  big.data = BlobSource::fromFile(source, 0, uint64_t(64) << 20);
  file.namedData.push_back(big);
  file.namedData.push_back(entry("small", "abcd", {1}));
  std::string dense = ptd::writePtdToString(file);

  std::string path = tempPath("sparse.ptd");
  {
    std::ofstream out(path, std::ios::binary);
    ptd::WriteOptions options;
    options.sparse = true;
    ptd::writePtd(file, options, out);
  }
  CHECK(std::filesystem::file_size(path) == dense.size());
  std::ifstream in(path, std::ios::binary);
  std::string back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(back == dense);
  REQUIRE(::stat(path.c_str(), &st) == 0);
  // Allocated blocks: the head and the last segment, not 64 MiB.
  if (!holes) WARN("the temporary directory's filesystem has no sparse files: allocation not checked");
  INFO("allocated " << st.st_blocks * 512 << " bytes");
  if (holes) CHECK(uint64_t(st.st_blocks) * 512 < (uint64_t(1) << 20));
  std::filesystem::remove(path);
  std::filesystem::remove(source);
}

TEST_CASE("checkExternalTensors resolves EXTERNAL tensors by FQN and layout", "[ptd]") {
  ptd::File file = threeKeys();
  auto programWith = [](std::string fqn, std::vector<int32_t> sizes) {
    pte::Tensor t;
    t.scalarType = ScalarType::Float;
    t.sizes = std::move(sizes);
    t.dimOrder = {0};
    t.extraTensorInfo = pte::ExtraTensorInfo{0, std::move(fqn), pte::TensorDataLocation::External};
    pte::Program p;
    p.executionPlan.emplace_back();
    p.executionPlan[0].values.push_back(pte::Null{});
    p.executionPlan[0].values.push_back(t);
    return p;
  };
  CHECK(ptd::checkExternalTensors(programWith("fc.bias", {2}), file) == 1);
  CHECK_THROWS_WITH(ptd::checkExternalTensors(programWith("fc.bias", {3}), file),
                    "external tensor 'fc.bias' has another dtype, shape or dim order in the .ptd");
  CHECK_THROWS_WITH(ptd::checkExternalTensors(programWith("fc.weight", {2}), file),
                    "external tensor 'fc.weight' is not in the .ptd");
  file.namedData[1].tensorLayout.reset(); // a blob without a layout: only its size is checked
  CHECK_THROWS_WITH(ptd::checkExternalTensors(programWith("fc.bias", {3}), file),
                    "external tensor 'fc.bias' needs 12 bytes but the .ptd holds 8");
}
