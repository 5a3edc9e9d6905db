//===- Pte/PteWriter.cpp - Serialize a pte::Program to .pte bytes -------===//
//
// Two phases. First the layout is planned from payload sizes alone: the
// constant segment (tensors padded to the constant alignment, the last one
// unpadded), the mutable-data segment, delegate blobs (deduplicated by bytes)
// and named-data blobs, each segment placed at the next multiple of its
// alignment. Then the flatbuffer is built with the generated builders, the
// `eh00` header is spliced in after the identifier when any segment holds
// bytes, and the segments are streamed after it.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteWriter.h"

#include "Pte/SegmentSink.h"
#include "Support/CheckedMath.h"
#include "Support/Error.h"

#include "program_generated.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace exir::pte {
namespace {

namespace fb = executorch_flatbuffer;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr uint32_t kExtendedHeaderLength = 32;

uint64_t roundUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

// Padding to an alignment is written (or held in memory) byte for byte: a
// flag of 2^40 would make exir-emit write a terabyte. Pages are at most 1 GiB.
constexpr uint64_t kMaxAlignment = uint64_t(1) << 30;

void checkAlignment(const char *what, uint64_t value) {
  if (!isPowerOfTwo(value))
    throw Error(std::string(what) + " must be a power of two, got " + std::to_string(value));
  if (value > kMaxAlignment)
    throw Error(std::string(what) + " " + std::to_string(value) + " exceeds the limit of " +
                std::to_string(kMaxAlignment) + " (1 GiB)");
}

//===----------------------------------------------------------------------===//
// Layout planning
//===----------------------------------------------------------------------===//

/// One blob placed at `offset` inside a segment.
struct SegmentPiece {
  uint64_t offset = 0;
  const BlobSource *blob = nullptr;
};

struct PlannedSegment {
  std::vector<SegmentPiece> pieces;
  uint64_t size = 0;      // bytes without trailing padding
  uint64_t alignment = 1; // segment-specific alignment (lcm with the segment alignment)
  uint64_t offset = 0;    // relative to segment_base_offset, filled by placement
};

/// Identity of blob contents for deduplication.
using BlobKey = std::pair<uint64_t, std::string>;
BlobKey blobKey(const BlobSource &blob) { return {blob.size(), blob.sha256Hex()}; }

struct Layout {
  std::vector<PlannedSegment> segments;
  SubsegmentOffsets constantSegment;
  std::optional<SubsegmentOffsets> mutableSegment;
  std::vector<const BlobSource *> inlineDelegateData;
  /// [plan][delegate] -> where its blob goes.
  std::vector<std::vector<BackendDelegateDataReference>> delegateRefs;
  /// named data entry -> segment index.
  std::vector<uint32_t> namedDataSegments;
  uint64_t segmentDataSize = 0; // end of the last segment
  uint64_t segmentBytes = 0;    // sum of segment sizes (0 -> no extended header)
};

/// Packs `blobs` into one segment; each blob but the last is padded to `alignment`.
PlannedSegment packSegment(const std::vector<BlobSource> &blobs, uint64_t alignment,
                           std::vector<uint64_t> &offsets) {
  PlannedSegment segment;
  uint64_t end = 0;
  for (size_t i = 0; i < blobs.size(); ++i) {
    uint64_t start = i == 0 ? 0 : roundUp(end, alignment);
    offsets.push_back(start);
    segment.pieces.push_back({start, &blobs[i]});
    end = start + blobs[i].size();
  }
  segment.size = end;
  return segment;
}

void checkPlaceholder(const std::vector<BlobSource> &list, const char *what) {
  if (!list.empty() && !list[0].empty())
    throw Error(std::string(what) + "[0] is the reserved placeholder and must be empty, it has " +
                std::to_string(list[0].size()) + " bytes");
}

/// Checks that tensors index existing constant / mutable entries, so a bad
/// model fails here rather than at method load.
void checkTensorIndices(const Program &program, size_t numConstants, size_t numMutable) {
  for (size_t p = 0; p < program.executionPlan.size(); ++p) {
    const auto &values = program.executionPlan[p].values;
    for (size_t v = 0; v < values.size(); ++v) {
      const auto *tensor = std::get_if<Tensor>(&values[v]);
      if (!tensor || tensor->dataBufferIdx == 0) continue;
      if (tensor->extraTensorInfo && tensor->extraTensorInfo->location == TensorDataLocation::External)
        continue; // data_buffer_idx is ignored for external data
      bool planned = tensor->allocationInfo.has_value();
      size_t limit = planned ? numMutable : numConstants;
      if (tensor->dataBufferIdx >= limit)
        throw Error("data_buffer_idx " + std::to_string(tensor->dataBufferIdx) + " is out of range: the " +
                        (planned ? "mutable-data" : "constant") + " list has " + std::to_string(limit) +
                        " entries (index 0 is the placeholder)",
                    {}, "execution_plan[" + std::to_string(p) + "].values[" + std::to_string(v) + "]");
    }
  }
}

Layout planLayout(const Program &program, const std::vector<BlobSource> &constants,
                  const WriteOptions &options) {
  Layout layout;

  // 1. Constant segment: always present (at least the placeholder).
  layout.constantSegment.segmentIndex = 0;
  layout.segments.push_back(packSegment(constants, options.constantAlignment,
                                        layout.constantSegment.offsets));

  // 2. Mutable data: only when there is more than the placeholder; no padding.
  if (program.mutableData.size() > 1) {
    SubsegmentOffsets mutableOffsets;
    mutableOffsets.segmentIndex = uint32_t(layout.segments.size());
    layout.segments.push_back(packSegment(program.mutableData, 1, mutableOffsets.offsets));
    layout.mutableSegment = std::move(mutableOffsets);
  }

  // 3. Delegate blobs: non-empty ones become segments unless kept inline; equal
  // bytes share one segment / inline entry.
  std::map<BlobKey, uint32_t> segmentByContent, inlineByContent;
  for (const auto &plan : program.executionPlan) {
    auto &refs = layout.delegateRefs.emplace_back();
    for (const auto &delegate : plan.delegates) {
      const BlobSource &blob = delegate.processedData;
      BlobKey key = blobKey(blob);
      if (options.inlineDelegates || blob.empty()) {
        auto [it, inserted] = inlineByContent.emplace(key, uint32_t(layout.inlineDelegateData.size()));
        if (inserted) layout.inlineDelegateData.push_back(&blob);
        refs.push_back({DataLocation::Inline, it->second});
      } else {
        auto [it, inserted] = segmentByContent.emplace(key, uint32_t(layout.segments.size()));
        if (inserted) {
          PlannedSegment segment;
          segment.pieces.push_back({0, &blob});
          segment.size = blob.size();
          layout.segments.push_back(std::move(segment));
        }
        refs.push_back({DataLocation::Segment, it->second});
      }
    }
  }

  // 4. Named data: one segment per distinct blob, aligned to the largest
  // alignment any of its keys asks for.
  if (program.namedData) {
    std::map<BlobKey, uint32_t> namedByContent;
    std::map<std::string, size_t> seenKeys;
    for (size_t i = 0; i < program.namedData->size(); ++i) {
      const NamedData &entry = (*program.namedData)[i];
      std::string where = "named_data[" + std::to_string(i) + "]";
      if (!isPowerOfTwo(entry.alignment) || entry.alignment > kMaxAlignment)
        throw Error("alignment of named data '" + entry.key + "' must be a power of two up to 2^30, got " +
                        std::to_string(entry.alignment),
                    {}, where);
      if (!seenKeys.emplace(entry.key, i).second)
        throw Error("duplicate named data key '" + entry.key + "'", {}, where);
      auto [it, inserted] = namedByContent.emplace(blobKey(entry.data), uint32_t(layout.segments.size()));
      if (inserted) {
        PlannedSegment segment;
        segment.pieces.push_back({0, &entry.data});
        segment.size = entry.data.size();
        layout.segments.push_back(std::move(segment));
      }
      PlannedSegment &segment = layout.segments[it->second];
      segment.alignment = std::max(segment.alignment, entry.alignment);
      layout.namedDataSegments.push_back(it->second);
    }
  }

  // Placement: each segment starts at the next multiple of
  // lcm(segment alignment, its own alignment); both are powers of two.
  uint64_t end = 0;
  for (auto &segment : layout.segments) {
    segment.offset = roundUp(end, std::max(options.segmentAlignment, segment.alignment));
    end = segment.offset + segment.size;
    layout.segmentBytes += segment.size;
  }
  layout.segmentDataSize = end;
  return layout;
}

//===----------------------------------------------------------------------===//
// Flatbuffer construction
//===----------------------------------------------------------------------===//

template <typename T> Offset<flatbuffers::Vector<T>> vec(FlatBufferBuilder &fbb, const std::vector<T> &items) {
  return fbb.CreateVector(items);
}

Offset<flatbuffers::Vector<uint8_t>> bytesVector(FlatBufferBuilder &fbb, std::string_view bytes,
                                                 uint64_t alignment) {
  // What ForceVectorAlignment does, minus its assertion that the alignment is
  // at most FLATBUFFERS_MAX_ALIGNMENT (32): upstream allows larger delegate
  // alignments, and Finish() pads the whole buffer to the largest one used.
  fbb.PreAlign(bytes.size(), alignment);
  return fbb.CreateVector(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
}

Offset<fb::Tensor> buildTensor(FlatBufferBuilder &fbb, const Tensor &t) {
  auto sizes = vec(fbb, t.sizes);
  auto dimOrder = vec(fbb, t.dimOrder);
  Offset<fb::AllocationDetails> allocation = 0;
  if (t.allocationInfo)
    allocation = fb::CreateAllocationDetails(fbb, t.allocationInfo->memoryId, t.allocationInfo->memoryOffsetLow,
                                             t.allocationInfo->memoryOffsetHigh);
  Offset<fb::ExtraTensorInfo> extra = 0;
  if (t.extraTensorInfo) {
    const auto &e = *t.extraTensorInfo;
    Offset<flatbuffers::String> fqn = 0;
    if (e.fullyQualifiedName) fqn = fbb.CreateString(*e.fullyQualifiedName);
    extra = fb::CreateExtraTensorInfo(fbb, e.mutableDataSegmentsIdx, fqn, fb::TensorDataLocation(e.location),
                                      fb::DeviceType(e.deviceType), e.deviceIndex);
  }
  return fb::CreateTensor(fbb, fb::ScalarType(t.scalarType), t.storageOffset, sizes, dimOrder, t.requiresGrad,
                          t.dataBufferIdx, allocation, t.layout, fb::TensorShapeDynamism(t.shapeDynamism), extra);
}

Offset<fb::EValue> buildEValue(FlatBufferBuilder &fbb, const EValue &value) {
  auto type = fb::KernelTypes(value.index());
  Offset<void> payload = std::visit(
      [&](const auto &v) -> Offset<void> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return 0;
        else if constexpr (std::is_same_v<T, Null>) return fb::CreateNull(fbb).Union();
        else if constexpr (std::is_same_v<T, Int>) return fb::CreateInt(fbb, v.intVal).Union();
        else if constexpr (std::is_same_v<T, Bool>) return fb::CreateBool(fbb, v.boolVal).Union();
        else if constexpr (std::is_same_v<T, Double>) return fb::CreateDouble(fbb, v.doubleVal).Union();
        else if constexpr (std::is_same_v<T, Tensor>) return buildTensor(fbb, v).Union();
        else if constexpr (std::is_same_v<T, String>)
          return fb::CreateString(fbb, fbb.CreateString(v.stringVal)).Union();
        else if constexpr (std::is_same_v<T, IntList>) return fb::CreateIntList(fbb, vec(fbb, v.items)).Union();
        else if constexpr (std::is_same_v<T, DoubleList>)
          return fb::CreateDoubleList(fbb, vec(fbb, v.items)).Union();
        else if constexpr (std::is_same_v<T, BoolList>) {
          std::vector<uint8_t> items(v.items.begin(), v.items.end());
          return fb::CreateBoolList(fbb, vec(fbb, items)).Union();
        } else if constexpr (std::is_same_v<T, TensorList>)
          return fb::CreateTensorList(fbb, vec(fbb, v.items)).Union();
        else
          return fb::CreateOptionalTensorList(fbb, vec(fbb, v.items)).Union();
      },
      value);
  return fb::CreateEValue(fbb, type, payload);
}

Offset<fb::Instruction> buildInstruction(FlatBufferBuilder &fbb, const Instruction &instruction) {
  auto type = fb::InstructionArguments(instruction.index());
  Offset<void> payload = std::visit(
      [&](const auto &v) -> Offset<void> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return 0;
        else if constexpr (std::is_same_v<T, KernelCall>)
          return fb::CreateKernelCall(fbb, v.opIndex, vec(fbb, v.args)).Union();
        else if constexpr (std::is_same_v<T, DelegateCall>)
          return fb::CreateDelegateCall(fbb, v.delegateIndex, vec(fbb, v.args)).Union();
        else if constexpr (std::is_same_v<T, MoveCall>) return fb::CreateMoveCall(fbb, v.moveFrom, v.moveTo).Union();
        else if constexpr (std::is_same_v<T, JumpFalseCall>)
          return fb::CreateJumpFalseCall(fbb, v.condValueIndex, v.destinationInstruction).Union();
        else
          return fb::CreateFreeCall(fbb, v.valueIndex).Union();
      },
      instruction);
  return fb::CreateInstruction(fbb, type, payload);
}

