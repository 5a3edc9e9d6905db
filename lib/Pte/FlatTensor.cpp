//===- Pte/FlatTensor.cpp - FlatTensor data files (.ptd) -----------------===//
#include "Pte/FlatTensor.h"

#include "Pte/DistinctBlobs.h"
#include "Pte/SegmentSink.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include "flat_tensor_generated.h"

#include <map>
#include <sstream>

namespace exir::ptd {
namespace {

namespace fb = flat_tensor_flatbuffer;
using flatbuffers::Offset;

constexpr uint32_t kHeaderLength = 40;      // magic, length, four uint64 fields
constexpr uint64_t kPaddedHeaderLength = 48; // padded to the flatbuffer alignment (16)
constexpr uint64_t kHeaderOffset = 8;        // after the root offset and identifier

uint64_t roundUp(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

void putLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((value >> (8 * i)) & 0xFF));
}
uint64_t getLE(std::string_view bytes, size_t at, int count) {
  uint64_t v = 0;
  for (int i = 0; i < count; ++i) v |= uint64_t(uint8_t(bytes[at + i])) << (8 * i);
  return v;
}

} // namespace

void writePtd(const File &file, const WriteOptions &options, std::ostream &out) {
  pte::ScopedFileCache files; // one open per weights file, not per constant
  if (!isPowerOfTwo(options.segmentAlignment))
    throw Error("segment alignment must be a power of two, got " + std::to_string(options.segmentAlignment));
  if (options.segmentAlignment > kMaxAlignment)
    throw Error("segment alignment " + std::to_string(options.segmentAlignment) + " exceeds the limit of " +
                std::to_string(kMaxAlignment) + " (1 GiB)");

  // Layout: one segment per distinct blob, aligned to lcm(segment alignment,
  // the largest alignment any of its keys asks for); both are powers of two.
  pte::DistinctBlobs distinct;
  std::vector<uint64_t> segmentAlignment;
  std::vector<uint32_t> segmentOfEntry;
  std::map<std::string, size_t> seenKeys;
  for (size_t i = 0; i < file.namedData.size(); ++i) {
    const NamedData &entry = file.namedData[i];
    if (!seenKeys.emplace(entry.key, i).second) throw Error("duplicate key '" + entry.key + "' in the .ptd");
    if (!isPowerOfTwo(entry.alignment) || entry.alignment > kMaxAlignment)
      throw Error("alignment of '" + entry.key + "' must be a power of two up to 2^30, got " +
                  std::to_string(entry.alignment));
    size_t segment = distinct.add(entry.data);
    if (segment == segmentAlignment.size()) segmentAlignment.push_back(1);
    segmentAlignment[segment] = std::max(segmentAlignment[segment], entry.alignment);
    segmentOfEntry.push_back(uint32_t(segment));
  }
  std::vector<pte::DataSegment> segments;
  uint64_t end = 0;
  for (size_t s = 0; s < distinct.size(); ++s) {
    uint64_t offset = roundUp(end, std::max(options.segmentAlignment, segmentAlignment[s]));
    segments.push_back({offset, distinct.blobs()[s].size()});
    end = offset + distinct.blobs()[s].size();
  }
  uint64_t segmentDataSize = end;

  flatbuffers::FlatBufferBuilder fbb(1024);
  std::vector<Offset<fb::DataSegment>> segmentTables;
  for (const auto &segment : segments) segmentTables.push_back(fb::CreateDataSegment(fbb, segment.offset, segment.size));
  auto segmentsVec = fbb.CreateVector(segmentTables);
  std::vector<Offset<fb::NamedData>> entries;
  for (size_t i = 0; i < file.namedData.size(); ++i) {
    const NamedData &entry = file.namedData[i];
    Offset<fb::TensorLayout> layout = 0;
    if (entry.tensorLayout)
      layout = fb::CreateTensorLayout(fbb, executorch_flatbuffer::ScalarType(entry.tensorLayout->scalarType),
                                      fbb.CreateVector(entry.tensorLayout->sizes),
                                      fbb.CreateVector(entry.tensorLayout->dimOrder));
    entries.push_back(fb::CreateNamedData(fbb, fbb.CreateString(entry.key), segmentOfEntry[i], layout));
  }
  auto namedDataVec = fbb.CreateVector(entries);
  fb::FinishFlatTensorBuffer(fbb, fb::CreateFlatTensor(fbb, file.version, segmentsVec, namedDataVec));
  const char *flatbuffer = reinterpret_cast<const char *>(fbb.GetBufferPointer());
  uint64_t flatbufferSize = fbb.GetSize();
  if (fbb.GetBufferMinAlignment() > kPaddedHeaderLength)
    throw InternalError("FlatTensor flatbuffer alignment exceeds the header padding");

  // The header goes in after the identifier; the root offset grows by its
  // padded length, so the flatbuffer still parses from byte 0.
  uint64_t segmentBaseOffset = roundUp(kPaddedHeaderLength + flatbufferSize, options.segmentAlignment);
  std::string head;
  putLE(head, flatbuffers::ReadScalar<uint32_t>(flatbuffer) + kPaddedHeaderLength, 4);
  head.append(flatbuffer + 4, 4);
  head.append("FH01");
  putLE(head, kHeaderLength, 4);
  putLE(head, kPaddedHeaderLength, 8);
  putLE(head, flatbufferSize, 8);
  putLE(head, segmentBaseOffset, 8);
  putLE(head, segmentDataSize, 8);
  head.resize(kHeaderOffset + kPaddedHeaderLength, '\0');
  out.write(head.data(), std::streamsize(head.size()));
  out.write(flatbuffer + 8, std::streamsize(flatbufferSize - 8));

  // Placed from the end of the flatbuffer: the padding up to the segment base comes first.
  uint64_t lead = segmentBaseOffset - (kPaddedHeaderLength + flatbufferSize);
  std::vector<pte::PlacedBlob> placed;
  for (size_t s = 0; s < segments.size(); ++s) placed.push_back({lead + segments[s].offset, &distinct.blobs()[s]});
  pte::writeSegmentData(out, lead + segmentDataSize, placed, {options.sparse, options.progress, options.threads});
  if (!out) throw Error("failed to write the .ptd output");
}

