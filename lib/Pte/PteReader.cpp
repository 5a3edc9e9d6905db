//===- Pte/PteReader.cpp - Parse .pte bytes into a pte::Program ---------===//
//
// Order of checks: size and identifier, extended header (length >= 24,
// program_size and segment range inside the file), flatbuffers Verifier over
// [0, program_size), then conversion. Only after the Verifier has accepted the
// buffer are the generated accessors used, so corrupted bytes end in an
// exir::Error instead of an out-of-bounds read.
//
// Constant sizes are not stored in a .pte; a constant's bytes run from its
// offset to the tensor's nbytes (when a tensor names it) or to the next offset.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteReader.h"

#include "Support/Error.h"
#include "Support/FileIO.h"

#include "program_generated.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

namespace exir::pte {
namespace {

namespace fb = executorch_flatbuffer;

constexpr uint32_t kMinExtendedHeaderLength = 24;

uint64_t readLE(const std::string &data, size_t at, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t(uint8_t(data[at + i])) << (8 * i);
  return value;
}

std::string printable(std::string_view bytes) {
  static const char hex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out;
}

std::string str(const flatbuffers::String *s) { return s ? s->str() : std::string(); }

/// Copies a scalar vector. The Verifier only checks the 4-byte alignment of a
/// vector's length, so 8-byte elements of a corrupted file may be misaligned:
/// copy the bytes instead of loading elements in place.
template <typename T> std::vector<T> toVector(const flatbuffers::Vector<T> *v) {
  if (!v) return {};
  std::vector<T> items(v->size());
  if (!items.empty()) std::memcpy(items.data(), v->Data(), items.size() * sizeof(T));
  for (T &item : items) item = flatbuffers::EndianScalar(item);
  return items;
}

std::string at(const std::string &pointer, size_t index) { return pointer + "/" + std::to_string(index); }

/// The JSON pointer of an entry, `base` + `list` + "/" + `index` (+ `field`),
/// spelled out only when an error names it: a 100k-node program has a
/// million values, instructions and indices, and writing each one's pointer
/// eagerly was a tenth of exir-inspect's instructions.
struct EntryPointer {
  const std::string &base;
  const char *list;
  size_t index;
  const char *field = "";
  std::string str() const { return at(base + list, index) + field; }
  std::string operator+(const char *more) const { return str() + more; }
};

class Reader {
public:
  /// `bytes` holds the whole file, or (with `segmentFile`) only its first
  /// bytes up to the end of the program data: segments are then file ranges
  /// of `segmentFile`, read only when used.
  Reader(std::shared_ptr<const std::string> bytes, std::string fileName, uint64_t fileSize = UINT64_MAX,
         std::string segmentFile = {})
      : buffer_(std::move(bytes)), data_(*buffer_), file_(std::move(fileName)),
        fileSize_(fileSize == UINT64_MAX ? data_.size() : fileSize), segmentFile_(std::move(segmentFile)) {}

  Program read();

private:
  [[noreturn]] void fail(const std::string &message, const std::string &location) const {
    throw Error(message, file_, location);
  }
  std::string byteLocation(uint64_t offset) const { return "byte " + std::to_string(offset); }

  void parseHeader(Program &program);
  const fb::Program *verify(uint64_t programSize);

  Tensor readTensor(const fb::Tensor *t);
  EValue readValue(const fb::EValue *v, const EntryPointer &where);
  Instruction readInstruction(const fb::Instruction *i, const EntryPointer &where);
  Chain readChain(const fb::Chain *c);
  ExecutionPlan readPlan(const fb::ExecutionPlan *p, const std::string &where);