Offset<fb::Chain> buildChain(FlatBufferBuilder &fbb, const Chain &chain) {
  auto inputs = vec(fbb, chain.inputs);
  auto outputs = vec(fbb, chain.outputs);
  std::vector<Offset<fb::Instruction>> instructions;
  for (const auto &instruction : chain.instructions) instructions.push_back(buildInstruction(fbb, instruction));
  auto instructionsVec = fbb.CreateVector(instructions);
  Offset<flatbuffers::Vector<Offset<fb::FrameList>>> stacktrace = 0;
  if (chain.stacktrace) {
    std::vector<Offset<fb::FrameList>> lists;
    for (const auto &list : *chain.stacktrace) {
      std::vector<Offset<fb::Frame>> frames;
      for (const auto &frame : list.items)
        frames.push_back(fb::CreateFrame(fbb, fbb.CreateString(frame.filename), frame.lineno,
                                         fbb.CreateString(frame.name), fbb.CreateString(frame.context)));
      lists.push_back(fb::CreateFrameList(fbb, fbb.CreateVector(frames)));
    }
    stacktrace = fbb.CreateVector(lists);
  }
  return fb::CreateChain(fbb, inputs, outputs, instructionsVec, stacktrace);
}

Offset<fb::ExecutionPlan> buildPlan(FlatBufferBuilder &fbb, const ExecutionPlan &plan,
                                    const std::vector<BackendDelegateDataReference> &delegateRefs) {
  auto name = fbb.CreateString(plan.name);
  Offset<fb::ContainerMetadata> meta = 0;
  if (plan.containerMetaType)
    meta = fb::CreateContainerMetadata(fbb, fbb.CreateString(plan.containerMetaType->encodedInpStr),
                                       fbb.CreateString(plan.containerMetaType->encodedOutStr));
  std::vector<Offset<fb::EValue>> values;
  values.reserve(plan.values.size());
  for (const auto &value : plan.values) values.push_back(buildEValue(fbb, value));
  auto valuesVec = fbb.CreateVector(values);
  auto inputs = vec(fbb, plan.inputs);
  auto outputs = vec(fbb, plan.outputs);
  std::vector<Offset<fb::Chain>> chains;
  for (const auto &chain : plan.chains) chains.push_back(buildChain(fbb, chain));
  auto chainsVec = fbb.CreateVector(chains);
  std::vector<Offset<fb::Operator>> operators;
  for (const auto &op : plan.operators)
    operators.push_back(fb::CreateOperator(fbb, fbb.CreateString(op.name), fbb.CreateString(op.overload)));
  auto operatorsVec = fbb.CreateVector(operators);
  std::vector<Offset<fb::BackendDelegate>> delegates;
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const auto &delegate = plan.delegates[d];
    auto id = fbb.CreateString(delegate.id);
    auto processed = fb::CreateBackendDelegateDataReference(fbb, fb::DataLocation(delegateRefs[d].location),
                                                            delegateRefs[d].index);
    std::vector<Offset<fb::CompileSpec>> specs;
    for (const auto &spec : delegate.compileSpecs)
      specs.push_back(fb::CreateCompileSpec(
          fbb, fbb.CreateString(spec.key),
          fbb.CreateVector(reinterpret_cast<const uint8_t *>(spec.value.data()), spec.value.size())));
    delegates.push_back(fb::CreateBackendDelegate(fbb, id, processed, fbb.CreateVector(specs)));
  }
  auto delegatesVec = fbb.CreateVector(delegates);
  auto bufferSizes = vec(fbb, plan.nonConstBufferSizes);
  Offset<flatbuffers::Vector<Offset<fb::NonConstBufferDevice>>> devices = 0;
  if (plan.nonConstBufferDevice) {
    std::vector<Offset<fb::NonConstBufferDevice>> entries;
    for (const auto &device : *plan.nonConstBufferDevice)
      entries.push_back(fb::CreateNonConstBufferDevice(fbb, device.bufferIdx, fb::DeviceType(device.deviceType),
                                                       device.deviceIndex));
    devices = fbb.CreateVector(entries);
  }
  return fb::CreateExecutionPlan(fbb, name, meta, valuesVec, inputs, outputs, chainsVec, operatorsVec, delegatesVec,
                                 bufferSizes, devices);
}

