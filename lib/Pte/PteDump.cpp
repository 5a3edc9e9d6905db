//===- Pte/PteDump.cpp - JSON and text dumps of a pte::Program ----------===//
//
// The JSON writer reproduces flatc's text generator layout (two-space indent,
// one element per line, "[\n\n]" for empty vectors) and uses flatbuffers'
// own NumToString / EscapeString so numbers and strings come out the same.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDump.h"

#include <flatbuffers/util.h>

#include <charconv>
#include <cmath>
#include <set>
#include <sstream>

namespace exir::pte {
namespace {

//===----------------------------------------------------------------------===//
// flatc-style JSON
//===----------------------------------------------------------------------===//

/// Emits JSON in exactly the shape flatc's text generator does.
class FlatcJsonWriter {
public:
  explicit FlatcJsonWriter(std::ostream &out) : out_(out) {}

  // Objects: "{", then "\n<indent>field" entries separated by ",", then
  // "\n<indent>}".
  void beginObject() {
    out_ << '{';
    counts_.push_back(0);
  }
  void endObject() {
    counts_.pop_back();
    out_ << '\n';
    indent(counts_.size());
    out_ << '}';
  }
  /// Starts a field of the innermost object; the value follows.
  void key(const char *name) {
    if (counts_.back()++) out_ << ',';
    out_ << '\n';
    indent(counts_.size());
    out_ << '"' << name << "\": ";
  }
  // Vectors: "[\n", elements separated by ",\n", then "\n<indent>]".
  void beginArray() {
    out_ << "[\n";
    counts_.push_back(0);
  }
  void element() {
    if (counts_.back()++) out_ << ",\n";
    indent(counts_.size());
  }
  void endArray() {
    counts_.pop_back();
    out_ << '\n';
    indent(counts_.size());
    out_ << ']';
  }

  void string(std::string_view text) { out_ << escape(text); }
  void raw(const std::string &text) { out_ << text; }
  template <typename T> void integer(T value) {
    if constexpr (sizeof(T) < sizeof(int)) out_ << int(value); // bytes print as numbers
    else out_ << flatbuffers::NumToString(value);
  }
  void boolean(bool value) { out_ << (value ? "true" : "false"); }
  void number(double value) { out_ << flatbuffers::NumToString(value); }

  template <typename T> void intArray(const std::vector<T> &items) {
    beginArray();
    for (const auto &item : items) {
      element();
      integer(item);
    }
    endArray();
  }
  void byteArray(std::string_view bytes) {
    beginArray();
    for (unsigned char b : bytes) {
      element();
      integer(unsigned(b));
    }
    endArray();
  }

  void intField(const char *name, int64_t value) {
    key(name);
    integer(value);
  }
  void uintField(const char *name, uint64_t value) {
    key(name);
    integer(value);
  }
  void boolField(const char *name, bool value) {
    key(name);
    boolean(value);
  }
  void stringField(const char *name, std::string_view value) {
    key(name);
    string(value);
  }
  /// An enum: its schema name when declared, else the number (as flatc does).
  void enumField(const char *name, const char *symbol, int64_t value) {
    key(name);
    if (symbol) string(symbol);
    else integer(value);
  }

private:
  void indent(size_t depth) {
    for (size_t i = 0; i < depth; ++i) out_ << "  ";
  }
  static std::string escape(std::string_view text) {
    std::string escaped;
    if (flatbuffers::EscapeString(text.data(), text.size(), &escaped, /*allow_non_utf8=*/false,
                                  /*natural_utf8=*/false))
      return escaped;
    // flatc gives up on invalid UTF-8; show such bytes as \u00XX instead so the
    // output stays valid JSON.
    static const char hex[] = "0123456789ABCDEF";
    escaped = "\"";
    for (unsigned char c : text) {
      if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
        escaped.push_back(char(c));
      } else {
        escaped += "\\u00";
        escaped.push_back(hex[c >> 4]);
        escaped.push_back(hex[c & 15]);
      }
    }
    return escaped + "\"";
  }

