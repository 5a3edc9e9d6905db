//===- Pte/PteModel.h - In-memory model of an ExecuTorch .pte program -*- C++ -*-===//
//
// Plain C++ structs mirroring schema/program.fbs (pte-format.md §1), plus the
// payloads that live outside the flatbuffer tables. The model has two parts:
//
//  * Content: plans, values, instructions, and the payload lists the writer lays
//    out itself: the program-wide constant list, the mutable-data list, each
//    delegate's processed blob and the named-data blobs. Payloads are BlobSources,
//    so a multi-gigabyte weight file is referenced, never loaded.
//  * FileLayout: where things sat in a file that was read (segments, offsets,
//    inline buffers, the extended header). readPte fills it so dumps can show the
//    file exactly; writePte ignores it and computes a fresh layout.
//
// Enum values and union alternatives keep the schema's numbering, so values a
// newer schema might add survive a read -> write round trip unchanged.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace exir::pte {

//===----------------------------------------------------------------------===//
// Payload bytes
//===----------------------------------------------------------------------===//

/// A run of bytes that is either held in memory (possibly a slice of a shared
/// buffer, e.g. the file readPte parsed) or a range of a file on disk that is
/// only read when the bytes are streamed out.
class BlobSource {
public:
  BlobSource() = default;
  static BlobSource fromBytes(std::string bytes);
  static BlobSource fromBuffer(std::shared_ptr<const std::string> buffer, uint64_t offset,
                               uint64_t length);
  static BlobSource fromFile(std::string path, uint64_t offset, uint64_t length);
  /// Bytes made when they are read (a strided constant view gathered from its
  /// storage as the writer streams it, so a program's gathered constants are
  /// never all in memory at once): `produce` feeds all `length` bytes, in
  /// order, to its sink; `part` returns the bytes of one range.
  struct Generator {
    std::function<void(const std::function<void(std::string_view)> &)> produce;
    std::function<std::string(uint64_t offset, uint64_t length)> part;
  };
  static BlobSource fromGenerator(uint64_t length, std::shared_ptr<const Generator> generator);

  uint64_t size() const { return length_; }
  bool empty() const { return length_ == 0; }
  bool isFile() const { return !path_.empty(); }
  /// Held in memory: view() gives the bytes without a copy.
  bool inMemory() const { return !isFile() && !generator_; }
  const std::string &path() const { return path_; }
  /// Offset into the file (file-backed) or into the shared buffer (in memory).
  uint64_t offset() const { return offset_; }

  /// The bytes of an in-memory blob; throws exir::InternalError for a file range.
  std::string_view view() const;
  /// All bytes; reads the file range when file-backed.
  std::string bytes() const;
  /// Feeds consecutive chunks of at most `chunkSize` bytes to `sink`. Throws
  /// exir::Error when a file range cannot be read completely.
  void forEachChunk(const std::function<void(std::string_view)> &sink,
                    size_t chunkSize = size_t(1) << 20) const;
  /// Like forEachChunk, but runs of zero bytes that the file system reports as
  /// holes of a file range (SEEK_HOLE) go to `zeros` as a count, unread. The
  /// CRC-32 check, when there is one, covers the holes as well.
  void forEachExtent(const std::function<void(std::string_view)> &data,
                     const std::function<void(uint64_t)> &zeros, size_t chunkSize = size_t(1) << 20) const;
  /// Up to `length` bytes at `offset` of the blob (fewer at its end), without
  /// the CRC-32 check: a cheap look at part of a large blob.
  std::string readPart(uint64_t offset, uint64_t length) const;
  /// Lower-case hex SHA-256 of the bytes (streamed).
  std::string sha256Hex() const;
  /// True when both hold the same bytes, wherever they live.
  bool sameBytes(const BlobSource &other) const;
  /// A copy whose every complete read of the file range checks the bytes'
  /// CRC-32 against `crc`; a mismatch throws exir::Error "<what>: ..." (the
  /// file was changed after the reference was made).
  BlobSource withExpectedCrc32(uint32_t crc, std::string what) const;
  bool operator==(const BlobSource &other) const { return sameBytes(other); }

private:
  std::shared_ptr<const std::string> buffer_;
  std::shared_ptr<const Generator> generator_;
  std::string path_;
  uint64_t offset_ = 0;
  uint64_t length_ = 0;
  std::optional<uint32_t> expectedCrc_;
  std::string what_; // names the payload in a CRC mismatch
};