Offset<fb::SubsegmentOffsets> buildSubsegment(FlatBufferBuilder &fbb, const SubsegmentOffsets &s) {
  return fb::CreateSubsegmentOffsets(fbb, s.segmentIndex, vec(fbb, s.offsets));
}

void buildProgram(FlatBufferBuilder &fbb, const Program &program, const Layout &layout,
                  const WriteOptions &options) {
  std::vector<Offset<fb::ExecutionPlan>> plans;
  for (size_t p = 0; p < program.executionPlan.size(); ++p)
    plans.push_back(buildPlan(fbb, program.executionPlan[p], layout.delegateRefs[p]));
  auto plansVec = fbb.CreateVector(plans);

  // The deprecated inline constant storage is always written empty.
  auto constantBuffer = fbb.CreateVector(std::vector<Offset<fb::Buffer>>{});

  std::vector<Offset<fb::BackendDelegateInlineData>> inlineData;
  for (const BlobSource *blob : layout.inlineDelegateData) {
    std::string bytes = blob->bytes();
    inlineData.push_back(
        fb::CreateBackendDelegateInlineData(fbb, bytesVector(fbb, bytes, options.delegateAlignment)));
  }
  auto inlineDataVec = fbb.CreateVector(inlineData);

  std::vector<Offset<fb::DataSegment>> segments;
  for (const auto &segment : layout.segments)
    segments.push_back(fb::CreateDataSegment(fbb, segment.offset, segment.size));
  auto segmentsVec = fbb.CreateVector(segments);

  auto constantSegment = buildSubsegment(fbb, layout.constantSegment);

  Offset<flatbuffers::Vector<Offset<fb::SubsegmentOffsets>>> mutableSegments = 0;
  if (layout.mutableSegment)
    mutableSegments = fbb.CreateVector(std::vector{buildSubsegment(fbb, *layout.mutableSegment)});

  Offset<flatbuffers::Vector<Offset<fb::NamedData>>> namedData = 0;
  if (program.namedData) {
    std::vector<Offset<fb::NamedData>> entries;
    for (size_t i = 0; i < program.namedData->size(); ++i)
      entries.push_back(
          fb::CreateNamedData(fbb, fbb.CreateString((*program.namedData)[i].key), layout.namedDataSegments[i]));
    namedData = fbb.CreateVector(entries);
  }

  auto root = fb::CreateProgram(fbb, program.version, plansVec, constantBuffer, inlineDataVec, segmentsVec,
                                constantSegment, mutableSegments, namedData);
  fb::FinishProgramBuffer(fbb, root);
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

/// About the size of the program's flatbuffer (a little more for plain
/// graphs): a builder that starts small doubles its buffer ~15 times for a
/// 100k-node program, copying it each time and touching twice the memory.
/// Space the builder does not use is never touched.
size_t flatbufferSizeHint(const Program &program) {
  size_t bytes = 4096;
  for (const auto &plan : program.executionPlan) {
    bytes += 80 * plan.values.size();
    for (const auto &chain : plan.chains) bytes += 48 * chain.instructions.size();
  }
  return bytes;
}

void writeZeros(std::ostream &out, uint64_t count) {
  static const char zeros[4096] = {};
  while (count > 0) {
    uint64_t n = std::min<uint64_t>(count, sizeof(zeros));
    out.write(zeros, std::streamsize(n));
    count -= n;
  }
}

void putLE(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(char((value >> (8 * i)) & 0xFF));
}

} // namespace