  std::ostream &out_;
  std::vector<size_t> counts_; // entries written per open object / array
};

void jsonTensor(FlatcJsonWriter &w, const Tensor &t) {
  w.beginObject();
  w.enumField("scalar_type", scalarTypeSchemaName(t.scalarType), int(t.scalarType));
  w.intField("storage_offset", t.storageOffset);
  w.key("sizes");
  w.intArray(t.sizes);
  w.key("dim_order");
  w.intArray(t.dimOrder);
  w.boolField("requires_grad", t.requiresGrad);
  w.uintField("data_buffer_idx", t.dataBufferIdx);
  if (t.allocationInfo) {
    w.key("allocation_info");
    w.beginObject();
    w.uintField("memory_id", t.allocationInfo->memoryId);
    w.uintField("memory_offset_low", t.allocationInfo->memoryOffsetLow);
    w.uintField("memory_offset_high", t.allocationInfo->memoryOffsetHigh);
    w.endObject();
  }
  w.intField("layout", t.layout);
  w.enumField("shape_dynamism", enumName(t.shapeDynamism), int(t.shapeDynamism));
  if (t.extraTensorInfo) {
    const auto &e = *t.extraTensorInfo;
    w.key("extra_tensor_info");
    w.beginObject();
    w.uintField("mutable_data_segments_idx", e.mutableDataSegmentsIdx);
    if (e.fullyQualifiedName) w.stringField("fully_qualified_name", *e.fullyQualifiedName);
    w.enumField("location", enumName(e.location), int(e.location));
    w.enumField("device_type", enumName(e.deviceType), int(e.deviceType));
    w.intField("device_index", e.deviceIndex);
    w.endObject();
  }
  w.endObject();
}

void jsonValue(FlatcJsonWriter &w, const EValue &value) {
  w.beginObject();
  w.enumField("val_type", kernelTypeName(value.index()), int64_t(value.index()));
  std::visit(
      [&](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return; // NONE: no payload table
        } else {
          w.key("val");
          if constexpr (std::is_same_v<T, Tensor>) {
            jsonTensor(w, v);
            return;
          }
          w.beginObject();
          if constexpr (std::is_same_v<T, Int>) w.intField("int_val", v.intVal);
          else if constexpr (std::is_same_v<T, Bool>) w.boolField("bool_val", v.boolVal);
          else if constexpr (std::is_same_v<T, Double>) {
            w.key("double_val");
            w.number(v.doubleVal);
          } else if constexpr (std::is_same_v<T, String>) w.stringField("string_val", v.stringVal);
          else if constexpr (std::is_same_v<T, DoubleList>) {
            w.key("items");
            w.beginArray();
            for (double d : v.items) {
              w.element();
              w.number(d);
            }
            w.endArray();
          } else if constexpr (std::is_same_v<T, BoolList>) {
            w.key("items");
            w.beginArray();
            for (bool b : v.items) {
              w.element();
              w.boolean(b);
            }
            w.endArray();
          } else if constexpr (std::is_same_v<T, IntList> || std::is_same_v<T, TensorList> ||
                               std::is_same_v<T, OptionalTensorList>) {
            w.key("items");
            w.intArray(v.items);
          }
          w.endObject();
        }
      },
      value);
  w.endObject();
}

void jsonInstruction(FlatcJsonWriter &w, const Instruction &instruction) {
  w.beginObject();
  w.enumField("instr_args_type", instructionTypeName(instruction.index()), int64_t(instruction.index()));
  std::visit(
      [&](const auto &v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (!std::is_same_v<T, std::monostate>) {
          w.key("instr_args");
          w.beginObject();
          if constexpr (std::is_same_v<T, KernelCall>) {
            w.intField("op_index", v.opIndex);
            w.key("args");
            w.intArray(v.args);
          } else if constexpr (std::is_same_v<T, DelegateCall>) {
            w.intField("delegate_index", v.delegateIndex);
            w.key("args");
            w.intArray(v.args);
          } else if constexpr (std::is_same_v<T, MoveCall>) {
            w.intField("move_from", v.moveFrom);
            w.intField("move_to", v.moveTo);
          } else if constexpr (std::is_same_v<T, JumpFalseCall>) {
            w.intField("cond_value_index", v.condValueIndex);
            w.intField("destination_instruction", v.destinationInstruction);
          } else {
            w.intField("value_index", v.valueIndex);
          }
          w.endObject();
        }
      },
      instruction);
  w.endObject();
}