std::string writePtdToString(const File &file, const WriteOptions &options) {
  std::ostringstream out;
  writePtd(file, options, out);
  return std::move(out).str();
}

bool looksLikePtd(std::string_view head) { return head.size() >= 8 && head.substr(4, 4) == "FT01"; }

File readPtd(const std::string &path) {
  File file;
  file.fileSize = fileSize(path);
  if (file.fileSize < kHeaderOffset + kHeaderLength)
    throw Error("file of " + std::to_string(file.fileSize) + " bytes is too short for a .ptd", path);
  std::string head = readFileRange(path, 0, kHeaderOffset + kHeaderLength);
  if (!looksLikePtd(head)) throw Error("not a FlatTensor file (no 'FT01' identifier at byte 4)", path);
  if (head.compare(kHeaderOffset, 4, "FH01") != 0) throw Error("missing the 'FH01' header at byte 8", path);
  Header h;
  h.length = uint32_t(getLE(head, 12, 4));
  if (h.length < kHeaderLength)
    throw Error("FH01 header length " + std::to_string(h.length) + " < " + std::to_string(kHeaderLength), path);
  h.flatbufferOffset = getLE(head, 16, 8);
  h.flatbufferSize = getLE(head, 24, 8);
  h.segmentBaseOffset = getLE(head, 32, 8);
  h.segmentDataSize = getLE(head, 40, 8);
  uint64_t flatbufferEnd = h.flatbufferOffset + h.flatbufferSize;
  if (h.flatbufferOffset < kHeaderOffset + kHeaderLength || flatbufferEnd < h.flatbufferOffset ||
      flatbufferEnd > file.fileSize || h.flatbufferSize > (uint64_t(1) << 31))
    throw Error("flatbuffer [" + std::to_string(h.flatbufferOffset) + ", +" + std::to_string(h.flatbufferSize) +
                    ") lies outside the file (" + std::to_string(file.fileSize) + " bytes)",
                path);
  if (h.segmentBaseOffset > file.fileSize || h.segmentDataSize > file.fileSize - h.segmentBaseOffset)
    throw Error("segment data [" + std::to_string(h.segmentBaseOffset) + ", +" + std::to_string(h.segmentDataSize) +
                    ") lies past the end of the file (" + std::to_string(file.fileSize) + " bytes)",
                path);
  file.header = h;

  std::string buffer = readFileRange(path, 0, flatbufferEnd);
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t *>(buffer.data()), buffer.size());
  if (!fb::VerifyFlatTensorBuffer(verifier)) throw Error("the FlatTensor flatbuffer does not verify", path);
  const fb::FlatTensor *root = fb::GetFlatTensor(buffer.data());
  file.version = root->version();
  if (root->segments())
    for (const auto *segment : *root->segments()) {
      if (segment->offset() > h.segmentDataSize || segment->size() > h.segmentDataSize - segment->offset())
        throw Error("segment " + std::to_string(file.segments.size()) + " [" + std::to_string(segment->offset()) +
                        ", +" + std::to_string(segment->size()) + ") lies past the segment data (" +
                        std::to_string(h.segmentDataSize) + " bytes)",
                    path);
      file.segments.push_back({segment->offset(), segment->size()});
    }
  if (root->named_data())
    for (const auto *entry : *root->named_data()) {
      NamedData out;
      out.key = entry->key() ? entry->key()->str() : "";
      out.segmentIndex = entry->segment_index();
      if (out.segmentIndex >= file.segments.size())
        throw Error("'" + out.key + "' names segment " + std::to_string(out.segmentIndex) + " of " +
                        std::to_string(file.segments.size()),
                    path);
      if (const auto *layout = entry->tensor_layout()) {
        TensorLayout t;
        t.scalarType = ScalarType(layout->scalar_type());
        if (layout->sizes()) t.sizes.assign(layout->sizes()->begin(), layout->sizes()->end());
        if (layout->dim_order()) t.dimOrder.assign(layout->dim_order()->begin(), layout->dim_order()->end());
        out.tensorLayout = t;
      }
      const pte::DataSegment &segment = file.segments[out.segmentIndex];
      out.data = pte::BlobSource::fromFile(path, h.segmentBaseOffset + segment.offset, segment.size);
      out.alignment = 1;
      file.namedData.push_back(std::move(out));
    }
  return file;
}