  /// The bytes of a flatbuffer [ubyte] vector as a slice of the shared buffer.
  BlobSource sliceOf(const flatbuffers::Vector<uint8_t> *v) const;
  /// `length` bytes at `offset` inside segment `index`.
  BlobSource segmentSlice(const Program &program, uint64_t index, uint64_t offset, uint64_t length,
                          const std::string &where) const;
  /// Expands a SubsegmentOffsets into one blob per entry.
  std::vector<BlobSource> readSubsegments(const Program &program, const SubsegmentOffsets &sub,
                                          const std::map<uint32_t, uint64_t> &wantedSizes,
                                          const std::string &where) const;
  void resolvePayloads(Program &program, const fb::Program *root);
  /// Every index the flatbuffer holds (values, operators, delegates,
  /// instructions, arenas) is inside the table it indexes.
  void checkIndices(const ExecutionPlan &plan, const std::string &where) const;

  std::shared_ptr<const std::string> buffer_;
  const std::string &data_;
  std::string file_;
  uint64_t fileSize_;       // of the whole file; data_ may hold only its start
  std::string segmentFile_; // non-empty when segments stay in the file
};

//===----------------------------------------------------------------------===//
// Header and verification
//===----------------------------------------------------------------------===//

void Reader::parseHeader(Program &program) {
  uint64_t fileSize = fileSize_;
  program.layout.fileSize = fileSize;
  if (fileSize < 8)
    fail("truncated: file has " + std::to_string(fileSize) + " bytes, a .pte needs at least 8", byteLocation(0));
  std::string_view identifier(data_.data() + 4, 4);
  if (identifier != fb::ProgramIdentifier())
    fail("bad file identifier '" + printable(identifier) + "' at byte 4, expected 'ET12'", byteLocation(4));

  if (fileSize < 12 || std::memcmp(data_.data() + 8, "eh00", 4) != 0) return; // no extended header
  if (fileSize < 16)
    fail("truncated: extended header length field at byte 12 is past the end of the file (" +
             std::to_string(fileSize) + " bytes)",
         byteLocation(12));
  ExtendedHeader header;
  header.length = uint32_t(readLE(data_, 12, 4));
  if (header.length < kMinExtendedHeaderLength)
    fail("extended header length " + std::to_string(header.length) + " is below the minimum " +
             std::to_string(kMinExtendedHeaderLength),
         byteLocation(12));
  uint64_t headerEnd = 8 + std::min<uint64_t>(header.length, 32);
  if (fileSize < headerEnd)
    fail("truncated: extended header needs " + std::to_string(headerEnd) + " bytes, file size " +
             std::to_string(fileSize),
         byteLocation(8));
  header.programSize = readLE(data_, 16, 8);
  header.segmentBaseOffset = readLE(data_, 24, 8);
  header.segmentDataSize = header.length >= 32 ? readLE(data_, 32, 8) : 0;

  if (header.programSize < 8 + uint64_t(header.length))
    fail("program_size " + std::to_string(header.programSize) + " is smaller than the headers (" +
             std::to_string(8 + uint64_t(header.length)) + " bytes)",
         byteLocation(16));
  if (header.programSize > fileSize)
    fail("truncated: program_size " + std::to_string(header.programSize) + " exceeds file size " +
             std::to_string(fileSize),
         byteLocation(16));
  if (header.segmentBaseOffset != 0) {
    if (header.segmentBaseOffset < header.programSize)
      fail("segment_base_offset " + std::to_string(header.segmentBaseOffset) +
               " lies inside the program data (program_size " + std::to_string(header.programSize) + ")",
           byteLocation(24));
    if (header.segmentBaseOffset > fileSize || header.segmentDataSize > fileSize - header.segmentBaseOffset)
      fail("truncated: segment data ends at byte " +
               std::to_string(header.segmentBaseOffset + header.segmentDataSize) + ", file size " +
               std::to_string(fileSize),
           byteLocation(header.length >= 32 ? 32 : 24));
  }
  program.layout.extendedHeader = header;
}

const fb::Program *Reader::verify(uint64_t programSize) {
  if (programSize >= FLATBUFFERS_MAX_BUFFER_SIZE)
    fail("program data of " + std::to_string(programSize) + " bytes exceeds the flatbuffer limit of 2 GiB",
         byteLocation(0));
  const auto *bytes = reinterpret_cast<const uint8_t *>(data_.data());
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 100'000'000; // large models have millions of values
  flatbuffers::Verifier verifier(bytes, size_t(programSize), options);
  if (!fb::VerifyProgramBuffer(verifier))
    fail("flatbuffer verification failed: the program data (bytes 0.." + std::to_string(programSize) +
             ") is corrupted or truncated",
         byteLocation(0));
  return fb::GetProgram(bytes);
}

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

Tensor Reader::readTensor(const fb::Tensor *t) {
  Tensor tensor;
  tensor.scalarType = ScalarType(int8_t(t->scalar_type()));
  tensor.storageOffset = t->storage_offset();
  tensor.sizes = toVector(t->sizes());
  tensor.dimOrder = toVector(t->dim_order());
  tensor.requiresGrad = t->requires_grad();
  tensor.dataBufferIdx = t->data_buffer_idx();
  if (const auto *a = t->allocation_info())
    tensor.allocationInfo = AllocationDetails{a->memory_id(), a->memory_offset_low(), a->memory_offset_high()};
  tensor.layout = t->layout();
  tensor.shapeDynamism = TensorShapeDynamism(int8_t(t->shape_dynamism()));
  if (const auto *e = t->extra_tensor_info()) {
    ExtraTensorInfo extra;
    extra.mutableDataSegmentsIdx = e->mutable_data_segments_idx();
    if (e->fully_qualified_name()) extra.fullyQualifiedName = e->fully_qualified_name()->str();
    extra.location = TensorDataLocation(int8_t(e->location()));
    extra.deviceType = DeviceType(int8_t(e->device_type()));
    extra.deviceIndex = e->device_index();
    tensor.extraTensorInfo = std::move(extra);
  }
  return tensor;
}

EValue Reader::readValue(const fb::EValue *v, const EntryPointer &where) {
  if (!v) fail("value entry is null", where.str());
  auto type = v->val_type();
  const char *typeName = kernelTypeName(size_t(type));
  if (!typeName) fail("unknown KernelTypes code " + std::to_string(unsigned(type)), where + "/val_type");
  if (type == fb::KernelTypes::NONE) return std::monostate{};
  if (type == fb::KernelTypes::Null) return Null{};
  if (!v->val()) fail(std::string(typeName) + " value has no payload table", where + "/val");
  switch (type) {
  case fb::KernelTypes::Int: return Int{v->val_as_Int()->int_val()};
  case fb::KernelTypes::Bool: return Bool{v->val_as_Bool()->bool_val()};
  case fb::KernelTypes::Double: return Double{v->val_as_Double()->double_val()};
  case fb::KernelTypes::Tensor: return readTensor(v->val_as_Tensor());
  case fb::KernelTypes::String: return String{str(v->val_as_String()->string_val())};
  case fb::KernelTypes::IntList: return IntList{toVector(v->val_as_IntList()->items())};
  case fb::KernelTypes::DoubleList: return DoubleList{toVector(v->val_as_DoubleList()->items())};
  case fb::KernelTypes::BoolList: {
    BoolList list;
    if (const auto *items = v->val_as_BoolList()->items())
      for (uint8_t b : *items) list.items.push_back(b != 0);
    return list;
  }
  case fb::KernelTypes::TensorList: return TensorList{toVector(v->val_as_TensorList()->items())};
  case fb::KernelTypes::OptionalTensorList:
    return OptionalTensorList{toVector(v->val_as_OptionalTensorList()->items())};
  default: break;
  }
  fail("unknown KernelTypes code " + std::to_string(unsigned(type)), where + "/val_type");
}

Instruction Reader::readInstruction(const fb::Instruction *i, const EntryPointer &where) {
  if (!i) fail("instruction entry is null", where.str());
  auto type = i->instr_args_type();
  const char *typeName = instructionTypeName(size_t(type));
  if (!typeName)
    fail("unknown InstructionArguments code " + std::to_string(unsigned(type)), where + "/instr_args_type");
  if (type == fb::InstructionArguments::NONE) return std::monostate{};
  if (!i->instr_args()) fail(std::string(typeName) + " has no payload table", where + "/instr_args");
  switch (type) {
  case fb::InstructionArguments::KernelCall: {
    const auto *k = i->instr_args_as_KernelCall();
    return KernelCall{k->op_index(), toVector(k->args())};
  }
  case fb::InstructionArguments::DelegateCall: {
    const auto *d = i->instr_args_as_DelegateCall();
    return DelegateCall{d->delegate_index(), toVector(d->args())};
  }
  case fb::InstructionArguments::MoveCall: {
    const auto *m = i->instr_args_as_MoveCall();
    return MoveCall{m->move_from(), m->move_to()};
  }
  case fb::InstructionArguments::JumpFalseCall: {
    const auto *j = i->instr_args_as_JumpFalseCall();
    return JumpFalseCall{j->cond_value_index(), j->destination_instruction()};
  }
  case fb::InstructionArguments::FreeCall: return FreeCall{i->instr_args_as_FreeCall()->value_index()};
  default: break;
  }
  fail("unknown InstructionArguments code " + std::to_string(unsigned(type)), where + "/instr_args_type");
}

Chain Reader::readChain(const fb::Chain *c) {
  Chain chain;
  chain.inputs = toVector(c->inputs());
  chain.outputs = toVector(c->outputs());
  return chain;
}

ExecutionPlan Reader::readPlan(const fb::ExecutionPlan *p, const std::string &where) {
  if (!p) fail("execution plan entry is null", where);
  ExecutionPlan plan;
  plan.name = str(p->name());
  if (const auto *meta = p->container_meta_type())
    plan.containerMetaType = ContainerMetadata{str(meta->encoded_inp_str()), str(meta->encoded_out_str())};
  if (const auto *values = p->values())
    for (flatbuffers::uoffset_t i = 0; i < values->size(); ++i)
      plan.values.push_back(readValue(values->Get(i), EntryPointer{where, "/values", i}));
  plan.inputs = toVector(p->inputs());
  plan.outputs = toVector(p->outputs());
  if (const auto *chains = p->chains())
    for (flatbuffers::uoffset_t c = 0; c < chains->size(); ++c) {
      const auto *fc = chains->Get(c);
      std::string chainWhere = at(where + "/chains", c);
      if (!fc) fail("chain entry is null", chainWhere);
      Chain chain = readChain(fc);
      if (const auto *instructions = fc->instructions())
        for (flatbuffers::uoffset_t i = 0; i < instructions->size(); ++i)
          chain.instructions.push_back(readInstruction(instructions->Get(i), EntryPointer{chainWhere, "/instructions", i}));
      if (const auto *stacktrace = fc->stacktrace()) {
        chain.stacktrace.emplace();
        for (const auto *list : *stacktrace) {
          FrameList frames;
          if (list && list->items())
            for (const auto *f : *list->items())
              if (f) frames.items.push_back({str(f->filename()), f->lineno(), str(f->name()), str(f->context())});
          chain.stacktrace->push_back(std::move(frames));
        }
      }
      plan.chains.push_back(std::move(chain));
    }
  if (const auto *operators = p->operators())
    for (const auto *op : *operators)
      plan.operators.push_back(op ? Operator{str(op->name()), str(op->overload())} : Operator{});
  if (const auto *delegates = p->delegates())
    for (const auto *d : *delegates) {
      BackendDelegate delegate;
      if (d) {
        delegate.id = str(d->id());
        if (const auto *ref = d->processed())
          delegate.processed = {DataLocation(int8_t(ref->location())), ref->index()};
        if (const auto *specs = d->compile_specs())
          for (const auto *s : *specs) {
            CompileSpec spec;
            if (s) {
              spec.key = str(s->key());
              if (const auto *value = s->value())
                spec.value.assign(reinterpret_cast<const char *>(value->data()), value->size());
            }
            delegate.compileSpecs.push_back(std::move(spec));
          }
      }
      plan.delegates.push_back(std::move(delegate));
    }
  plan.nonConstBufferSizes = toVector(p->non_const_buffer_sizes());
  if (const auto *devices = p->non_const_buffer_device()) {
    plan.nonConstBufferDevice.emplace();
    for (const auto *d : *devices)
      plan.nonConstBufferDevice->push_back(d ? NonConstBufferDevice{d->buffer_idx(), DeviceType(int8_t(d->device_type())),
                                                                    d->device_index()}
                                             : NonConstBufferDevice{});
  }
  return plan;
}

//===----------------------------------------------------------------------===//
// Payloads
//===----------------------------------------------------------------------===//

BlobSource Reader::sliceOf(const flatbuffers::Vector<uint8_t> *v) const {
  if (!v || v->size() == 0) return {};
  uint64_t offset = uint64_t(reinterpret_cast<const char *>(v->data()) - data_.data());
  return BlobSource::fromBuffer(buffer_, offset, v->size());
}

BlobSource Reader::segmentSlice(const Program &program, uint64_t index, uint64_t offset, uint64_t length,
                                const std::string &where) const {
  const auto &segments = program.layout.segments;
  if (!segments || index >= segments->size())
    fail("segment index " + std::to_string(index) + " is out of range (the program has " +
             std::to_string(segments ? segments->size() : 0) + " segments)",
         where);
  const DataSegment &segment = (*segments)[index];
  if (offset > segment.size || length > segment.size - offset)
    fail("bytes " + std::to_string(offset) + ".." + std::to_string(offset + length) + " lie outside segment " +
             std::to_string(index) + " of " + std::to_string(segment.size) + " bytes",
         where);
  if (length == 0) return {};
  const auto &header = program.layout.extendedHeader;
  if (!header || header->segmentBaseOffset == 0)
    fail("segment " + std::to_string(index) + " holds data but the file has no extended header with a "
                                              "segment_base_offset",
         where);
  uint64_t fileSize = fileSize_;
  uint64_t start = header->segmentBaseOffset;
  if (segment.offset > fileSize - start || offset > fileSize - start - segment.offset ||
      length > fileSize - start - segment.offset - offset)
    fail("truncated: segment " + std::to_string(index) + " (offset " + std::to_string(segment.offset) + ", size " +
             std::to_string(segment.size) + ") extends past the end of the file (" + std::to_string(fileSize) +
             " bytes)",
         where);
  uint64_t at = start + segment.offset + offset;
  if (!segmentFile_.empty() && (at > data_.size() || length > data_.size() - at))
    return BlobSource::fromFile(segmentFile_, at, length);
  return BlobSource::fromBuffer(buffer_, at, length);
}

std::vector<BlobSource> Reader::readSubsegments(const Program &program, const SubsegmentOffsets &sub,
                                                const std::map<uint32_t, uint64_t> &wantedSizes,
                                                const std::string &where) const {
  const auto &segments = program.layout.segments;
  if (!segments || sub.segmentIndex >= segments->size())
    fail("segment index " + std::to_string(sub.segmentIndex) + " is out of range (the program has " +
             std::to_string(segments ? segments->size() : 0) + " segments)",
         where + "/segment_index");
  uint64_t segmentSize = (*segments)[sub.segmentIndex].size;
  std::set<uint64_t> starts(sub.offsets.begin(), sub.offsets.end());
  std::vector<BlobSource> blobs;
  blobs.emplace_back(); // [0] is the reserved placeholder
  for (size_t i = 1; i < sub.offsets.size(); ++i) {
    uint64_t offset = sub.offsets[i];
    std::string entryWhere = at(where + "/offsets", i);
    if (offset > segmentSize)
      fail("offset " + std::to_string(offset) + " is past the end of segment " + std::to_string(sub.segmentIndex) +
               " (" + std::to_string(segmentSize) + " bytes)",
           entryWhere);
    auto next = starts.upper_bound(offset);
    uint64_t gap = (next == starts.end() ? segmentSize : *next) - offset;
    uint64_t length = gap;
    auto wanted = wantedSizes.find(uint32_t(i));
    if (wanted != wantedSizes.end() && wanted->second <= segmentSize - offset) length = wanted->second;
    blobs.push_back(segmentSlice(program, sub.segmentIndex, offset, length, entryWhere));
  }
  return blobs;
}

void Reader::resolvePayloads(Program &program, const fb::Program *root) {
  // Bytes each constant / mutable entry needs, from the tensors that use it.
  std::map<uint32_t, uint64_t> constantSizes, mutableSizes;
  for (const auto &plan : program.executionPlan)
    for (const auto &value : plan.values) {
      const auto *tensor = std::get_if<Tensor>(&value);
      if (!tensor || tensor->dataBufferIdx == 0) continue;
      if (tensor->extraTensorInfo && tensor->extraTensorInfo->location == TensorDataLocation::External) continue;
      auto size = tensor->byteSize();
      if (!size) continue;
      auto &sizes = tensor->allocationInfo ? mutableSizes : constantSizes;
      uint64_t &entry = sizes[tensor->dataBufferIdx];
      entry = std::max(entry, *size);
    }

  const FileLayout &layout = program.layout;
  if (layout.constantSegment && !layout.constantSegment->offsets.empty()) {
    program.constants = readSubsegments(program, *layout.constantSegment, constantSizes, "/constant_segment");
  } else if (layout.constantBuffer) {
    program.constants = *layout.constantBuffer; // deprecated inline layout
  }
  if (layout.mutableDataSegments && !layout.mutableDataSegments->empty() &&
      !(*layout.mutableDataSegments)[0].offsets.empty())
    program.mutableData =
        readSubsegments(program, (*layout.mutableDataSegments)[0], mutableSizes, "/mutable_data_segments/0");

  for (size_t p = 0; p < program.executionPlan.size(); ++p)
    for (size_t d = 0; d < program.executionPlan[p].delegates.size(); ++d) {
      BackendDelegate &delegate = program.executionPlan[p].delegates[d];
      std::string where = "/execution_plan/" + std::to_string(p) + "/delegates/" + std::to_string(d) + "/processed";
      if (delegate.processed.location == DataLocation::Segment) {
        uint64_t index = delegate.processed.index;
        uint64_t size = layout.segments && index < layout.segments->size() ? (*layout.segments)[index].size : 0;
        delegate.processedData = segmentSlice(program, index, 0, size, where);
      } else if (delegate.processed.location == DataLocation::Inline) {
        const auto &inlineData = layout.backendDelegateData;
        if (!inlineData || delegate.processed.index >= inlineData->size())
          fail("inline delegate data index " + std::to_string(delegate.processed.index) +
                   " is out of range (backend_delegate_data has " +
                   std::to_string(inlineData ? inlineData->size() : 0) + " entries)",
               where);
        delegate.processedData = (*inlineData)[delegate.processed.index];
      } else {
        fail("unknown DataLocation " + std::to_string(int(delegate.processed.location)), where + "/location");
      }
    }

  if (const auto *named = root->named_data()) {
    program.namedData.emplace();
    for (flatbuffers::uoffset_t i = 0; i < named->size(); ++i) {
      const auto *entry = named->Get(i);
      NamedData data;
      if (entry) {
        data.key = str(entry->key());
        data.segmentIndex = entry->segment_index();
      }
      std::string where = at("/named_data", i);
      uint64_t index = data.segmentIndex;
      uint64_t size = layout.segments && index < layout.segments->size() ? (*layout.segments)[index].size : 0;
      data.data = segmentSlice(program, index, 0, size, where + "/segment_index");
      program.namedData->push_back(std::move(data));
    }
  }
}

void Reader::checkIndices(const ExecutionPlan &plan, const std::string &where) const {
  // Locations are callables: the pointer is spelled out only for an error.
  auto check = [&](int64_t index, size_t size, const char *table, auto &&location) {
    if (index < 0 || uint64_t(index) >= size)
      fail(std::string(table) + " index " + std::to_string(index) + " is out of range (the plan has " +
               std::to_string(size) + " " + table + "s)",
           location());
  };
  size_t values = plan.values.size();
  auto valueIndex = [&](int64_t index, auto &&location) { check(index, values, "value", location); };
  auto valueIndices = [&](const auto &list, auto &&location) {
    for (size_t i = 0; i < list.size(); ++i) valueIndex(list[i], [&] { return at(location(), i); });
  };
  for (size_t v = 0; v < values; ++v) {
    auto location = [&] { return EntryPointer{where, "/values", v, "/val"}.str(); };
    auto items = [&] { return location() + "/items"; };
    const EValue &value = plan.values[v];
    if (const auto *list = std::get_if<IntList>(&value)) valueIndices(list->items, items);
    else if (const auto *tensors = std::get_if<TensorList>(&value)) valueIndices(tensors->items, items);
    else if (const auto *optional = std::get_if<OptionalTensorList>(&value)) {
      for (size_t i = 0; i < optional->items.size(); ++i)
        if (optional->items[i] != -1) valueIndex(optional->items[i], [&] { return at(items(), i); });
    } else if (const auto *tensor = std::get_if<Tensor>(&value)) {
      if (tensor->allocationInfo) {
        uint32_t id = tensor->allocationInfo->memoryId;
        if (id == 0 || id >= plan.nonConstBufferSizes.size())
          fail("memory_id " + std::to_string(id) + " is not an arena of this plan (non_const_buffer_sizes has " +
                   std::to_string(plan.nonConstBufferSizes.size()) + " entries)",
               location() + "/allocation_info/memory_id");
      }
    }
  }
  valueIndices(plan.inputs, [&] { return where + "/inputs"; });
  valueIndices(plan.outputs, [&] { return where + "/outputs"; });
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain &chain = plan.chains[c];
    auto chainWhere = [&] { return at(where + "/chains", c); };
    valueIndices(chain.inputs, [&] { return chainWhere() + "/inputs"; });
    valueIndices(chain.outputs, [&] { return chainWhere() + "/outputs"; });
    for (size_t i = 0; i < chain.instructions.size(); ++i) {
      auto location = [&](const char *field) {
        return [&, field] { return at(chainWhere() + "/instructions", i) + "/instr_args" + field; };
      };
      const Instruction &instruction = chain.instructions[i];
      if (const auto *k = std::get_if<KernelCall>(&instruction)) {
        check(k->opIndex, plan.operators.size(), "operator", location("/op_index"));
        valueIndices(k->args, location("/args"));
      } else if (const auto *d = std::get_if<DelegateCall>(&instruction)) {
        check(d->delegateIndex, plan.delegates.size(), "delegate", location("/delegate_index"));
        valueIndices(d->args, location("/args"));
      } else if (const auto *m = std::get_if<MoveCall>(&instruction)) {
        valueIndex(m->moveFrom, location("/move_from"));
        valueIndex(m->moveTo, location("/move_to"));
      } else if (const auto *j = std::get_if<JumpFalseCall>(&instruction)) {
        valueIndex(j->condValueIndex, location("/cond_value_index"));
        // Jumping to one past the last instruction ends the chain.
        if (j->destinationInstruction < 0 || size_t(j->destinationInstruction) > chain.instructions.size())
          fail("destination_instruction " + std::to_string(j->destinationInstruction) +
                   " is outside the chain of " + std::to_string(chain.instructions.size()) + " instructions",
               location("/destination_instruction")());
      } else if (const auto *f = std::get_if<FreeCall>(&instruction)) {
        valueIndex(f->valueIndex, location("/value_index"));
      }
    }
  }
  if (plan.nonConstBufferDevice)
    for (size_t i = 0; i < plan.nonConstBufferDevice->size(); ++i)
      check((*plan.nonConstBufferDevice)[i].bufferIdx, plan.nonConstBufferSizes.size(), "buffer",
            [&] { return at(where + "/non_const_buffer_device", i) + "/buffer_idx"; });
}

Program Reader::read() {
  Program program;
  parseHeader(program);
  uint64_t programSize = program.layout.extendedHeader ? program.layout.extendedHeader->programSize : fileSize_;
  if (programSize > data_.size()) throw InternalError("readPte: program data not loaded");
  const fb::Program *root = verify(programSize);

  program.version = root->version();
  if (const auto *plans = root->execution_plan())
    for (flatbuffers::uoffset_t p = 0; p < plans->size(); ++p)
      program.executionPlan.push_back(readPlan(plans->Get(p), at("/execution_plan", p)));

  FileLayout &layout = program.layout;
  if (const auto *buffers = root->constant_buffer()) {
    layout.constantBuffer.emplace();
    for (const auto *b : *buffers) layout.constantBuffer->push_back(b ? sliceOf(b->storage()) : BlobSource());
  }
  if (const auto *inlineData = root->backend_delegate_data()) {
    layout.backendDelegateData.emplace();
    for (const auto *d : *inlineData) layout.backendDelegateData->push_back(d ? sliceOf(d->data()) : BlobSource());
  }
  if (const auto *segments = root->segments()) {
    layout.segments.emplace();
    for (const auto *s : *segments)
      layout.segments->push_back(s ? DataSegment{s->offset(), s->size()} : DataSegment{});
  }
  if (const auto *c = root->constant_segment())
    layout.constantSegment = SubsegmentOffsets{c->segment_index(), toVector(c->offsets())};
  if (const auto *m = root->mutable_data_segments()) {
    layout.mutableDataSegments.emplace();
    for (const auto *s : *m)
      layout.mutableDataSegments->push_back(s ? SubsegmentOffsets{s->segment_index(), toVector(s->offsets())}
                                              : SubsegmentOffsets{});
  }
  resolvePayloads(program, root);
  for (size_t p = 0; p < program.executionPlan.size(); ++p)
    checkIndices(program.executionPlan[p], at("/execution_plan", p));
  return program;
}

} // namespace