void jsonChain(FlatcJsonWriter &w, const Chain &chain) {
  w.beginObject();
  w.key("inputs");
  w.intArray(chain.inputs);
  w.key("outputs");
  w.intArray(chain.outputs);
  w.key("instructions");
  w.beginArray();
  for (const auto &instruction : chain.instructions) {
    w.element();
    jsonInstruction(w, instruction);
  }
  w.endArray();
  if (chain.stacktrace) {
    w.key("stacktrace");
    w.beginArray();
    for (const auto &list : *chain.stacktrace) {
      w.element();
      w.beginObject();
      w.key("items");
      w.beginArray();
      for (const auto &frame : list.items) {
        w.element();
        w.beginObject();
        w.stringField("filename", frame.filename);
        w.intField("lineno", frame.lineno);
        w.stringField("name", frame.name);
        w.stringField("context", frame.context);
        w.endObject();
      }
      w.endArray();
      w.endObject();
    }
    w.endArray();
  }
  w.endObject();
}

void jsonPlan(FlatcJsonWriter &w, const ExecutionPlan &plan) {
  w.beginObject();
  w.stringField("name", plan.name);
  if (plan.containerMetaType) {
    w.key("container_meta_type");
    w.beginObject();
    w.stringField("encoded_inp_str", plan.containerMetaType->encodedInpStr);
    w.stringField("encoded_out_str", plan.containerMetaType->encodedOutStr);
    w.endObject();
  }
  w.key("values");
  w.beginArray();
  for (const auto &value : plan.values) {
    w.element();
    jsonValue(w, value);
  }
  w.endArray();
  w.key("inputs");
  w.intArray(plan.inputs);
  w.key("outputs");
  w.intArray(plan.outputs);
  w.key("chains");
  w.beginArray();
  for (const auto &chain : plan.chains) {
    w.element();
    jsonChain(w, chain);
  }
  w.endArray();
  w.key("operators");
  w.beginArray();
  for (const auto &op : plan.operators) {
    w.element();
    w.beginObject();
    w.stringField("name", op.name);
    w.stringField("overload", op.overload);
    w.endObject();
  }
  w.endArray();
  w.key("delegates");
  w.beginArray();
  for (const auto &delegate : plan.delegates) {
    w.element();
    w.beginObject();
    w.stringField("id", delegate.id);
    w.key("processed");
    w.beginObject();
    w.enumField("location", enumName(delegate.processed.location), int(delegate.processed.location));
    w.uintField("index", delegate.processed.index);
    w.endObject();
    w.key("compile_specs");
    w.beginArray();
    for (const auto &spec : delegate.compileSpecs) {
      w.element();
      w.beginObject();
      w.stringField("key", spec.key);
      w.key("value");
      w.byteArray(spec.value);
      w.endObject();
    }
    w.endArray();
    w.endObject();
  }
  w.endArray();
  w.key("non_const_buffer_sizes");
  w.intArray(plan.nonConstBufferSizes);
  if (plan.nonConstBufferDevice) {
    w.key("non_const_buffer_device");
    w.beginArray();
    for (const auto &device : *plan.nonConstBufferDevice) {
      w.element();
      w.beginObject();
      w.intField("buffer_idx", device.bufferIdx);
      w.enumField("device_type", enumName(device.deviceType), int(device.deviceType));
      w.intField("device_index", device.deviceIndex);
      w.endObject();
    }
    w.endArray();
  }
  w.endObject();
}

void jsonSubsegment(FlatcJsonWriter &w, const SubsegmentOffsets &s) {
  w.beginObject();
  w.uintField("segment_index", s.segmentIndex);
  w.key("offsets");
  w.intArray(s.offsets);
  w.endObject();
}

/// An array of tables with a single [ubyte] field (Buffer, BackendDelegateInlineData).
void jsonBlobTables(FlatcJsonWriter &w, const char *name, const char *field, const std::vector<BlobSource> &blobs) {
  w.key(name);
  w.beginArray();
  for (const auto &blob : blobs) {
    w.element();
    w.beginObject();
    w.key(field);
    w.byteArray(blob.bytes());
    w.endObject();
  }
  w.endArray();
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

std::string valueRef(int64_t index) { return index < 0 ? "None" : "%" + std::to_string(index); }

template <typename T> std::string refList(const std::vector<T> &items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + valueRef(int64_t(items[i]));
  return out + "]";
}

template <typename T> std::string numberList(const std::vector<T> &items, const char *separator = ", ") {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? separator : "") + std::to_string(items[i]);
  return out + "]";
}

std::string dtypeName(ScalarType type) {
  if (elementSize(type) != 0) return shortName(type);
  return "dtype(" + std::to_string(int(type)) + ")";
}