/// While one is alive on a thread, BlobSource reads on that thread keep each
/// file open, stat it once and map its holes once (SEEK_DATA / SEEK_HOLE over
/// the whole file), instead of open + stat + lseek + close per blob: a program
/// with 100k constants in one .pt2 made 1M system calls. Nested scopes share
/// the outermost cache. Files are assumed not to change while it lives (the
/// CRC-32 checks still run).
class ScopedFileCache {
public:
  ScopedFileCache();
  ~ScopedFileCache();
  ScopedFileCache(const ScopedFileCache &) = delete;
  ScopedFileCache &operator=(const ScopedFileCache &) = delete;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_; // null for a nested scope
};

//===----------------------------------------------------------------------===//
// Enums (schema numbering)
//===----------------------------------------------------------------------===//

// Tensor.scalar_type uses exir::ScalarType, which has the same numbering.
enum class TensorShapeDynamism : int8_t { Static = 0, DynamicBound = 1, DynamicUnbound = 2 };
enum class TensorDataLocation : int8_t { Segment = 0, External = 1 };
enum class DeviceType : int8_t { Cpu = 0, Cuda = 1 };
enum class DataLocation : int8_t { Inline = 0, Segment = 1 };

/// Schema spellings ("STATIC", "CPU", ...); nullptr for values the schema lacks.
const char *enumName(TensorShapeDynamism v);
const char *enumName(TensorDataLocation v);
const char *enumName(DeviceType v);
const char *enumName(DataLocation v);
/// Schema spelling of a scalar type ("FLOAT", "LONG", ...); nullptr if undeclared.
const char *scalarTypeSchemaName(ScalarType t);

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

struct ContainerMetadata {
  std::string encodedInpStr;
  std::string encodedOutStr;
  bool operator==(const ContainerMetadata &) const = default;
};

struct AllocationDetails {
  uint32_t memoryId = 0; // 1-based arena id
  uint32_t memoryOffsetLow = 0;
  uint32_t memoryOffsetHigh = 0;

  uint64_t offset() const { return uint64_t(memoryOffsetLow) | (uint64_t(memoryOffsetHigh) << 32); }
  static AllocationDetails at(uint32_t memoryId, uint64_t offset) {
    return {memoryId, uint32_t(offset & 0xFFFFFFFFu), uint32_t(offset >> 32)};
  }
  bool operator==(const AllocationDetails &) const = default;
};

struct ExtraTensorInfo {
  uint64_t mutableDataSegmentsIdx = 0;
  std::optional<std::string> fullyQualifiedName;
  TensorDataLocation location = TensorDataLocation::Segment;
  DeviceType deviceType = DeviceType::Cpu;
  int8_t deviceIndex = 0;
  bool operator==(const ExtraTensorInfo &) const = default;
};

// Members ordered to pack (88 bytes): a plan holds one Tensor per tensor
// value, 300k in a 100k-node program.
struct Tensor {
  ScalarType scalarType = ScalarType::Byte;
  bool requiresGrad = false;
  int8_t layout = 0;
  TensorShapeDynamism shapeDynamism = TensorShapeDynamism::Static;
  int32_t storageOffset = 0;
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dimOrder;
  uint32_t dataBufferIdx = 0; // 0 = no serialized data
  std::optional<AllocationDetails> allocationInfo;
  BoxedOptional<ExtraTensorInfo> extraTensorInfo; // IR/IR.h

  /// numel * element size, or nullopt for an unknown dtype, a negative size or overflow.
  std::optional<uint64_t> byteSize() const;
  bool operator==(const Tensor &) const = default;
};