void writePte(const Program &program, const WriteOptions &options, std::ostream &out) {
  ScopedFileCache files; // one open per weights file, not per constant
  checkAlignment("segment alignment", options.segmentAlignment);
  checkAlignment("constant tensor alignment", options.constantAlignment);
  checkAlignment("delegate alignment", options.delegateAlignment);
  checkPlaceholder(program.constants, "constants");
  checkPlaceholder(program.mutableData, "mutable data");

  // An empty constant list still gets its reserved placeholder. (Not a copy
  // of the list: 100k constants are 100k path strings.)
  std::vector<BlobSource> placeholderOnly;
  if (program.constants.empty()) placeholderOnly.emplace_back();
  const std::vector<BlobSource> &constants = program.constants.empty() ? placeholderOnly : program.constants;
  checkTensorIndices(program, constants.size(), program.mutableData.size());

  Layout layout = planLayout(program, constants, options);

  FlatBufferBuilder fbb(flatbufferSizeHint(program));
  buildProgram(fbb, program, layout, options);
  const char *flatbuffer = reinterpret_cast<const char *>(fbb.GetBufferPointer());
  uint64_t flatbufferSize = fbb.GetSize();

  if (layout.segmentBytes == 0) {
    // Nothing to put after the flatbuffer: a plain flatbuffer, no header.
    out.write(flatbuffer, std::streamsize(flatbufferSize));
  } else {
    // The header is inserted after byte 8; its padded length is a multiple of
    // the largest alignment inside the flatbuffer, so every internal alignment
    // still holds after the shift.
    uint64_t maxAlignment = std::max<uint64_t>({16, options.constantAlignment, options.delegateAlignment,
                                                fbb.GetBufferMinAlignment()});
    uint64_t paddedHeaderLength = roundUp(kExtendedHeaderLength, maxAlignment);
    uint64_t programSize = paddedHeaderLength + flatbufferSize;
    uint64_t segmentBaseOffset = roundUp(programSize, options.segmentAlignment);

    uint32_t rootOffset = flatbuffers::ReadScalar<uint32_t>(flatbuffer);
    std::string head;
    putLE(head, rootOffset + paddedHeaderLength, 4);
    head.append(flatbuffer + 4, 4); // file identifier
    head.append("eh00");
    putLE(head, kExtendedHeaderLength, 4);
    putLE(head, programSize, 8);
    putLE(head, segmentBaseOffset, 8);
    putLE(head, layout.segmentDataSize, 8);
    head.resize(8 + paddedHeaderLength, '\0');
    out.write(head.data(), std::streamsize(head.size()));
    out.write(flatbuffer + 8, std::streamsize(flatbufferSize - 8));
    writeZeros(out, segmentBaseOffset - programSize);

    std::vector<PlacedBlob> placed; // relative to segmentBaseOffset
    for (const auto &segment : layout.segments)
      for (const auto &piece : segment.pieces) placed.push_back({segment.offset + piece.offset, piece.blob});
    writeSegmentData(out, layout.segmentDataSize, placed,
                     {options.sparse, options.progress, options.threads});
  }
  if (!out) throw Error("failed to write the .pte output");
}

std::string writePteToString(const Program &program, const WriteOptions &options) {
  std::ostringstream out;
  writePte(program, options, out);
  return std::move(out).str();
}

} // namespace exir::pte