std::string quotedText(std::string_view text) {
  std::string out = "\"";
  static const char hex[] = "0123456789abcdef";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(char(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(char(c));
    } else {
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  return out + "\"";
}

std::string formatTensor(const Tensor &t) {
  std::string out = "Tensor " + dtypeName(t.scalarType) + numberList(t.sizes) + " dim_order=" +
                    numberList(std::vector<int>(t.dimOrder.begin(), t.dimOrder.end()), ",");
  if (t.allocationInfo)
    out += " mem=" + std::to_string(t.allocationInfo->memoryId) + "+" + std::to_string(t.allocationInfo->offset());
  if (t.dataBufferIdx != 0) out += (t.allocationInfo ? " init=" : " const=") + std::to_string(t.dataBufferIdx);
  if (t.shapeDynamism != TensorShapeDynamism::Static) {
    const char *name = enumName(t.shapeDynamism);
    out += std::string(" ") + (name ? name : "dynamism(" + std::to_string(int(t.shapeDynamism)) + ")");
  }
  if (t.requiresGrad) out += " requires_grad";
  if (t.storageOffset != 0) out += " storage_offset=" + std::to_string(t.storageOffset);
  if (t.layout != 0) out += " layout=" + std::to_string(t.layout);
  if (t.extraTensorInfo) {
    const auto &e = *t.extraTensorInfo;
    std::string extra;
    if (e.fullyQualifiedName) extra += " fqn=" + quotedText(*e.fullyQualifiedName);
    if (e.location != TensorDataLocation::Segment)
      extra += e.location == TensorDataLocation::External ? " EXTERNAL" : " location(" + std::to_string(int(e.location)) + ")";
    if (e.mutableDataSegmentsIdx != 0) extra += " mutable_segment=" + std::to_string(e.mutableDataSegmentsIdx);
    if (e.deviceType != DeviceType::Cpu || e.deviceIndex != 0) {
      const char *device = enumName(e.deviceType);
      extra += std::string(" device=") + (device ? device : std::to_string(int(e.deviceType))) + ":" +
               std::to_string(e.deviceIndex);
    }
    out += " extra={" + (extra.empty() ? std::string() : extra.substr(1)) + "}";
  }
  return out;
}

std::string blobSummary(const BlobSource &blob, const TextDumpOptions &options) {
  std::string out = std::to_string(blob.size()) + " bytes";
  if (options.hashes) out += " sha256 " + blob.sha256Hex();
  return out;
}

void textPlan(const ExecutionPlan &plan, size_t index, std::ostream &out, const TextDumpOptions &options) {
  out << "\nexecution_plan[" << index << "] " << quotedText(plan.name) << "\n";
  out << "  inputs: " << refList(plan.inputs) << "\n";
  out << "  outputs: " << refList(plan.outputs) << "\n";
  if (plan.containerMetaType) {
    out << "  encoded_inp_str: " << quotedText(plan.containerMetaType->encodedInpStr) << "\n";
    out << "  encoded_out_str: " << quotedText(plan.containerMetaType->encodedOutStr) << "\n";
  }
  out << "  values: " << plan.values.size() << "\n";
  for (size_t v = 0; v < plan.values.size(); ++v) out << "    %" << v << " = " << formatValue(plan.values[v]) << "\n";
  out << "  operators: " << plan.operators.size() << "\n";
  for (size_t o = 0; o < plan.operators.size(); ++o)
    out << "    [" << o << "] " << plan.operators[o].qualifiedName() << "\n";
  for (size_t c = 0; c < plan.chains.size(); ++c) {
    const Chain &chain = plan.chains[c];
    out << "  chain[" << c << "]: " << chain.instructions.size() << " instructions";
    if (!chain.inputs.empty()) out << ", inputs " << refList(chain.inputs);
    if (!chain.outputs.empty()) out << ", outputs " << refList(chain.outputs);
    if (chain.stacktrace) out << ", stacktrace of " << chain.stacktrace->size() << " entries";
    out << "\n";
    for (size_t i = 0; i < chain.instructions.size(); ++i)
      out << "    " << i << ": " << formatInstruction(chain.instructions[i], plan) << "\n";
  }
  out << "  delegates: " << plan.delegates.size() << "\n";
  for (size_t d = 0; d < plan.delegates.size(); ++d) {
    const BackendDelegate &delegate = plan.delegates[d];
    const char *location = enumName(delegate.processed.location);
    out << "    [" << d << "] " << delegate.id << ": " << (location ? location : "?") << " "
        << delegate.processed.index << ", " << blobSummary(delegate.processedData, options) << "\n";
    for (const auto &spec : delegate.compileSpecs)
      out << "      compile_spec " << spec.key << " = " << formatBytes(spec.value) << "\n";
  }
  out << "  non_const_buffer_sizes: " << numberList(plan.nonConstBufferSizes) << "\n";
  if (plan.nonConstBufferDevice)
    for (const auto &device : *plan.nonConstBufferDevice) {
      const char *name = enumName(device.deviceType);
      out << "  buffer " << device.bufferIdx << " on " << (name ? name : std::to_string(int(device.deviceType)))
          << ":" << int(device.deviceIndex) << "\n";
    }
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

std::string formatDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

std::string formatBytes(std::string_view bytes) {
  bool printable = !bytes.empty();
  for (unsigned char c : bytes) printable = printable && c >= 0x20 && c < 0x7f;
  if (printable) return quotedText(bytes);
  static const char hex[] = "0123456789abcdef";
  std::string out = "0x";
  for (unsigned char c : bytes) {
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
  }
  return bytes.empty() ? "<empty>" : out;
}

std::string formatValue(const EValue &value) {
  return std::visit(
      [](const auto &v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "NONE";
        else if constexpr (std::is_same_v<T, Null>) return "Null";
        else if constexpr (std::is_same_v<T, Int>) return "Int " + std::to_string(v.intVal);
        else if constexpr (std::is_same_v<T, Bool>) return std::string("Bool ") + (v.boolVal ? "true" : "false");
        else if constexpr (std::is_same_v<T, Double>) return "Double " + formatDouble(v.doubleVal);
        else if constexpr (std::is_same_v<T, Tensor>) return formatTensor(v);
        else if constexpr (std::is_same_v<T, String>) return "String " + quotedText(v.stringVal);
        else if constexpr (std::is_same_v<T, IntList>) return "IntList " + refList(v.items);
        else if constexpr (std::is_same_v<T, DoubleList>) {
          std::string out = "DoubleList [";
          for (size_t i = 0; i < v.items.size(); ++i) out += (i ? ", " : "") + formatDouble(v.items[i]);
          return out + "]";
        } else if constexpr (std::is_same_v<T, BoolList>) {
          std::string out = "BoolList [";
          for (size_t i = 0; i < v.items.size(); ++i) out += std::string(i ? ", " : "") + (v.items[i] ? "true" : "false");
          return out + "]";
        } else if constexpr (std::is_same_v<T, TensorList>) return "TensorList " + refList(v.items);
        else return "OptionalTensorList " + refList(v.items);
      },
      value);
}

std::string formatInstruction(const Instruction &instruction, const ExecutionPlan &plan) {
  return std::visit(
      [&](const auto &v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "NONE";
        else if constexpr (std::is_same_v<T, KernelCall>) {
          std::string name = v.opIndex >= 0 && size_t(v.opIndex) < plan.operators.size()
                                 ? plan.operators[size_t(v.opIndex)].qualifiedName()
                                 : "<operator " + std::to_string(v.opIndex) + " out of range>";
          std::string args = refList(v.args);
          return "KernelCall " + name + "(" + args.substr(1, args.size() - 2) + ")";
        } else if constexpr (std::is_same_v<T, DelegateCall>) {
          std::string name = v.delegateIndex >= 0 && size_t(v.delegateIndex) < plan.delegates.size()
                                 ? plan.delegates[size_t(v.delegateIndex)].id
                                 : "<out of range>";
          std::string args = refList(v.args);
          return "DelegateCall #" + std::to_string(v.delegateIndex) + " " + name + "(" +
                 args.substr(1, args.size() - 2) + ")";
        } else if constexpr (std::is_same_v<T, MoveCall>)
          return "MoveCall " + valueRef(v.moveFrom) + " -> " + valueRef(v.moveTo);
        else if constexpr (std::is_same_v<T, JumpFalseCall>)
          return "JumpFalseCall if not " + valueRef(v.condValueIndex) + " goto " +
                 std::to_string(v.destinationInstruction);
        else
          return "FreeCall " + valueRef(v.valueIndex);
      },
      instruction);
}

void dumpPteDot(const Program &program, std::ostream &out) {
  auto quote = [](const std::string &text) {
    std::string q = "\"";
    for (char c : text) {
      if (c == '\n') q += "\\n";
      else if (c == '"' || c == '\\') q += std::string("\\") + c;
      else q += c;
    }
    return q + "\"";
  };
  out << "digraph pte {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (size_t p = 0; p < program.executionPlan.size(); ++p) {
    const ExecutionPlan &plan = program.executionPlan[p];
    std::string prefix = "plan" + std::to_string(p) + "/";
    out << "  subgraph " << quote("cluster_" + prefix) << " {\n    label=" << quote(plan.name) << ";\n";
    auto tensorAt = [&](int64_t index) -> const Tensor * {
      return index >= 0 && size_t(index) < plan.values.size() ? std::get_if<Tensor>(&plan.values[size_t(index)])
                                                               : nullptr;
    };
    // The tensor values an argument stands for (a tensor list stands for its items).
    auto tensorsOf = [&](int32_t index) {
      std::vector<int32_t> tensors;
      if (tensorAt(index)) tensors.push_back(index);
      else if (index >= 0 && size_t(index) < plan.values.size()) {
        const EValue &v = plan.values[size_t(index)];
        const std::vector<int32_t> *items = nullptr;
        if (const auto *l = std::get_if<TensorList>(&v)) items = &l->items;
        else if (const auto *o = std::get_if<OptionalTensorList>(&v)) items = &o->items;
        if (items)
          for (int32_t i : *items)
            if (tensorAt(i)) tensors.push_back(i);
      }
      return tensors;
    };
    std::set<int32_t> drawn, available;
    auto valueNode = [&](int32_t index) {
      std::string id = prefix + "v" + std::to_string(index);
      if (drawn.insert(index).second) {
        const Tensor &t = *tensorAt(index);
        bool constant = t.dataBufferIdx > 0 && !t.allocationInfo;
        if (constant) available.insert(index);
        out << "    " << quote(id) << " [shape=" << (constant ? "note" : "ellipse")
            << ", label=" << quote(valueRef(index) + "\n" + formatValue(plan.values[size_t(index)])) << "];\n";
      }
      return id;
    };
    for (int32_t in : plan.inputs)
      for (int32_t t : tensorsOf(in)) {
        std::string id = valueNode(t);
        available.insert(t);
        out << "    " << quote(prefix + "input") << " -> " << quote(id) << ";\n";
      }
    if (!plan.inputs.empty()) out << "    " << quote(prefix + "input") << " [shape=plaintext, label=\"inputs\"];\n";
    for (size_t c = 0; c < plan.chains.size(); ++c)
      for (size_t i = 0; i < plan.chains[c].instructions.size(); ++i) {
        const Instruction &instruction = plan.chains[c].instructions[i];
        std::string id = prefix + "chain" + std::to_string(c) + "/" + std::to_string(i);
        out << "    " << quote(id) << " [label=" << quote("[" + std::to_string(i) + "] " +
                                                            formatInstruction(instruction, plan))
            << "];\n";
        std::vector<int32_t> args;
        if (const auto *k = std::get_if<KernelCall>(&instruction)) args = k->args;
        else if (const auto *d = std::get_if<DelegateCall>(&instruction)) args = d->args;
        else if (const auto *m = std::get_if<MoveCall>(&instruction)) args = {m->moveFrom, m->moveTo};
        else if (const auto *j = std::get_if<JumpFalseCall>(&instruction)) args = {j->condValueIndex};
        else if (const auto *f = std::get_if<FreeCall>(&instruction)) args = {f->valueIndex};
        std::set<int32_t> connected; // an out variant names its out tensor twice (out=, and its result)
        for (int32_t arg : args)
          for (int32_t t : tensorsOf(arg)) {
            if (!connected.insert(t).second) continue;
            std::string value = valueNode(t);
            if (available.insert(t).second) out << "    " << quote(id) << " -> " << quote(value) << ";\n";
            else out << "    " << quote(value) << " -> " << quote(id) << ";\n";
          }
      }
    for (int32_t o : plan.outputs)
      for (int32_t t : tensorsOf(o))
        out << "    " << quote(valueNode(t)) << " -> " << quote(prefix + "output") << ";\n";
    if (!plan.outputs.empty())
      out << "    " << quote(prefix + "output") << " [shape=plaintext, label=\"outputs\"];\n";
    out << "  }\n";
  }
  out << "}\n";
}

void dumpPteJson(const Program &program, std::ostream &out) {
  FlatcJsonWriter w(out);
  w.beginObject();
  w.uintField("version", program.version);
  w.key("execution_plan");
  w.beginArray();
  for (const auto &plan : program.executionPlan) {
    w.element();
    jsonPlan(w, plan);
  }
  w.endArray();
  const FileLayout &layout = program.layout;
  if (layout.constantBuffer) jsonBlobTables(w, "constant_buffer", "storage", *layout.constantBuffer);
  if (layout.backendDelegateData) jsonBlobTables(w, "backend_delegate_data", "data", *layout.backendDelegateData);
  if (layout.segments) {
    w.key("segments");
    w.beginArray();
    for (const auto &segment : *layout.segments) {
      w.element();
      w.beginObject();
      w.uintField("offset", segment.offset);
      w.uintField("size", segment.size);
      w.endObject();
    }
    w.endArray();
  }
  if (layout.constantSegment) {
    w.key("constant_segment");
    jsonSubsegment(w, *layout.constantSegment);
  }
  if (layout.mutableDataSegments) {
    w.key("mutable_data_segments");
    w.beginArray();
    for (const auto &s : *layout.mutableDataSegments) {
      w.element();
      jsonSubsegment(w, s);
    }
    w.endArray();
  }
  if (program.namedData) {
    w.key("named_data");
    w.beginArray();
    for (const auto &entry : *program.namedData) {
      w.element();
      w.beginObject();
      w.stringField("key", entry.key);
      w.uintField("segment_index", entry.segmentIndex);
      w.endObject();
    }
    w.endArray();
  }
  w.endObject();
  out << '\n';
}

void dumpPteText(const Program &program, std::ostream &out, const TextDumpOptions &options) {
  ScopedFileCache files; // hashing file-backed payloads: one open for all of them
  const FileLayout &layout = program.layout;
  if (layout.fileSize) out << "file: " << layout.fileSize << " bytes\n";
  if (layout.extendedHeader) {
    const auto &h = *layout.extendedHeader;
    out << "extended header: length " << h.length << ", program_size " << h.programSize << ", segment_base_offset "
        << h.segmentBaseOffset << ", segment_data_size " << h.segmentDataSize << "\n";
  } else {
    out << "extended header: none\n";
  }
  out << "version: " << program.version << "\n";
  if (layout.segments) {
    out << "segments: " << layout.segments->size() << "\n";
    for (size_t i = 0; i < layout.segments->size(); ++i)
      out << "  [" << i << "] offset " << (*layout.segments)[i].offset << " size " << (*layout.segments)[i].size
          << "\n";
  }
  if (layout.constantSegment)
    out << "constant_segment: segment " << layout.constantSegment->segmentIndex << ", offsets "
        << numberList(layout.constantSegment->offsets) << "\n";
  if (layout.mutableDataSegments)
    for (size_t i = 0; i < layout.mutableDataSegments->size(); ++i)
      out << "mutable_data_segments[" << i << "]: segment " << (*layout.mutableDataSegments)[i].segmentIndex
          << ", offsets " << numberList((*layout.mutableDataSegments)[i].offsets) << "\n";
  if (layout.constantBuffer && !layout.constantBuffer->empty())
    out << "constant_buffer: " << layout.constantBuffer->size() << " inline buffers (deprecated layout)\n";
  if (layout.backendDelegateData && !layout.backendDelegateData->empty())
    out << "backend_delegate_data: " << layout.backendDelegateData->size() << " inline blobs\n";

  for (size_t p = 0; p < program.executionPlan.size(); ++p) textPlan(program.executionPlan[p], p, out, options);

  out << "\nconstants: " << program.constants.size() << " (index 0 is the placeholder)\n";
  for (size_t i = 1; i < program.constants.size(); ++i)
    out << "  [" << i << "] " << blobSummary(program.constants[i], options) << "\n";
  if (!program.mutableData.empty()) {
    out << "mutable_data: " << program.mutableData.size() << " (index 0 is the placeholder)\n";
    for (size_t i = 1; i < program.mutableData.size(); ++i)
      out << "  [" << i << "] " << blobSummary(program.mutableData[i], options) << "\n";
  }
  if (program.namedData) {
    out << "named_data: " << program.namedData->size() << "\n";
    for (const auto &entry : *program.namedData)
      out << "  " << quotedText(entry.key) << ": segment " << entry.segmentIndex << ", " << blobSummary(entry.data, options)
          << "\n";
  }
}

} // namespace exir::pte
