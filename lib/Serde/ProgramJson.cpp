//===- Serde/ProgramJson.cpp - The stage artifact ("program JSON") --------===//
//
// Reader and writer of the artifact described in schema/artifact.md. Methods
// reuse the ExportedProgram reader/writer, so a method inside an artifact is
// byte for byte what torch.export would write for it.
//
//===----------------------------------------------------------------------===//
#include "Serde/ProgramJson.h"
#include "Serde/ExportJsonDom.h"
#include "Serde/JsonWriter.h"
#include "Serde/Parallel.h"
#include "Support/CheckedMath.h"
#include "Support/Hash.h"

#include <filesystem>

namespace exir {

using json::Element;
using json::Reader;
namespace fs = std::filesystem;

namespace {

using KeyScope = Reader::KeyScope;
using IndexScope = Reader::IndexScope;

template <typename F> void forEachField(Reader &r, json::Object o, F &&f) {
  for (auto field : o) {
    KeyScope scope(r, field.key);
    f(field.key, field.value);
  }
}

uint64_t readUnsigned(Reader &r, Element e) {
  if (e.is_uint64()) return e.get_uint64().value_unsafe();
  int64_t v = r.integer(e);
  if (v < 0) r.fail("expected a non-negative integer, found " + std::to_string(v));
  return static_cast<uint64_t>(v);
}

std::vector<uint64_t> readUnsignedList(Reader &r, Element e) {
  std::vector<uint64_t> out;
  int64_t index = 0;
  for (Element item : r.array(e)) {
    IndexScope scope(r, index++);
    out.push_back(readUnsigned(r, item));
  }
  return out;
}

std::vector<int64_t> readIntList(Reader &r, Element e) {
  std::vector<int64_t> out;
  int64_t index = 0;
  for (Element item : r.array(e)) {
    IndexScope scope(r, index++);
    out.push_back(r.integer(item));
  }
  return out;
}

Element requireField(Reader &r, json::Object o, const char *name, const char *what) {
  auto v = o.at_key(name);
  if (v.error()) r.fail(std::string("missing required field '") + name + "' of " + what);
  return v.value_unsafe();
}

class ArtifactReader {
public:
  ArtifactReader(Reader &r, fs::path baseDirectory, const ExportJsonOptions &options)
      : r_(r), base_(std::move(baseDirectory)), options_(options) {}

  Program program(Element e);

private:
  DataRef dataRef(Element e);
  ConstantTensor constant(Element e);
  Delegate delegate(Element e);
  ConstantValue constantValue(Element e);
  MemoryPlan memoryPlan(Element e);
  EdgeRulesRecord edgeRules(Element e);
  OpLibraryRecord opLibrary(Element e);
  template <class Record> Record textRecord(json::Object o, const char *what);
  /// Fills `out` with `(this->*item)(value)` of every field of the big object
  /// `v` (constants, delegates): on two threads when it has many fields, in
  /// batches when it is deferred (json::Reader::deferred).
  template <class V> void objectFields(Element v, OrderedMap<V> &out, V (ArtifactReader::*item)(Element));

  /// A DataRef's file made absolute. Every constant names the same few files
  /// (100k references to one .pt2), so the last answer is kept: path
  /// arithmetic per reference was a tenth of reading a 100k-node program.
  const std::string &resolve(std::string_view text) {
    if (text != lastFile_ || lastResolved_.empty()) {
      fs::path file{std::string(text)};
      lastResolved_ = (file.is_absolute() ? file : base_ / file).lexically_normal().string();
      lastFile_ = std::string(text);
    }
    return lastResolved_;
  }

