//===- Serde/Safetensors.cpp - Weights from a .safetensors file -----------===//
#include "Serde/Safetensors.h"
#include "Serde/JsonDom.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <filesystem>
#include <fstream>

namespace exir {

namespace {

struct DtypeName {
  const char *name;
  ScalarType type;
};
// The dtypes of the safetensors format that have a c10 ScalarType.
constexpr DtypeName kDtypes[] = {
    {"BOOL", ScalarType::Bool},        {"U8", ScalarType::Byte},          {"I8", ScalarType::Char},
    {"I16", ScalarType::Short},        {"U16", ScalarType::UInt16},       {"I32", ScalarType::Int},
    {"U32", ScalarType::UInt32},       {"I64", ScalarType::Long},         {"U64", ScalarType::UInt64},
    {"F16", ScalarType::Half},         {"BF16", ScalarType::BFloat16},    {"F32", ScalarType::Float},
    {"F64", ScalarType::Double},       {"F8_E5M2", ScalarType::Float8_e5m2},
    {"F8_E4M3", ScalarType::Float8_e4m3fn},
};

uint32_t crcOfRange(std::ifstream &in, uint64_t offset, uint64_t length, const std::string &path) {
  in.clear();
  in.seekg(std::streamoff(offset));
  std::string chunk(std::min<uint64_t>(length, uint64_t(1) << 20), '\0');
  uint32_t crc = 0;
  for (uint64_t left = length; left > 0;) {
    size_t want = size_t(std::min<uint64_t>(chunk.size(), left));
    in.read(chunk.data(), std::streamsize(want));
    if (size_t(in.gcount()) != want) throw Error("file too short while reading tensor data", path);
    crc = crc32Update(crc, std::string_view(chunk.data(), want));
    left -= want;
  }
  return crc;
}

} // namespace

const char *safetensorsDtypeName(ScalarType t) {
  for (const auto &d : kDtypes)
    if (d.type == t) return d.name;
  return "";
}

OrderedMap<ConstantTensor> readSafetensors(const std::string &path) {
  namespace fs = std::filesystem;
  requireRegularFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open file", path);
  uint64_t fileSize = fs::file_size(path);
  unsigned char lengthBytes[8] = {};
  in.read(reinterpret_cast<char *>(lengthBytes), 8);
  if (in.gcount() != 8) throw Error("not a safetensors file: shorter than its 8-byte header length", path);
  uint64_t headerLength = 0;
  for (int i = 7; i >= 0; --i) headerLength = headerLength << 8 | lengthBytes[i];
  if (headerLength > fileSize - 8)
    throw Error("not a safetensors file: header length " + std::to_string(headerLength) + " exceeds the file size " +
                    std::to_string(fileSize),
                path);
  std::string header(headerLength, '\0');
  in.read(header.data(), std::streamsize(headerLength));
  uint64_t dataStart = 8 + headerLength, dataSize = fileSize - dataStart;

  json::Document doc(std::string_view(header), path);
  json::Reader r(path);
  std::string absolute = fs::absolute(path).lexically_normal().string();
  OrderedMap<ConstantTensor> out;
  for (auto entry : r.object(doc.root())) {
    if (entry.key == "__metadata__") continue;
    json::Reader::KeyScope scope(r, entry.key);
    json::Object o = r.object(entry.value);
    auto field = [&](const char *name) {
      auto v = o.at_key(name);
      if (v.error()) r.fail(std::string("missing required field '") + name + "' of a safetensors entry");
      return v.value_unsafe();
    };
    ConstantTensor c;
    std::string dtype;
    {
      json::Reader::KeyScope s(r, "dtype");
      dtype = std::string(r.string(field("dtype")));
      c.dtype = ScalarType::Undefined;
      for (const auto &d : kDtypes)
        if (dtype == d.name) c.dtype = d.type;
      if (c.dtype == ScalarType::Undefined) r.fail("unsupported safetensors dtype '" + dtype + "'");
    }
    uint64_t numel = 1;
    {
      json::Reader::KeyScope s(r, "shape");
      for (auto dim : r.array(field("shape"))) {
        int64_t d = r.integer(dim);
        if (d < 0 || (d > 0 && numel > UINT64_MAX / uint64_t(d))) r.fail("invalid shape");
        c.sizes.push_back(d);
        numel *= uint64_t(d);
      }
    }
    int64_t stride = 1;
    c.strides.assign(c.sizes.size(), 0);
    for (size_t i = c.sizes.size(); i-- > 0;) {
      c.strides[i] = stride;
      stride *= std::max<int64_t>(c.sizes[i], 1);
    }
    std::vector<uint64_t> range;
    {
      json::Reader::KeyScope s(r, "data_offsets");
      for (auto v : r.array(field("data_offsets"))) range.push_back(uint64_t(r.integer(v)));
      if (range.size() != 2 || range[0] > range[1] || range[1] > dataSize)
        r.fail("data_offsets must be [begin, end] within the " + std::to_string(dataSize) + " data bytes");
      uint64_t elem = elementSize(c.dtype);
      if (numel > UINT64_MAX / elem || range[1] - range[0] != numel * elem)
        r.fail("data_offsets hold " + std::to_string(range[1] - range[0]) + " bytes but " + dtype + " of this shape needs " +
               std::to_string(numel * elem));
    }
    c.data.file = absolute;
    c.data.offset = dataStart + range[0];
    c.data.length = range[1] - range[0];
    c.data.fileSize = fileSize;
    c.data.crc32 = crcOfRange(in, c.data.offset, c.data.length, path);
    out.set(std::string(entry.key), std::move(c));
  }
  return out;
}

} // namespace exir
