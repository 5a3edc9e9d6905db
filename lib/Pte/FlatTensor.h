//===- Pte/FlatTensor.h - FlatTensor data files (.ptd) --------*- C++ -*-===//
//
// The .ptd format ExecuTorch loads as a NamedDataMap (schema/flat_tensor.fbs):
//
//   [0, 8)    flatbuffer root offset + identifier "FT01"
//   [8, 48)   header "FH01": length 40, flatbuffer offset (the padded header
//             length, 48), flatbuffer size, segment base offset, segment data
//             size (little-endian, 64-bit), padded to 16 bytes
//   ...       the rest of the flatbuffer, zero padding to the segment alignment
//   segments  one per distinct blob, each at a multiple of lcm(segment
//             alignment, blob alignment) from the segment base offset
//
// Keys keep the writer's order; keys with the same bytes share a segment.
// Blobs are BlobSources, so writing streams file ranges and reading loads only
// the header and the flatbuffer.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace exir::ptd {

struct TensorLayout {
  ScalarType scalarType = ScalarType::Float;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dimOrder;
  bool operator==(const TensorLayout &) const = default;
};

struct NamedData {
  std::string key;
  std::optional<TensorLayout> tensorLayout;
  /// Content: the bytes, and the alignment the writer gives them (power of two).
  pte::BlobSource data;
  uint64_t alignment = 16;
  /// Layout: the segment holding the bytes in a file that was read.
  uint32_t segmentIndex = 0;
};

/// The FH01 header as read.
struct Header {
  uint32_t length = 0;
  uint64_t flatbufferOffset = 0;
  uint64_t flatbufferSize = 0;
  uint64_t segmentBaseOffset = 0;
  uint64_t segmentDataSize = 0;
};

struct File {
  uint32_t version = 0;
  std::vector<NamedData> namedData;
  // Filled by readPtd; writePtd computes its own layout.
  std::optional<Header> header;
  std::vector<pte::DataSegment> segments;
  uint64_t fileSize = 0;
};

struct WriteOptions {
  uint64_t segmentAlignment = 128; // power of two
  bool sparse = false;             // see pte::WriteOptions::sparse
  unsigned threads = 0;            // see pte::WriteOptions::threads
  std::function<void(uint64_t written, uint64_t total)> progress;
};

/// Writes `file` as a .ptd. Throws exir::Error for a duplicate key, an
/// alignment that is not a power of two, or a blob that cannot be read.
void writePtd(const File &file, const WriteOptions &options, std::ostream &out);
std::string writePtdToString(const File &file, const WriteOptions &options = {});

/// True when `head` (the first 8 or more bytes of a file) carries "FT01".
bool looksLikePtd(std::string_view head);

/// Reads the header and flatbuffer of the .ptd at `path`; each entry's data is a
/// range of the file. Throws exir::Error naming the file for a bad header, a
/// flatbuffer that does not verify, or a segment outside the file.
File readPtd(const std::string &path);

/// Resolves every EXTERNAL tensor of `program` in `file` as the runtime does at
/// Method::load: the FQN is a key, and its layout (dtype, sizes, dim order)
/// and byte size match the tensor's. Returns how many tensors were resolved;
/// throws exir::Error naming the first tensor that is not.
size_t checkExternalTensors(const pte::Program &program, const File &file);

/// Human-readable listing: header, segments, and each key with its layout.
void dumpPtdText(const File &file, std::ostream &os);

} // namespace exir::ptd