Program readPte(std::shared_ptr<const std::string> bytes, const std::string &fileName) {
  if (!bytes) throw InternalError("readPte: null buffer");
  return Reader(std::move(bytes), fileName).read();
}

Program readPte(const std::string &bytes, const std::string &fileName) {
  return readPte(std::make_shared<const std::string>(bytes), fileName);
}

Program readPteFile(const std::string &path) {
  if (path != "-") {
    // Only the headers and the flatbuffer are read; segments (the weights) stay
    // in the file as ranges, read when something streams them. Files whose
    // extended header is missing or does not hold up are read whole, so the
    // checks above report them exactly as for bytes in memory.
    uint64_t size = fileSize(path);
    if (size >= 40) {
      std::string head = readFileRange(path, 0, 40);
      uint32_t length = uint32_t(readLE(head, 12, 4));
      uint64_t programSize = readLE(head, 16, 8);
      if (head.compare(4, 4, fb::ProgramIdentifier()) == 0 && head.compare(8, 4, "eh00") == 0 &&
          length >= kMinExtendedHeaderLength && programSize >= 8 + uint64_t(length) && programSize >= 40 &&
          programSize < size)
        return Reader(std::make_shared<const std::string>(readFileRange(path, 0, programSize)), path, size, path)
            .read();
    }
  }
  return readPte(std::make_shared<const std::string>(readFileOrStdin(path)), path);
}

} // namespace exir::pte