  Reader &r_;
  fs::path base_;
  ExportJsonOptions options_;
  std::string lastFile_, lastResolved_;
};

DataRef ArtifactReader::dataRef(Element e) {
  json::Object o = r_.object(e);
  DataRef ref;
  auto inlineField = o.at_key("inline");
  if (!inlineField.error()) {
    KeyScope scope(r_, "inline");
    std::string_view text = r_.string(inlineField.value_unsafe());
    try {
      ref.inlineBytes = base64Decode(text);
    } catch (const Error &err) {
      r_.fail("invalid base64 in inline data: " + err.message());
    }
  }
  bool haveLength = false;
  forEachField(r_, o, [&](std::string_view k, Element v) {
    if (k == "file") ref.file = resolve(r_.string(v)); else if (k == "offset") {
      ref.offset = readUnsigned(r_, v);
    } else if (k == "length") {
      ref.length = readUnsigned(r_, v);
      haveLength = true;
    } else if (k == "sha256") {
      if (!r_.isNull(v)) ref.sha256 = std::string(r_.string(v));
    } else if (k == "file_size") {
      if (!r_.isNull(v)) ref.fileSize = readUnsigned(r_, v);
    } else if (k == "crc32") {
      if (!r_.isNull(v)) {
        uint64_t crc = readUnsigned(r_, v);
        if (crc > UINT32_MAX) r_.fail("crc32 " + std::to_string(crc) + " does not fit in 32 bits");
        ref.crc32 = uint32_t(crc);
      }
    }
  });
  if (ref.inlineBytes && !ref.file.empty()) r_.fail("DataRef has both 'file' and 'inline'");
  if (!ref.inlineBytes && ref.file.empty()) r_.fail("DataRef needs either 'file' or 'inline'");
  if (ref.inlineBytes) {
    if (haveLength && ref.length != ref.inlineBytes->size())
      r_.fail("inline data is " + std::to_string(ref.inlineBytes->size()) +
              " bytes but 'length' says " + std::to_string(ref.length));
    ref.length = ref.inlineBytes->size();
  } else if (!haveLength) {
    r_.fail("missing required field 'length' of DataRef");
  }
  if (!ref.sha256.empty() && ref.inlineBytes) {
    // A digest is recomputed wherever it matters, never trusted; one that
    // contradicts the inline bytes it describes is refused here.
    KeyScope scope(r_, "sha256");
    if (sha256Hex(*ref.inlineBytes) != ref.sha256)
      r_.fail("sha256 " + ref.sha256 + " does not match the inline bytes (" + sha256Hex(*ref.inlineBytes) + ")");
  }
  return ref;
}

ConstantTensor ArtifactReader::constant(Element e) {
  json::Object o = r_.object(e);
  ConstantTensor c;
  {
    Element dtype = requireField(r_, o, "dtype", "constant");
    KeyScope scope(r_, "dtype");
    c.dtype = scalarTypeFromDom(dtype, r_);
  }
  Element sizes = requireField(r_, o, "sizes", "constant");
  Element data = requireField(r_, o, "data", "constant");
  {
    KeyScope scope(r_, "sizes");
    c.sizes = readIntList(r_, sizes);
  }
  auto strides = o.at_key("strides");
  if (!strides.error()) {
    KeyScope scope(r_, "strides");
    c.strides = readIntList(r_, strides.value_unsafe());
  } else {
    // Contiguous strides are products of the sizes: refuse sizes whose
    // product does not fit in int64 before computing them.
    int64_t count = 1;
    for (int64_t size : c.sizes) {
      std::optional<int64_t> next = checkedMul<int64_t>(count, std::max<int64_t>(size, 1));
      if (!next) {
        KeyScope scope(r_, "sizes");
        r_.fail("the sizes hold more than 2^63 - 1 elements");
      }
      count = *next;
    }
    std::vector<SymInt> sizes;
    for (int64_t size : c.sizes) sizes.push_back(SymInt::of(size));
    for (const auto &stride : TensorMeta::contiguousStrides(sizes)) c.strides.push_back(stride.value);
  }
  auto offset = o.at_key("storage_offset");
  if (!offset.error()) {
    KeyScope scope(r_, "storage_offset");
    c.storageOffset = r_.integer(offset.value_unsafe());
  }
  KeyScope scope(r_, "data");
  c.data = dataRef(data);
  return c;
}

template <class V>
void ArtifactReader::objectFields(Element v, OrderedMap<V> &out, V (ArtifactReader::*item)(Element)) {
  json::Object o = r_.object(v);
  if (const json::DeferredContainer *deferred = r_.deferred(v)) {
    out.reserve(deferred->size());
    json::convertDeferredObject(
        r_, *deferred, out, *this, [&](Reader &second) { return ArtifactReader(second, base_, options_); },
        [item](ArtifactReader &reader, Element value) { return (reader.*item)(value); });
    return;
  }
  out.reserve(o.size());
  if (json::convertObjectInHalves(
          r_, o, out, 256, *this, [&](Reader &second) { return ArtifactReader(second, base_, options_); },
          [item](ArtifactReader &reader, Element v) { return (reader.*item)(v); }))
    return;
  forEachField(r_, o, [&](std::string_view key, Element v) { out.set(std::string(key), (this->*item)(v)); });
}

Delegate ArtifactReader::delegate(Element e) {
  json::Object o = r_.object(e);
  Delegate d;
  {
    Element id = requireField(r_, o, "backend_id", "delegate");
    KeyScope scope(r_, "backend_id");
    d.backendId = std::string(r_.string(id));
  }
  Element processed = requireField(r_, o, "processed", "delegate");
  forEachField(r_, o, [&](std::string_view k, Element v) {
    if (k == "compile_specs") {
      int64_t index = 0;
      for (Element spec : r_.array(v)) {
        IndexScope indexScope(r_, index++);
        json::Object so = r_.object(spec);
        CompileSpec cs;
        {
          Element key = requireField(r_, so, "key", "compile spec");
          KeyScope keyScope(r_, "key");
          cs.key = std::string(r_.string(key));
        }
        Element value = requireField(r_, so, "value", "compile spec");
        KeyScope valueScope(r_, "value");
        try {
          cs.value = base64Decode(r_.string(value));
        } catch (const Error &err) {
          r_.fail("invalid base64 in compile spec value: " + err.message());
        }
        d.compileSpecs.push_back(std::move(cs));
      }
    } else if (k == "processed") {
      d.processed = dataRef(processed);
    } else if (k == "original_module") {
      if (!r_.isNull(v)) d.original = std::make_shared<ExportedProgram>(exportedProgramFromDom(v, r_, options_));
    } else if (k == "named_data") {
      forEachField(r_, r_.object(v), [&](std::string_view fqn, Element c) {
        d.namedData.set(std::string(fqn), constant(c));
      });
    }
  });
  return d;
}

// An embedded file (edge.yaml, an op library): its name, text and the text's
// SHA-256, which must match, so a hand-edited artifact is noticed.
template <class Record>
Record ArtifactReader::textRecord(json::Object o, const char *what) {
  Record rec;
  for (const char *name : {"source", "sha256", "text"}) {
    Element v = requireField(r_, o, name, what);
    KeyScope scope(r_, name);
    std::string text(r_.string(v));
    (name[1] == 'o' ? rec.source : name[1] == 'h' ? rec.sha256 : rec.text) = std::move(text);
  }
  if (sha256Hex(rec.text) != rec.sha256) {
    KeyScope scope(r_, "sha256");
    r_.fail(std::string("the recorded ") + what + " text does not match its sha256 (the artifact was edited?)");
  }
  return rec;
}

OpLibraryRecord ArtifactReader::opLibrary(Element e) { return textRecord<OpLibraryRecord>(r_.object(e), "op library"); }

EdgeRulesRecord ArtifactReader::edgeRules(Element e) {
  json::Object o = r_.object(e);
  EdgeRulesRecord rec = textRecord<EdgeRulesRecord>(o, "edge.yaml");
  if (auto replace = o.at_key("replace"); !replace.error()) {
    KeyScope scope(r_, "replace");
    rec.replace = r_.boolean(replace.value_unsafe());
  }
  return rec;
}

ConstantValue ArtifactReader::constantValue(Element e) {
  // The ConstantValue union of torch.export's schema: a single-key object.
  json::Object o = r_.object(e);
  ConstantValue c;
  size_t members = 0;
  forEachField(r_, o, [&](std::string_view k, Element v) {
    ++members;
    if (k == "as_int") c.kind = ConstantValue::Kind::Int, c.intValue = r_.integer(v);
    else if (k == "as_float") c.kind = ConstantValue::Kind::Float, c.floatValue = r_.real(v);
    else if (k == "as_bool") c.kind = ConstantValue::Kind::Bool, c.intValue = r_.boolean(v);
    else if (k == "as_string") c.kind = ConstantValue::Kind::String, c.stringValue = std::string(r_.string(v));
    else if (k == "as_none") c.kind = ConstantValue::Kind::None;
    else r_.fail("unknown ConstantValue tag '" + std::string(k) + "' (expected as_int, as_float, as_bool, as_string or as_none)");
  });
  if (members != 1) r_.fail("a ConstantValue must have exactly one member, found " + std::to_string(members));
  return c;
}

MemoryPlan ArtifactReader::memoryPlan(Element e) {
  json::Object o = r_.object(e);
  MemoryPlan plan;
  forEachField(r_, o, [&](std::string_view k, Element v) {
    if (k == "algorithm") plan.algorithm = std::string(r_.string(v));
    else if (k == "alignment") plan.alignment = readUnsigned(r_, v);
    else if (k == "buffer_sizes") plan.bufferSizes = readUnsignedList(r_, v);
    else if (k == "lower_bounds") plan.lowerBounds = readUnsignedList(r_, v);
    else if (k == "allocations") {
      json::Object allocations = r_.object(v);
      plan.allocations.reserve(allocations.size());
      forEachField(r_, allocations, [&](std::string_view name, Element placement) {
        json::Array a = r_.array(placement);
        if (a.size() != 2) r_.fail("expected [mem_id, offset], found an array of " + std::to_string(a.size()));
        Allocation alloc;
        uint64_t memId = readUnsigned(r_, a.at(0).value_unsafe());
        if (memId == 0 || memId > UINT32_MAX) r_.fail("mem_id must be >= 1, found " + std::to_string(memId));
        alloc.memId = static_cast<uint32_t>(memId);
        alloc.offset = readUnsigned(r_, a.at(1).value_unsafe());
        plan.allocations.set(std::string(name), alloc);
      });
    }
  });
  return plan;
}

Program ArtifactReader::program(Element e) {
  json::Object o = r_.object(e);
  Program p;
  {
    Element format = requireField(r_, o, "format", "program artifact");
    KeyScope scope(r_, "format");
    std::string_view name = r_.string(format);
    if (name != kArtifactFormat)
      r_.fail("unknown artifact format '" + std::string(name) + "' (expected '" + kArtifactFormat + "')");
  }
  {
    Element version = requireField(r_, o, "format_version", "program artifact");
    KeyScope scope(r_, "format_version");
    int64_t v = r_.integer(version);
    if (v < 1 || v > kArtifactFormatVersion)
      r_.fail("unsupported format_version " + std::to_string(v) + " (this reader knows version " +
              std::to_string(kArtifactFormatVersion) + ")");
  }
  {
    Element stage = requireField(r_, o, "stage", "program artifact");
    KeyScope scope(r_, "stage");
    std::string name(r_.string(stage));
    auto s = stageFromName(name);
    if (!s) r_.fail("unknown stage '" + name + "' (expected aten, edge, delegated or planned)");
    p.stage = *s;
  }
  Element methods = requireField(r_, o, "methods", "program artifact");
  {
    KeyScope scope(r_, "methods");
    forEachField(r_, r_.object(methods), [&](std::string_view name, Element ep) {
      p.methods.set(std::string(name), Method{exportedProgramFromDom(ep, r_, options_), std::nullopt});
    });
  }
  forEachField(r_, o, [&](std::string_view k, Element v) {
    if (k == "constants") {
      objectFields(v, p.constants, &ArtifactReader::constant);
    } else if (k == "delegates") {
      // Each delegate holds its original module: a partitioned 100k-node
      // llama has 12.7k of them, a third of its text.
      objectFields(v, p.delegates, &ArtifactReader::delegate);
    } else if (k == "constant_methods") {
      forEachField(r_, r_.object(v), [&](std::string_view name, Element values) {
        std::vector<ConstantValue> list;
        int64_t index = 0;
        for (Element item : r_.array(values)) {
          IndexScope indexScope(r_, index++);
          list.push_back(constantValue(item));
        }
        p.constantMethods.set(std::string(name), std::move(list));
      });
    } else if (k == "edge_yaml") {
      if (!r_.isNull(v)) p.edgeRules = edgeRules(v);
    } else if (k == "op_libraries") {
      int64_t index = 0;
      for (Element item : r_.array(v)) {
        IndexScope indexScope(r_, index++);
        p.opLibraries.push_back(opLibrary(item));
      }
    } else if (k == "memory_plans") {
      forEachField(r_, r_.object(v), [&](std::string_view method, Element plan) {
        Method *m = p.methods.find(std::string(method));
        if (!m) r_.fail("memory plan for unknown method '" + std::string(method) + "'");
        m->plan = memoryPlan(plan);
      });
    }
  });
  p.baseDirectory = base_.string();
  return p;
}

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

class ArtifactWriter {
public:
  ArtifactWriter(JsonWriter &w, const Program &p, const std::string &outputDir)
      : w_(w), p_(p), outputDirText_(outputDir) {
    if (!outputDir.empty()) outputDir_ = fs::absolute(outputDir).lexically_normal();
    base_ = fs::absolute(p.baseDirectory.empty() ? "." : p.baseDirectory).lexically_normal();
  }