struct Null {
  bool operator==(const Null &) const = default;
};
struct Int {
  int64_t intVal = 0;
  bool operator==(const Int &) const = default;
};
struct Bool {
  bool boolVal = false;
  bool operator==(const Bool &) const = default;
};
struct Double {
  double doubleVal = 0;
  bool operator==(const Double &) const = default;
};
struct String {
  std::string stringVal;
  bool operator==(const String &) const = default;
};
/// Indices of Int values (boxed list), not literal integers.
struct IntList {
  std::vector<int64_t> items;
  bool operator==(const IntList &) const = default;
};
struct DoubleList {
  std::vector<double> items;
  bool operator==(const DoubleList &) const = default;
};
struct BoolList {
  std::vector<bool> items;
  bool operator==(const BoolList &) const = default;
};
/// Indices of Tensor values.
struct TensorList {
  std::vector<int32_t> items;
  bool operator==(const TensorList &) const = default;
};
/// Indices of Tensor values, -1 for None.
struct OptionalTensorList {
  std::vector<int32_t> items;
  bool operator==(const OptionalTensorList &) const = default;
};

/// One EValue. The alternative index equals the KernelTypes union code
/// (monostate = NONE, which the runtime rejects).
using EValue = std::variant<std::monostate, Null, Int, Bool, Double, Tensor, String, IntList,
                            DoubleList, BoolList, TensorList, OptionalTensorList>;
/// Union member name of a KernelTypes code ("Tensor", "IntList", ...; "NONE" for 0).
const char *kernelTypeName(size_t code);

//===----------------------------------------------------------------------===//
// Instructions
//===----------------------------------------------------------------------===//

struct Operator {
  std::string name;     // "aten::add"
  std::string overload; // "out"; "" for the default overload
  /// "aten::add.out", or just the name when the overload is empty.
  std::string qualifiedName() const { return overload.empty() ? name : name + "." + overload; }
  bool operator==(const Operator &) const = default;
};

struct KernelCall {
  int32_t opIndex = 0;
  std::vector<int32_t> args;
  bool operator==(const KernelCall &) const = default;
};
struct DelegateCall {
  int32_t delegateIndex = 0;
  std::vector<int32_t> args;
  bool operator==(const DelegateCall &) const = default;
};
struct MoveCall {
  int32_t moveFrom = 0;
  int32_t moveTo = 0;
  bool operator==(const MoveCall &) const = default;
};
struct JumpFalseCall {
  int32_t condValueIndex = 0;
  int32_t destinationInstruction = 0;
  bool operator==(const JumpFalseCall &) const = default;
};
struct FreeCall {
  int32_t valueIndex = 0;
  bool operator==(const FreeCall &) const = default;
};

/// One instruction. The alternative index equals the InstructionArguments code.
using Instruction =
    std::variant<std::monostate, KernelCall, DelegateCall, MoveCall, JumpFalseCall, FreeCall>;
/// Union member name of an InstructionArguments code ("KernelCall", ...; "NONE" for 0).
const char *instructionTypeName(size_t code);

struct Frame {
  std::string filename;
  int32_t lineno = 0;
  std::string name;
  std::string context;
  bool operator==(const Frame &) const = default;
};
struct FrameList {
  std::vector<Frame> items;
  bool operator==(const FrameList &) const = default;
};

struct Chain {
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<Instruction> instructions;
  std::optional<std::vector<FrameList>> stacktrace; // one entry per instruction
  bool operator==(const Chain &) const = default;
};

//===----------------------------------------------------------------------===//
// Delegates and plans
//===----------------------------------------------------------------------===//

struct CompileSpec {
  std::string key;
  std::string value; // raw bytes
  bool operator==(const CompileSpec &) const = default;
};

struct BackendDelegateDataReference {
  DataLocation location = DataLocation::Inline;
  uint32_t index = 0;
  bool operator==(const BackendDelegateDataReference &) const = default;
};