size_t checkExternalTensors(const pte::Program &program, const File &file) {
  std::map<std::string, const NamedData *> byKey;
  for (const auto &entry : file.namedData) byKey.emplace(entry.key, &entry);
  size_t resolved = 0;
  for (size_t p = 0; p < program.executionPlan.size(); ++p) {
    const auto &plan = program.executionPlan[p];
    for (size_t v = 0; v < plan.values.size(); ++v) {
      const auto *t = std::get_if<pte::Tensor>(&plan.values[v]);
      if (!t || !t->extraTensorInfo || t->extraTensorInfo->location != pte::TensorDataLocation::External) continue;
      std::string where = "execution_plan[" + std::to_string(p) + "].values[" + std::to_string(v) + "]";
      if (!t->extraTensorInfo->fullyQualifiedName)
        throw Error("external tensor has no fully_qualified_name", {}, where);
      const std::string &fqn = *t->extraTensorInfo->fullyQualifiedName;
      auto it = byKey.find(fqn);
      if (it == byKey.end()) throw Error("external tensor '" + fqn + "' is not in the .ptd", {}, where);
      const NamedData &entry = *it->second;
      if (entry.tensorLayout && !(*entry.tensorLayout == TensorLayout{t->scalarType, t->sizes, t->dimOrder}))
        throw Error("external tensor '" + fqn + "' has another dtype, shape or dim order in the .ptd", {}, where);
      std::optional<uint64_t> nbytes = t->byteSize();
      if (nbytes && entry.data.size() < *nbytes)
        throw Error("external tensor '" + fqn + "' needs " + std::to_string(*nbytes) + " bytes but the .ptd holds " +
                        std::to_string(entry.data.size()),
                    {}, where);
      ++resolved;
    }
  }
  return resolved;
}

void dumpPtdText(const File &file, std::ostream &os) {
  os << "FlatTensor (.ptd) version " << file.version << ", " << file.fileSize << " bytes\n";
  if (file.header)
    os << "header: FH01 length " << file.header->length << ", flatbuffer_offset " << file.header->flatbufferOffset
       << ", flatbuffer_size " << file.header->flatbufferSize << ", segment_base_offset "
       << file.header->segmentBaseOffset << ", segment_data_size " << file.header->segmentDataSize << "\n";
  os << "segments (" << file.segments.size() << "):\n";
  for (size_t i = 0; i < file.segments.size(); ++i)
    os << "  [" << i << "] offset " << file.segments[i].offset << ", size " << file.segments[i].size << "\n";
  os << "named_data (" << file.namedData.size() << "):\n";
  for (const auto &entry : file.namedData) {
    os << "  " << entry.key << ": segment " << entry.segmentIndex;
    if (entry.tensorLayout) {
      const TensorLayout &t = *entry.tensorLayout;
      os << ", " << shortName(t.scalarType) << "[";
      for (size_t i = 0; i < t.sizes.size(); ++i) os << (i ? ", " : "") << t.sizes[i];
      os << "] dim_order=[";
      for (size_t i = 0; i < t.dimOrder.size(); ++i) os << (i ? "," : "") << int(t.dimOrder[i]);
      os << "]";
    }
    os << "\n";
  }
}

} // namespace exir::ptd