  void write();

private:
  /// The path written for a DataRef's file; the last one is kept, as in the
  /// reader (100k constants name one archive).
  const std::string &pathFor(const std::string &file) {
    if (file != lastFile_ || lastPath_.empty()) {
      lastPath_ = computePathFor(file);
      lastFile_ = file;
    }
    return lastPath_;
  }
  std::string computePathFor(const std::string &file) const {
    fs::path path(file);
    if (!path.is_absolute()) path = base_ / path;
    path = path.lexically_normal();
    if (outputDir_.empty()) return path.string();
    fs::path relative = path.lexically_relative(outputDir_);
    return relative.empty() ? path.string() : relative.string();
  }
  void dataRef(const DataRef &ref) {
    w_.beginObject();
    if (ref.inlineBytes) {
      w_.field("inline", base64Encode(*ref.inlineBytes));
      w_.key("length");
      w_.unsignedInteger(ref.inlineBytes->size());
    } else {
      w_.field("file", pathFor(ref.file));
      w_.key("offset");
      w_.unsignedInteger(ref.offset);
      w_.key("length");
      w_.unsignedInteger(ref.length);
      if (!ref.sha256.empty()) w_.field("sha256", ref.sha256);
      if (ref.fileSize) {
        w_.key("file_size");
        w_.unsignedInteger(*ref.fileSize);
      }
      if (ref.crc32) {
        w_.key("crc32");
        w_.unsignedInteger(*ref.crc32);
      }
    }
    w_.endObject();
  }
  void constant(const ConstantTensor &c) {
    w_.beginObject();
    w_.fieldInt("dtype", scalarTypeToSerialized(c.dtype));
    w_.key("sizes");
    intList(c.sizes);
    w_.key("strides");
    intList(c.strides);
    w_.fieldInt("storage_offset", c.storageOffset);
    w_.key("data");
    dataRef(c.data);
    w_.endObject();
  }
  void delegate(const Delegate &d) {
    w_.beginObject();
    w_.field("backend_id", d.backendId);
    w_.key("compile_specs");
    w_.beginArray();
    for (const auto &spec : d.compileSpecs) {
      w_.beginObject();
      w_.field("key", spec.key);
      w_.field("value", base64Encode(spec.value));
      w_.endObject();
    }
    w_.endArray();
    w_.key("processed");
    dataRef(d.processed);
    w_.key("original_module");
    if (d.original) writeExportedProgramJson(*d.original, w_);
    else w_.null();
    if (!d.namedData.empty()) { // optional: absent in artifacts of delegates without constants
      w_.key("named_data");
      w_.beginObject();
      for (const auto &[fqn, c] : d.namedData) {
        w_.key(fqn);
        constant(c);
      }
      w_.endObject();
    }
    w_.endObject();
  }
  void unsignedList(const std::vector<uint64_t> &list) {
    w_.beginArray();
    for (uint64_t v : list) w_.unsignedInteger(v);
    w_.endArray();
  }
  void intList(const std::vector<int64_t> &list) {
    w_.beginArray();
    for (int64_t v : list) w_.integer(v);
    w_.endArray();
  }