struct BackendDelegate {
  std::string id; // backend registry name, e.g. "XnnpackBackend"
  /// Layout: where the blob was found in a file that was read. The writer
  /// recomputes it (segment, or inline with WriteOptions::inlineDelegates).
  BackendDelegateDataReference processed;
  /// Content: the processed blob handed to the backend's init().
  BlobSource processedData;
  std::vector<CompileSpec> compileSpecs;
  bool operator==(const BackendDelegate &) const = default;
};

struct NonConstBufferDevice {
  int32_t bufferIdx = 0; // index into non_const_buffer_sizes (1-based)
  DeviceType deviceType = DeviceType::Cpu;
  int8_t deviceIndex = 0;
  bool operator==(const NonConstBufferDevice &) const = default;
};

struct ExecutionPlan {
  std::string name;
  std::optional<ContainerMetadata> containerMetaType;
  std::vector<EValue> values;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<Chain> chains;
  std::vector<Operator> operators;
  std::vector<BackendDelegate> delegates;
  std::vector<int64_t> nonConstBufferSizes; // [0] reserved; [k] = bytes of arena k
  std::optional<std::vector<NonConstBufferDevice>> nonConstBufferDevice;
  bool operator==(const ExecutionPlan &) const = default;
};

//===----------------------------------------------------------------------===//
// Program and file layout
//===----------------------------------------------------------------------===//

struct DataSegment {
  uint64_t offset = 0; // relative to segment_base_offset
  uint64_t size = 0;   // without padding
  bool operator==(const DataSegment &) const = default;
};

struct SubsegmentOffsets {
  uint32_t segmentIndex = 0;
  std::vector<uint64_t> offsets;
  bool operator==(const SubsegmentOffsets &) const = default;
};

struct NamedData {
  std::string key;
  /// Layout: the segment holding the blob in a file that was read.
  uint32_t segmentIndex = 0;
  /// Content: the blob, and the alignment the writer must give it (power of two;
  /// a file does not record it, so readPte sets 1).
  BlobSource data;
  uint64_t alignment = 1;
  bool operator==(const NamedData &) const = default;
};

/// The `eh00` header after the flatbuffer identifier (pte-format.md §2.2).
struct ExtendedHeader {
  uint32_t length = 32;
  uint64_t programSize = 0;
  uint64_t segmentBaseOffset = 0;
  uint64_t segmentDataSize = 0; // 0 when length < 32
  bool operator==(const ExtendedHeader &) const = default;
};

/// How a file that was read is laid out. Optional members are nullopt when the
/// flatbuffer field was absent. writePte does not look at any of this.
struct FileLayout {
  uint64_t fileSize = 0;
  std::optional<ExtendedHeader> extendedHeader;
  std::optional<std::vector<BlobSource>> constantBuffer; // deprecated inline Buffers
  std::optional<std::vector<BlobSource>> backendDelegateData;
  std::optional<std::vector<DataSegment>> segments;
  std::optional<SubsegmentOffsets> constantSegment;
  std::optional<std::vector<SubsegmentOffsets>> mutableDataSegments;
  bool operator==(const FileLayout &) const = default;
};

struct Program {
  uint32_t version = 0; // always 0, never checked by the runtime
  std::vector<ExecutionPlan> executionPlan;

  /// Program-wide constant list: [0] is the reserved empty placeholder, and a
  /// Tensor without allocation_info and with data_buffer_idx > 0 indexes it.
  /// An empty list means "placeholder only".
  std::vector<BlobSource> constants;
  /// Initial bytes of planned tensors (allocation_info and data_buffer_idx > 0);
  /// [0] is a reserved empty placeholder. Empty or placeholder-only = none.
  std::vector<BlobSource> mutableData;
  /// Program.named_data; nullopt when the field is absent.
  std::optional<std::vector<NamedData>> namedData;

  FileLayout layout;

  /// Index of the plan called `name`, or nullopt.
  std::optional<size_t> findPlan(const std::string &name) const;
  bool operator==(const Program &) const = default;
};

} // namespace exir::pte
