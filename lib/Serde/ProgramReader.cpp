//===- Serde/ProgramReader.cpp - Read any program input, write artifacts --===//
//
// Container detection follows torch-export-json.md §10: a PT2 archive has an
// `archive_format` member under one root folder, a legacy export zip has a flat
// `serialized_exported_program.json`, an ETRecord has `ETRECORD_V0`. Weights are
// located, never read: PT2 raw payloads directly, torch.save pickles through
// the nested zip's data.pkl.
//
//===----------------------------------------------------------------------===//
#include "Serde/ProgramReader.h"
#include "Serde/ExportJsonDom.h"
#include "Serde/JsonWriter.h"
#include "Serde/PayloadConfig.h"
#include "Serde/ProgramJson.h"
#include "Serde/Safetensors.h"
#include "Serde/TorchPickle.h"
#include "Serde/ZipArchive.h"
#include "Support/FileIO.h"
#include "Support/Parallel.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <filesystem>
#include <unordered_map>

namespace exir {

namespace fs = std::filesystem;

const char *inputFormatName(InputFormat format) {
  switch (format) {
  case InputFormat::ArtifactJson: return "program artifact JSON";
  case InputFormat::ExportJson: return "torch.export JSON";
  case InputFormat::Pt2Archive: return "PT2 archive";
  case InputFormat::LegacyExportZip: return "legacy torch.export zip";
  case InputFormat::ETRecord: return "ETRecord";
  }
  return "?";
}

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
bool startsWith(const std::string &s, const std::string &prefix) { return s.rfind(prefix, 0) == 0; }

struct ArchiveLayout {
  InputFormat format;
  std::string root; // folder prefix every member name starts with ("" or "name/")
};

// The prefix before `leaf` if `name` is `leaf` directly under at most one folder.
std::optional<std::string> rootOf(const std::string &name, const std::string &leaf) {
  if (name == leaf) return std::string();
  if (!endsWith(name, "/" + leaf)) return std::nullopt;
  std::string root = name.substr(0, name.size() - leaf.size());
  if (root.find('/') != root.size() - 1) return std::nullopt;
  return root;
}

ArchiveLayout detectLayout(const ZipArchive &zip) {
  for (const auto &m : zip.members()) {
    if (auto root = rootOf(m.name, "archive_format")) {
      std::string format = zip.read(m.name);
      while (!format.empty() && std::isspace(static_cast<unsigned char>(format.back()))) format.pop_back();
      if (format != "pt2")
        throw Error("unsupported archive_format '" + format + "' (expected 'pt2')", zip.displayName());
      return {InputFormat::Pt2Archive, *root};
    }
  }
  for (const auto &m : zip.members()) {
    if (auto root = rootOf(m.name, "serialized_exported_program.json"))
      return {InputFormat::LegacyExportZip, *root};
    if (m.name == "ETRECORD_V0") return {InputFormat::ETRecord, ""};
  }
  throw Error("zip archive is not a torch.export archive (no archive_format, "
              "serialized_exported_program.json or ETRECORD_V0 member)",
              zip.displayName());
}

// The containers that grow with a program (its nodes, tensor table, input
// specs, constants and delegates), read in batches rather than as one DOM
// (Serde/JsonBatch.h); every reader of them asks json::Reader::deferred.
const std::vector<std::string> &programBigContainers() {
  static const std::vector<std::string> patterns = [] {
    std::vector<std::string> out;
    for (std::string method : {"", "/methods/*"})
      for (const char *container : {"/graph_module/graph/nodes", "/graph_module/graph/tensor_values",
                                    "/graph_module/signature/input_specs"})
        out.push_back(method + container);
    out.push_back("/constants");
    out.push_back("/delegates");
    return out;
  }();
  return patterns;
}

ExportedProgram readMemberProgram(const std::string &where, json::PaddedText text) {
  // Parsed where the archive is mapped.
  json::Document doc(std::move(text), where, programBigContainers());
  json::Reader reader(where, doc);
  return exportedProgramFromDom(doc.root(), reader);
}

ExportedProgram readMemberProgram(const ZipArchive &zip, const std::string &member) {
  return readMemberProgram(zip.displayName() + ":" + member, zip.readText(member));
}

std::vector<std::string> pt2Models(const ZipArchive &zip, const ArchiveLayout &layout) {
  std::vector<std::string> models;
  std::string prefix = layout.root + "models/";
  for (const auto &m : zip.members())
    if (startsWith(m.name, prefix) && endsWith(m.name, ".json") &&
        m.name.find('/', prefix.size()) == std::string::npos)
      models.push_back(m.name.substr(prefix.size(), m.name.size() - prefix.size() - 5));
  if (models.empty())
    throw Error("PT2 archive has no models/*.json (an AOTInductor-only package?)", zip.displayName());
  return models;
}

/// The archive's programs as (name, member), in the order they are read.
std::vector<std::pair<std::string, std::string>> programMembers(const ZipArchive &zip, const ArchiveLayout &layout) {
  std::vector<std::pair<std::string, std::string>> out;
  switch (layout.format) {
  case InputFormat::Pt2Archive:
    for (const auto &model : pt2Models(zip, layout)) out.emplace_back(model, layout.root + "models/" + model + ".json");
    break;
  case InputFormat::LegacyExportZip:
    out.emplace_back("serialized_exported_program", layout.root + "serialized_exported_program.json");
    break;
  case InputFormat::ETRecord:
    for (const char *name : {"edge_dialect_exported_program", "exported_program"})
      if (zip.find(name)) out.emplace_back(name, name);
    for (const auto &m : zip.members())
      if (startsWith(m.name, "aten_dialect_output/") && !endsWith(m.name, "_state_dict") &&
          !endsWith(m.name, "_constants") && !endsWith(m.name, "_example_inputs"))
        out.emplace_back(m.name, m.name);
    if (out.empty()) throw Error("ETRecord holds no exported program", zip.displayName());
    break;
  default: break;
  }
  return out;
}

std::vector<std::pair<std::string, ExportedProgram>> archivePrograms(const ZipArchive &zip,
                                                                     const ArchiveLayout &layout) {
  std::vector<std::pair<std::string, ExportedProgram>> out;
  for (const auto &[name, member] : programMembers(zip, layout))
    out.emplace_back(name, readMemberProgram(zip, member));
  return out;
}

std::string absolutePath(const std::string &path) { return fs::absolute(path).lexically_normal().string(); }

void addConstant(OrderedMap<ConstantTensor> &out, const std::string &fqn, ConstantTensor c,
                 const std::string &where) {
  if (const ConstantTensor *existing = out.find(fqn)) {
    if (!(*existing == c)) throw Error("constant '" + fqn + "' is defined twice with different data", where);
    return; // the same data again (a tied weight listed twice)
  }
  out.set(fqn, std::move(c));
}

// A STORED member's data is its uncompressed bytes, so the zip's own CRC-32 is
// the CRC of the referenced range: staleness checks cost no extra read here.
void stampArchiveRange(DataRef &ref, const ZipArchive &archive, uint32_t crc) {
  ref.fileSize = archive.fileSize();
  ref.crc32 = crc;
}

// Tensors of a torch.save zip stored as member `member` of `outer`.
void addTorchSaveConstants(const ZipArchive &outer, const std::string &member,
                           OrderedMap<ConstantTensor> &out) {
  const ZipMember *m = outer.find(member);
  if (!m || m->size == 0) return; // a zero-byte member is an empty dict
  std::string where = outer.displayName() + ":" + member;
  if (!m->stored) throw Error("nested torch.save archive is compressed; cannot reference its weights", where);
  ZipArchive inner(outer.path(), outer.dataOffset(member), m->size, where);
  std::optional<std::string> root;
  for (const auto &im : inner.members())
    if ((root = rootOf(im.name, "data.pkl"))) break;
  if (!root) throw Error("torch.save archive has no data.pkl", where);
  std::string file = absolutePath(outer.path());
  for (auto &[key, tensor] : readPickledTensors(inner.read(*root + "data.pkl"), where + ":" + *root + "data.pkl")) {
    if (tensor.fake) continue; // exported under FakeTensorMode: there are no bytes to reference
    std::string storage = *root + "data/" + tensor.storageKey;
    const ZipMember *sm = inner.find(storage);
    if (!sm) throw Error("storage '" + storage + "' of tensor '" + key + "' is missing", where);
    ConstantTensor c;
    c.dtype = tensor.dtype;
    c.sizes = tensor.sizes;
    c.strides = tensor.strides;
    c.storageOffset = tensor.storageOffset;
    c.data.file = file;
    c.data.offset = inner.dataOffset(*sm);
    c.data.length = sm->size;
    stampArchiveRange(c.data, outer, sm->crc);
    addConstant(out, key, std::move(c), where);
  }
}

std::vector<int64_t> staticInts(const std::vector<SymInt> &values, const std::string &fqn,
                                const std::string &where) {
  std::vector<int64_t> out;
  out.reserve(values.size());
  for (const auto &v : values) {
    if (v.isExpr) throw Error("constant '" + fqn + "' has a symbolic shape", where);
    out.push_back(v.value);
  }
  return out;
}

/// `name`, tried first as the member after `last` (torch writes payloads in
/// config order: a 100k-weight archive then costs no hash lookups, each a
/// cache miss or three); `last` becomes the member found.
const ZipMember *findNextMember(const ZipArchive &zip, const std::string &name, const ZipMember *&last) {
  const std::vector<ZipMember> &members = zip.members();
  if (last && last + 1 < members.data() + members.size() && last[1].name == name) return ++last;
  return last = zip.find(name);
}

/// The constant `fqn` of a PayloadConfig entry whose metadata is read: `meta`
/// fills in its dtype and view, after the member is found (the order in which
/// problems are reported). Shared by the scanned and the DOM-read configs.
template <typename FillMeta>
void addPayloadTensor(const ZipArchive &zip, const std::string &fqn, const std::string &member,
                      std::string_view pathName, bool usePickle, const std::string &file, const ZipMember *&last,
                      json::Reader &r, const std::string &where, OrderedMap<ConstantTensor> &out,
                      const FillMeta &meta) {
  if (usePickle) {
    // A tensor subclass saved with torch.save: the member is itself a zip.
    OrderedMap<ConstantTensor> pickled;
    addTorchSaveConstants(zip, member, pickled);
    if (pickled.size() != 1)
      r.fail("pickled payload '" + std::string(pathName) + "' does not hold exactly one plain tensor");
    addConstant(out, fqn, pickled.begin()->second, where);
    return;
  }
  const ZipMember *m = findNextMember(zip, member, last);
  if (!m) r.fail("payload member '" + member + "' is missing from the archive");
  ConstantTensor c;
  meta(c);
  c.data.file = file;
  c.data.offset = zip.dataOffset(*m);
  c.data.length = m->size;
  stampArchiveRange(c.data, zip, m->crc);
  addConstant(out, fqn, std::move(c), where);
}

// Raw payloads (torch 2.9+) described by a PayloadConfig member.
void addPayloadConstants(const ZipArchive &zip, const std::string &folder, const std::string &configMember,
                         OrderedMap<ConstantTensor> &out) {
  std::string where = zip.displayName() + ":" + configMember;
  // Mapped from the archive: a 100k-weight config is 30 MB.
  json::PaddedText text = zip.readText(configMember);
  json::Reader r(where);
  std::string file = absolutePath(zip.path());
  std::string fqn, member;
  const ZipMember *last = nullptr;
  // PaddedText is followed by SIMDJSON_PADDING readable bytes.
  simdjson::padded_string_view padded(text.data(), text.size(), text.size() + simdjson::SIMDJSON_PADDING);
  if (std::optional<PayloadTable> table = scanPayloadConfig(padded)) {
    // The common form, read without a DOM; the checks below are the DOM
    // path's, in its order, at the same JSON pointers.
    json::Reader::KeyScope configScope(r, "config");
    out.reserve(out.size() + table->entries.size());
    const int64_t *ints = table->ints.data();
    for (const PayloadEntry &entry : table->entries) {
      json::Reader::KeyScope entryScope(r, entry.fqn);
      if (entry.pathName.empty()) r.fail("missing required field 'path_name' of PayloadMeta");
      if (!entry.tensor) continue; // a TorchBind custom object, not a tensor
      fqn.assign(entry.fqn);
      member.assign(folder).append(entry.pathName);
      addPayloadTensor(zip, fqn, member, entry.pathName, entry.usePickle, file, last, r, where, out,
                       [&](ConstantTensor &c) {
                         c.dtype = entry.dtype;
                         c.sizes.assign(ints + entry.sizesAt, ints + entry.sizesAt + entry.sizesCount);
                         c.strides.assign(ints + entry.stridesAt, ints + entry.stridesAt + entry.stridesCount);
                         c.storageOffset = entry.storageOffset;
                       });
    }
    return;
  }
  // Anything else (and every error) through the DOM, parsed in the mapped text.
  json::Document doc(std::move(text), where);
  json::Object root = r.object(doc.root());
  auto config = root.at_key("config");
  if (config.error()) r.fail("missing required field 'config' of PayloadConfig");
  json::Reader::KeyScope configScope(r, "config");
  json::Object entries = r.object(config.value_unsafe());
  out.reserve(out.size() + entries.size());
  for (auto entry : entries) {
    json::Reader::KeyScope entryScope(r, entry.key);
    fqn.assign(entry.key);
    json::Object meta = r.object(entry.value);
    std::string pathName;
    bool usePickle = false;
    std::optional<TensorMeta> tensorMeta;
    for (auto field : meta) {
      json::Reader::KeyScope fieldScope(r, field.key);
      if (field.key == "path_name") pathName = r.string(field.value);
      else if (field.key == "use_pickle") usePickle = r.boolean(field.value);
      else if (field.key == "tensor_meta" && !r.isNull(field.value))
        tensorMeta = tensorMetaFromDom(field.value, r);
    }
    if (pathName.empty()) r.fail("missing required field 'path_name' of PayloadMeta");
    if (!tensorMeta) continue; // a TorchBind custom object, not a tensor
    member.assign(folder).append(pathName);
    addPayloadTensor(zip, fqn, member, pathName, usePickle, file, last, r, where, out, [&](ConstantTensor &c) {
      c.dtype = tensorMeta->dtype;
      c.sizes = staticInts(tensorMeta->sizes, fqn, where);
      c.strides = staticInts(tensorMeta->strides, fqn, where);
      if (tensorMeta->storageOffset.isExpr) r.fail("symbolic storage offset");
      c.storageOffset = tensorMeta->storageOffset.value;
    });
  }
}

OrderedMap<ConstantTensor> archiveConstants(const ZipArchive &zip, const ArchiveLayout &layout) {
  OrderedMap<ConstantTensor> out;
  switch (layout.format) {
  case InputFormat::Pt2Archive: {
    if (const ZipMember *bo = zip.find(layout.root + "byteorder")) {
      (void)bo;
      std::string order = zip.read(layout.root + "byteorder");
      if (startsWith(order, "big"))
        throw Error("big-endian weights are not supported", zip.displayName() + ":" + layout.root + "byteorder");
    }
    for (const auto &model : pt2Models(zip, layout)) {
      for (const char *kind : {"weights", "constants"}) {
        std::string folder = layout.root + "data/" + kind + "/";
        std::string config = folder + model + "_" + kind + "_config.json";
        if (zip.find(config)) addPayloadConstants(zip, folder, config, out);
        else addTorchSaveConstants(zip, folder + model + ".pt", out); // torch 2.8
      }
    }
    break;
  }
  case InputFormat::LegacyExportZip:
    for (const char *name : {"serialized_state_dict", "serialized_constants"})
      for (const char *ext : {".pt", ".json"})
        addTorchSaveConstants(zip, layout.root + name + ext, out);
    break;
  case InputFormat::ETRecord:
    for (const char *name : {"edge_dialect_exported_program_state_dict", "edge_dialect_exported_program_constants"})
      addTorchSaveConstants(zip, name, out);
    if (!zip.find("edge_dialect_exported_program"))
      for (const char *name : {"exported_program_state_dict", "exported_program_constants"})
        addTorchSaveConstants(zip, name, out);
    break;
  default: break;
  }
  return out;
}

// Members from which a second thread reads the constants table while the
// program JSON is parsed: below this the thread would cost more than it saves.
constexpr size_t kConstantsThreadMembers = 1024;

Program programFromArchive(const std::string &path, InputFormat &format) {
  ZipArchive zip(path);
  ArchiveLayout layout = detectLayout(zip);
  format = layout.format;
  // The programs and the constants table come from different members and
  // share only the (read-only) archive, so a large archive's table (a 30 MB
  // config for 100k weights) is read beside the program JSON. runBeside
  // reports the programs' error first, as the sequential order does.
  std::vector<std::pair<std::string, ExportedProgram>> programs;
  OrderedMap<ConstantTensor> constants;
  auto readPrograms = [&] { programs = archivePrograms(zip, layout); };
  auto readConstants = [&] { constants = archiveConstants(zip, layout); };
  if (zip.members().size() < kConstantsThreadMembers) {
    readPrograms();
    readConstants();
  } else if (auto members = programMembers(zip, layout); members.size() == 1 && zip.find(members[0].second)) {
    // One program (the usual case): its text is parsed on the second thread
    // while this one checks the text's CRC (10 ms for 120 MB, no longer ahead
    // of the parse) and then reads the constants table. The errors are the
    // sequential order's: the CRC's, then the program's, then the table's.
    const std::string &name = members[0].first, &member = members[0].second; // (lambdas capture no bindings)
    std::exception_ptr crcError, programError, constantsError;
    runBeside(
        [&] {
          try {
            std::string where = zip.displayName() + ":" + member;
            json::PaddedText text = zip.mapUnchecked(member);
            if (text.empty()) text = zip.readText(member); // read whole, CRC-checked
            programs.emplace_back(name, readMemberProgram(where, std::move(text)));
          } catch (...) {
            programError = std::current_exception();
          }
        },
        [&] {
          try {
            zip.checkStoredCrc(member);
          } catch (...) {
            crcError = std::current_exception();
            return;
          }
          try {
            readConstants();
          } catch (...) {
            constantsError = std::current_exception();
          }
        });
    for (const std::exception_ptr &error : {crcError, programError, constantsError})
      if (error) std::rethrow_exception(error);
  } else {
    runBeside(readPrograms, readConstants);
  }
  Program p;
  if (layout.format == InputFormat::Pt2Archive && programs.size() > 1) {
    for (auto &[model, ep] : programs) p.methods.set(model, Method{std::move(ep), std::nullopt});
  } else {
    // One program: the ETRecord lists its edge program first, which is the one we want.
    p.methods.set("forward", Method{std::move(programs.front().second), std::nullopt});
  }
  p.stage = guessStage(p.methods.begin()->second.program);
  p.constants = std::move(constants);
  p.baseDirectory = fs::absolute(parentDirectory(path)).lexically_normal().string();
  return p;
}

std::string jsonBaseDirectory(const std::string &path) {
  return path == "-" ? fs::current_path().string() : parentDirectory(path);
}

// Refuses a zip piped through stdin: its weights need a file to point into.
json::PaddedText loadJsonInput(const std::string &path) {
  json::PaddedText text = json::loadPadded(path);
  checkInputNotEmpty(std::string_view(text.data(), text.size()), path);
  if (text.size() >= 4 && std::memcmp(text.data(), "PK\3\4", 4) == 0)
    throw Error("a zip archive cannot be read from stdin (its weights must stay in a file); pass its path",
                path);
  // Binary input (a .pte, .ptd or anything else that is not text) would otherwise
  // be reported as a JSON syntax error at byte 0, which hides what went wrong.
  size_t first = 0;
  auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (first < text.size() && isSpace(text.data()[first])) ++first;
  if (first < text.size()) {
    unsigned char c = static_cast<unsigned char>(text.data()[first]);
    if (c < 0x20 || c >= 0x80 || c == '<')
      throw Error("neither JSON nor a known binary format: expected a program artifact or torch.export "
                  "JSON, a .pt2 archive, or (for exir-inspect and exir-run) a .pte",
                  path, "byte " + std::to_string(first));
  }
  return text;
}

} // namespace