  /// Writes items [0, n) of an object with `item(ArtifactWriter &, size_t)`,
  /// on two threads when there are many (each with its own path cache).
  template <class Item> void objectItems(size_t n, Item &&item) {
    json::writeItemsParallel(w_, n, [&](JsonWriter &w, size_t begin, size_t end) {
      ArtifactWriter writer(w, p_, outputDirText_);
      for (size_t i = begin; i < end; ++i) item(writer, i);
    });
  }

  JsonWriter &w_;
  const Program &p_;
  std::string outputDirText_;
  fs::path outputDir_, base_;
  std::string lastFile_, lastPath_;
};

void ArtifactWriter::write() {
  w_.beginObject();
  w_.field("format", kArtifactFormat);
  w_.fieldInt("format_version", kArtifactFormatVersion);
  w_.field("stage", stageName(p_.stage));
  w_.key("methods");
  w_.beginObject();
  for (const auto &[name, method] : p_.methods) {
    w_.key(name);
    writeExportedProgramJson(method.program, w_);
  }
  w_.endObject();

  w_.key("constants");
  w_.beginObject();
  objectItems(p_.constants.size(), [&](ArtifactWriter &writer, size_t i) {
    const auto &[fqn, c] = *(p_.constants.begin() + static_cast<std::ptrdiff_t>(i));
    writer.w_.key(fqn);
    writer.constant(c);
  });
  w_.endObject();

  w_.key("delegates");
  w_.beginObject();
  // Each delegate carries its original module: 12.7k of them are 59 MB of
  // the 193 MB a partitioned 100k-node llama writes, worth the second thread.
  objectItems(p_.delegates.size(), [&](ArtifactWriter &writer, size_t i) {
    const auto &[name, d] = *(p_.delegates.begin() + static_cast<std::ptrdiff_t>(i));
    writer.w_.key(name);
    writer.delegate(d);
  });
  w_.endObject();

  if (!p_.constantMethods.empty()) {
    w_.key("constant_methods");
    w_.beginObject();
    for (const auto &[name, values] : p_.constantMethods) {
      w_.key(name);
      w_.beginArray();
      for (const auto &c : values) {
        w_.beginObject();
        switch (c.kind) {
        case ConstantValue::Kind::Int: w_.fieldInt("as_int", c.intValue); break;
        case ConstantValue::Kind::Float: w_.key("as_float"); w_.real(c.floatValue); break;
        case ConstantValue::Kind::Bool: w_.fieldBool("as_bool", c.intValue != 0); break;
        case ConstantValue::Kind::String: w_.field("as_string", c.stringValue); break;
        case ConstantValue::Kind::None: w_.fieldBool("as_none", true); break;
        }
        w_.endObject();
      }
      w_.endArray();
    }
    w_.endObject();
  }

  if (p_.edgeRules) {
    w_.key("edge_yaml");
    w_.beginObject();
    w_.field("source", p_.edgeRules->source);
    w_.field("sha256", p_.edgeRules->sha256);
    w_.fieldBool("replace", p_.edgeRules->replace);
    w_.field("text", p_.edgeRules->text);
    w_.endObject();
  }

  if (!p_.opLibraries.empty()) {
    w_.key("op_libraries");
    w_.beginArray();
    for (const auto &lib : p_.opLibraries) {
      w_.beginObject();
      w_.field("source", lib.source);
      w_.field("sha256", lib.sha256);
      w_.field("text", lib.text);
      w_.endObject();
    }
    w_.endArray();
  }

  w_.key("memory_plans");
  w_.beginObject();
  for (const auto &[name, method] : p_.methods) {
    if (!method.plan) continue;
    const MemoryPlan &plan = *method.plan;
    w_.key(name);
    w_.beginObject();
    w_.field("algorithm", plan.algorithm);
    w_.key("alignment");
    w_.unsignedInteger(plan.alignment);
    w_.key("buffer_sizes");
    unsignedList(plan.bufferSizes);
    w_.key("lower_bounds");
    unsignedList(plan.lowerBounds);
    w_.key("allocations");
    w_.beginObject();
    objectItems(plan.allocations.size(), [&](ArtifactWriter &writer, size_t i) {
      const auto &[tensor, alloc] = *(plan.allocations.begin() + static_cast<std::ptrdiff_t>(i));
      JsonWriter &w = writer.w_;
      w.key(tensor);
      w.beginArray();
      w.unsignedInteger(alloc.memId);
      w.unsignedInteger(alloc.offset);
      w.endArray();
    });
    w_.endObject();
    w_.endObject();
  }
  w_.endObject();
  w_.endObject();
}

} // namespace

Program programFromDom(json::Element e, json::Reader &reader, const std::string &baseDirectory,
                       const ExportJsonOptions &options) {
  fs::path base = fs::absolute(baseDirectory.empty() ? "." : baseDirectory).lexically_normal();
  return ArtifactReader(reader, base, options).program(e);
}

Program readProgramJson(std::string_view text, const std::string &file, const std::string &baseDirectory) {
  json::Document doc(text, file);
  Reader reader(file);
  return programFromDom(doc.root(), reader, baseDirectory);
}

void writeProgramJson(const Program &program, const std::string &outputDir, JsonWriter &writer) {
  ArtifactWriter(writer, program, outputDir).write();
}

std::string writeProgramJsonString(const Program &program, const std::string &outputDir) {
  JsonWriter writer;
  size_t estimate = 4096 + 256 * (program.constants.size() + program.delegates.size());
  for (const auto &[name, method] : program.methods) estimate += estimateJsonSize(method.program);
  writer.reserve(estimate);
  writeProgramJson(program, outputDir, writer);
  std::string out = writer.take();
  out += '\n';
  return out;
}

Program programFromExportedProgram(ExportedProgram ep, Stage stage) {
  Program p;
  p.stage = stage;
  p.methods.set("forward", Method{std::move(ep), std::nullopt});
  return p;
}

Stage guessStage(const ExportedProgram &ep) {
  for (const auto &node : ep.graph.nodes) {
    OpTarget target = parseTarget(node.target);
    if (target.dialect == TargetDialect::Edge || target.dialect == TargetDialect::Backend)
      return Stage::Edge;
  }
  return Stage::Aten;
}

} // namespace exir