void checkInputNotEmpty(std::string_view bytes, const std::string &path) {
  if (bytes.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw Error("input is empty (did the previous stage fail?)", path);
}

InputFormat detectInputFormat(const std::string &path) {
  if (looksLikeZip(path)) {
    ZipArchive zip(path);
    return detectLayout(zip).format;
  }
  json::Document doc(loadJsonInput(path), path);
  json::Reader r(path);
  json::Object root = r.object(doc.root());
  if (!root.at_key("format").error()) return InputFormat::ArtifactJson;
  if (!root.at_key("graph_module").error()) return InputFormat::ExportJson;
  throw Error("neither a program artifact (no 'format') nor a torch.export ExportedProgram "
              "(no 'graph_module')",
              path, "/");
}

namespace {

/// A program from JSON text already in memory; `path` names it in errors and
/// gives the base directory of relative data references ("-": the current one).
Program programFromJsonText(json::PaddedText text, const std::string &path, InputFormat &format,
                            const ReadOptions &options = {}) {
  checkInputNotEmpty(std::string_view(text.data(), text.size()), path);
  json::Document doc(std::move(text), path, programBigContainers());
  json::Reader r(path, doc);
  json::Object root = r.object(doc.root());
  ExportJsonOptions exportOptions;
  exportOptions.skipNodeMetadata = options.skipNodeMetadata;
  format = InputFormat::ArtifactJson;
  if (!root.at_key("format").error()) return programFromDom(doc.root(), r, jsonBaseDirectory(path), exportOptions);
  format = InputFormat::ExportJson;
  if (!root.at_key("graph_module").error() || !root.at_key("schema_version").error()) {
    Program p = programFromExportedProgram(exportedProgramFromDom(doc.root(), r, exportOptions), Stage::Aten);
    p.stage = guessStage(p.methods.begin()->second.program);
    p.baseDirectory = fs::absolute(jsonBaseDirectory(path)).lexically_normal().string();
    return p;
  }
  throw Error("neither a program artifact (no 'format') nor a torch.export ExportedProgram "
              "(no 'graph_module')",
              path, "/");
}

} // namespace

Program readProgram(const std::string &path) {
  InputFormat format;
  return readProgram(path, format);
}

Program readProgram(const std::string &path, InputFormat &format, const ReadOptions &options) {
  if (looksLikeZip(path)) {
    return programFromArchive(path, format); // one open of the archive, not two
  }
  return programFromJsonText(loadJsonInput(path), path, format, options);
}

Program readProgramFromText(std::string_view text, const std::string &path) {
  if (text.size() >= 4 && std::memcmp(text.data(), "PK\3\4", 4) == 0)
    throw Error("a zip archive cannot be read from stdin (its weights must stay in a file); pass its path",
                path);
  InputFormat format;
  return programFromJsonText(simdjson::padded_string(text), path, format);
}

std::vector<std::pair<std::string, ExportedProgram>> readArchivePrograms(const std::string &path) {
  ZipArchive zip(path);
  return archivePrograms(zip, detectLayout(zip));
}

OrderedMap<ConstantTensor> readArchiveConstants(const std::string &path) {
  ZipArchive zip(path);
  return archiveConstants(zip, detectLayout(zip));
}

namespace {

bool liftsConstant(const InputSpec &spec) {
  return spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
         spec.kind == InputKind::TensorConstant;
}

std::string metaText(ScalarType dtype, const std::vector<int64_t> &sizes) {
  std::string out = std::string(shortName(dtype)) + "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(sizes[i]);
  return out + "]";
}

} // namespace

std::vector<std::string> constantsWithoutData(const Program &program) {
  std::vector<std::string> out;
  for (const auto &[methodName, method] : program.methods)
    for (const auto &spec : method.program.signature.inputSpecs)
      if (liftsConstant(spec) && !program.constants.contains(spec.target) &&
          std::find(out.begin(), out.end(), spec.target) == out.end())
        out.push_back(spec.target);
  return out;
}

void attachWeights(Program &program, const std::string &weightsPath) {
  OrderedMap<ConstantTensor> weights =
      looksLikeZip(weightsPath) ? readArchiveConstants(weightsPath) : readSafetensors(weightsPath);
  for (const auto &[methodName, method] : program.methods) {
    const ExportedProgram &ep = method.program;
    for (const auto &spec : ep.signature.inputSpecs) {
      if (!liftsConstant(spec)) continue;
      const ConstantTensor *w = weights.find(spec.target);
      if (!w)
        throw Error("no tensor '" + spec.target + "' (input '" + spec.arg.name + "' of method '" + methodName + "')",
                    weightsPath);
      if (const TensorMeta *meta = ep.graph.tensorValues.find(spec.arg.name)) {
        std::vector<int64_t> sizes;
        bool symbolic = false;
        for (const auto &s : meta->sizes) {
          symbolic |= s.isExpr;
          sizes.push_back(s.value);
        }
        if (symbolic || meta->dtype != w->dtype || sizes != w->sizes)
          throw Error("tensor '" + spec.target + "' is " + metaText(w->dtype, w->sizes) + " but method '" + methodName +
                          "' expects " + (symbolic ? std::string("a static shape") : metaText(meta->dtype, sizes)),
                      weightsPath);
      }
      program.constants.set(spec.target, *w);
    }
  }
}

namespace {
/// Sizes of data files, stat'ed once each: 100k constants share one archive.
using FileSizes = std::unordered_map<std::string, std::pair<uint64_t, std::error_code>>;

// `what()` and `pointer()` name the reference in errors; they are called only
// on an error (100k constants made 400k strings per check otherwise).
template <typename What, typename Pointer>
void checkDataFile(const DataRef &ref, const What &what, const Pointer &pointer, FileSizes &sizes) {
  if (ref.inlineBytes || ref.file.empty()) return;
  auto [slot, fresh] = sizes.try_emplace(ref.file);
  if (fresh) slot->second.first = fs::file_size(ref.file, slot->second.second);
  auto [size, ec] = slot->second;
  if (ec) throw Error(what() + ": its data file '" + ref.file + "' is missing or unreadable (" + ec.message() + ")", {}, pointer());
  if (ref.fileSize && size != *ref.fileSize)
    throw Error(what() + ": its data file '" + ref.file + "' has " + std::to_string(size) + " bytes but had " +
                    std::to_string(*ref.fileSize) + " when it was referenced: the file was replaced after the artifact was written",
                {}, pointer());
  if (ref.offset > size || ref.length > size - ref.offset)
    throw Error(what() + ": bytes " + std::to_string(ref.offset) + ".." + std::to_string(ref.offset + ref.length) +
                    " of '" + ref.file + "' lie past the end of the file (" + std::to_string(size) + " bytes)",
                {}, pointer());
}
std::string intsText(const std::vector<int64_t> &values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + std::to_string(values[i]);
  return out + "]";
}

// The view (sizes, strides, storage offset) must lie inside the referenced
// bytes, or the emitter would copy bytes of whatever follows in the file.
template <typename What, typename Pointer>
void checkConstantExtent(const ConstantTensor &c, const What &what, const Pointer &pointer) {
  uint64_t length = c.data.inlineBytes ? c.data.inlineBytes->size() : c.data.length;
  if (c.data.file.empty() && !c.data.inlineBytes) return; // no data yet (exir-edge warns)
  auto layout = [&] {
    return std::string(shortName(c.dtype)) + intsText(c.sizes) + " (strides " + intsText(c.strides) +
           ", storage offset " + std::to_string(c.storageOffset) + ")";
  };
  std::optional<uint64_t> needed = c.storageBytesNeeded();
  if (!needed) throw Error(what() + ": " + layout() + " is not a valid view", {}, pointer());
  if (*needed > length)
    throw Error(what() + ": " + layout() + " reads " + std::to_string(*needed) + " bytes of its storage but the data reference holds " +
                    std::to_string(length),
                {}, pointer());
}
} // namespace

void checkDataFiles(const Program &program) {
  FileSizes sizes;
  for (const auto &constant : program.constants) {
    const std::string &fqn = constant.first;
    auto what = [&] { return "constant '" + fqn + "'"; };
    checkDataFile(constant.second.data, what, [&] { return "/constants/" + fqn + "/data"; }, sizes);
    checkConstantExtent(constant.second, what, [&] { return "/constants/" + fqn; });
  }
  for (const auto &delegate : program.delegates) {
    const std::string &name = delegate.first;
    checkDataFile(delegate.second.processed, [&] { return "blob of delegate '" + name + "'"; },
                  [&] { return "/delegates/" + name + "/processed"; }, sizes);
    for (const auto &constant : delegate.second.namedData) {
      const std::string &fqn = constant.first;
      auto what = [&] { return "constant '" + fqn + "' of delegate '" + name + "'"; };
      checkDataFile(constant.second.data, what, [&] { return "/delegates/" + name + "/named_data/" + fqn + "/data"; },
                    sizes);
      checkConstantExtent(constant.second, what, [&] { return "/delegates/" + name + "/named_data/" + fqn; });
    }
  }
}

void writeProgram(const Program &program, const std::string &path) {
  // Streamed in 1 MiB pieces: a 100k-node program is never held as one string.
  writeFileAtomically(path, [&](std::ostream &out) {
    JsonWriter writer;
    std::optional<BufferHandoff> handoff = BufferHandoff::of(out); // outlives the writer's use of it
    if (handoff)
      writer.streamBuffersTo([&](std::string &&filled, size_t size) { return handoff->exchange(std::move(filled), size); });
    else
      writer.streamTo([&](std::string_view text) { out.write(text.data(), std::streamsize(text.size())); });
    writeProgramJson(program, path == "-" ? std::string() : parentDirectory(path), writer);
    writer.flush();
    out.put('\n');
  });
}

} // namespace exir
