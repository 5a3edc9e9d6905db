//===- Serde/ExportJson.cpp - torch.export ExportedProgram JSON <-> IR ----===//
//
// The reader walks the simdjson DOM once, dispatching on keys, so unknown
// fields from newer minors are skipped for free and missing required fields
// are found with a bit mask. Every struct reader mirrors one dataclass of
// torch/_export/serde/schema.py; the writer emits the same fields in the
// dataclass declaration order. Each schema area has its own file (see
// ExportJsonImpl.h); this one holds unions, the ExportedProgram and
// GraphModule, and the public entry points.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/ExportJsonDom.h"
#include "Serde/ExportJsonImpl.h"

#include <cmath>

namespace exir {

SchemaVersion currentSchemaVersion() { return SchemaVersion{}; }

namespace exportjson {

UnionMember ExportReader::unionMember(Element e, const char *unionName) {
  if (!e.is_object()) r_.expected((std::string("an object (") + unionName + " union)").c_str(), e);
  Object o = e.get_object().value_unsafe();
  UnionMember active{};
  bool found = false;
  size_t count = 0;
  std::string_view onlyNullKey;
  std::string others;
  for (auto field : o) {
    ++count;
    if (field.key == "$type") { // early-2024 {"$type": tag, "$value": payload}
      KeyScope scope(r_, field.key);
      active.tag = r_.string(field.value);
      auto value = o.at_key("$value");
      if (value.error()) r_.failAtParent(std::string("missing '$value' in ") + unionName + " union");
      active.value = value.value_unsafe();
      return active;
    }
    if (field.value.is_null()) {
      onlyNullKey = field.key;
      continue;
    }
    if (found) {
      others += others.empty() ? "'" + std::string(active.tag) + "'" : "";
      others += ", '" + std::string(field.key) + "'";
      continue;
    }
    active = {field.key, field.value};
    found = true;
  }
  if (!others.empty())
    r_.fail(std::string(unionName) + " union has several non-null members: " + others);
  if (!found) {
    // {"as_none": null} is the only sensible reading of a lone null member.
    if (count == 1 && onlyNullKey == "as_none") return {onlyNullKey, Element()};
    r_.fail(std::string(unionName) + " union has no non-null member (expected exactly one)");
  }
  return active;
}

std::vector<std::string> ExportReader::strings(Element e) {
  std::vector<std::string> out;
  Array a = r_.array(e);
  out.reserve(a.size());
  forEach(a, [&](Element item) { out.push_back(str(item)); });
  return out;
}

std::vector<int64_t> ExportReader::ints(Element e) {
  std::vector<int64_t> out;
  Array a = r_.array(e);
  out.reserve(a.size());
  forEach(a, [&](Element item) { out.push_back(r_.integer(item)); });
  return out;
}

std::optional<int64_t> ExportReader::rangeBound(Element e, bool isMin) {
  using simdjson::dom::element_type;
  switch (e.type()) {
  case element_type::NULL_VALUE: return std::nullopt;
  case element_type::INT64: return e.get_int64().value_unsafe();
  case element_type::UINT64: return std::nullopt; // beyond int64: unbounded in practice
  default: {
    // torch 2.1 wrote float bounds, including ±inf (as strings or bare tokens).
    double d = r_.real(e);
    if (std::isnan(d)) r_.fail("range bound is NaN");
    if (std::isinf(d) || std::fabs(d) >= 9.2e18) return std::nullopt;
    return static_cast<int64_t>(isMin ? std::ceil(d) : std::floor(d));
  }
  }
}

RangeConstraint ExportReader::rangeConstraint(Element e) {
  RangeConstraint rc;
  forEachField(r_.object(e), [&](std::string_view k, Element v) {
    if (k == "min_val") rc.minVal = rangeBound(v, true);
    else if (k == "max_val") rc.maxVal = rangeBound(v, false);
  });
  return rc;
}

void ExportReader::graphModule(Element e, ExportedProgram &ep) {
  Object o = r_.object(e);
  Required req("GraphModule", {"graph", "signature", "module_call_graph"});
  std::optional<Element> signatureElement;
  std::optional<Element> callSpec;
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "graph") {
      ep.graph = graph(v);
      req.see(0);
    } else if (k == "signature") {
      signatureElement = v;
      req.see(1);
    } else if (k == "module_call_graph") {
      forEach(r_.array(v), [&](Element item) { ep.moduleCallGraph.push_back(moduleCallEntry(item)); });
      req.see(2);
    } else if (k == "metadata") {
      if (r_.isNull(v)) return;
      forEachField(r_.object(v), [&](std::string_view mk, Element mv) {
        ep.metadata.set(std::string(mk), str(mv));
      });
    } else if (k == "treespec_namedtuple_fields") {
      if (r_.isNull(v)) return;
      forEachField(r_.object(v), [&](std::string_view name, Element def) {
        auto fieldNames = r_.object(def).at_key("field_names");
        if (fieldNames.error()) r_.fail("missing required field 'field_names' of NamedTupleDef");
        KeyScope scope(r_, "field_names");
        ep.treespecNamedtupleFields.set(std::string(name), strings(fieldNames.value_unsafe()));
      });
    } else if (k == "call_spec") {
      callSpec = v; // torch 2.1
    }
  });
  if (callSpec && !req.has(2)) {
    // torch 2.1 had no module_call_graph: synthesize the root entry.
    KeyScope scope(r_, "call_spec");
    ModuleCallEntry root;
    root.signature.emplace();
    forEachField(r_.object(*callSpec), [&](std::string_view k, Element v) {
      if (k == "in_spec" && !r_.isNull(v)) root.signature->inSpec = treeSpec(v);
      else if (k == "out_spec" && !r_.isNull(v)) root.signature->outSpec = treeSpec(v);
    });
    ep.moduleCallGraph.push_back(std::move(root));
    req.see(2);
  }
  req.check(r_);
  KeyScope scope(r_, "signature");
  ep.signature = signature(*signatureElement, ep.graph);
}

ExportedProgram ExportReader::exportedProgram(Element e) {
  Object o = r_.object(e);
  ExportedProgram ep;
  // The version decides how everything else is read, so check it first.
  auto versionField = o.at_key("schema_version");
  if (versionField.error()) {
    if (o.at_key("graph_module").error())
      r_.fail("not a torch.export ExportedProgram (no 'graph_module' and no 'schema_version')");
    r_.fail("missing required field 'schema_version' of ExportedProgram");
  }
  {
    KeyScope scope(r_, "schema_version");
    Element v = versionField.value_unsafe();
    SchemaVersion version;
    if (v.is_int64() || v.is_uint64()) {
      version.major = r_.integer(v); // torch <= 2.2
      version.minor = 0;
    } else {
      Object vo = r_.object(v);
      Required req("SchemaVersion", {"major", "minor"});
      forEachField(vo, [&](std::string_view k, Element f) {
        if (k == "major") {
          version.major = r_.integer(f);
          req.see(0);
        } else if (k == "minor") {
          version.minor = r_.integer(f);
          req.see(1);
        }
      });
      req.check(r_);
    }
    if (version.major == 8) {
      ep.schemaVersion = version;
    } else if (version.major >= 0 && version.major < 8) {
      ep.schemaVersion = currentSchemaVersion(); // upgraded to the form we write
    } else {
      r_.fail("unsupported schema version " + std::to_string(version.major) + "." +
              std::to_string(version.minor) +
              ": this reader supports major 8 (torch 2.6+) and the legacy versions 1-7");
    }
  }

  Required req("ExportedProgram", {"graph_module", "opset_version", "range_constraints"});
  ep.torchVersion = "<=2.4"; // schema.py default for files that predate the field
  bool sawVerifiers = false;
  std::string dialect;
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "graph_module") {
      graphModule(v, ep);
      req.see(0);
    } else if (k == "opset_version") {
      forEachField(r_.object(v), [&](std::string_view ns, Element version) {
        ep.opsetVersion.set(std::string(ns), r_.integer(version));
      });
      req.see(1);
    } else if (k == "range_constraints") {
      forEachField(r_.object(v), [&](std::string_view symbol, Element rc) {
        ep.rangeConstraints.set(std::string(symbol), rangeConstraint(rc));
      });
      req.see(2);
    } else if (k == "verifiers") {
      if (r_.isNull(v)) return;
      ep.verifiers = strings(v);
      sawVerifiers = true;
    } else if (k == "torch_version") {
      if (!r_.isNull(v)) ep.torchVersion = str(v);
    } else if (k == "guards_code") {
      if (!r_.isNull(v)) ep.guardsCode = strings(v);
    } else if (k == "dialect") {
      if (!r_.isNull(v)) dialect = str(v); // 2.2-2.4; replaced by verifiers
    }
  });
  req.check(r_);
  if (!sawVerifiers && !dialect.empty()) ep.verifiers.push_back(dialect);
  return ep;
}

void ExportWriter::exportedProgram(const ExportedProgram &ep) {
  w_.beginObject();
  w_.key("graph_module");
  w_.beginObject();
  w_.key("graph");
  graph(ep.graph);
  w_.key("signature");
  w_.beginObject();
  w_.key("input_specs");
  w_.beginArray();
  for (const auto &s : ep.signature.inputSpecs) inputSpec(s);
  w_.endArray();
  w_.key("output_specs");
  w_.beginArray();
  for (const auto &s : ep.signature.outputSpecs) outputSpec(s);
  w_.endArray();
  w_.endObject();
  w_.key("module_call_graph");
  w_.beginArray();
  for (const auto &entry : ep.moduleCallGraph) moduleCallEntry(entry);
  w_.endArray();
  w_.key("metadata");
  w_.beginObject();
  for (const auto &[k, v] : ep.metadata) w_.field(k, v);
  w_.endObject();
  w_.key("treespec_namedtuple_fields");
  w_.beginObject();
  for (const auto &[name, fields] : ep.treespecNamedtupleFields) {
    w_.key(name);
    w_.beginObject();
    w_.key("field_names");
    strings(fields);
    w_.endObject();
  }
  w_.endObject();
  w_.endObject();

  w_.key("opset_version");
  w_.beginObject();
  for (const auto &[ns, v] : ep.opsetVersion) w_.fieldInt(ns, v);
  w_.endObject();
  w_.key("range_constraints");
  w_.beginObject();
  for (const auto &[symbol, rc] : ep.rangeConstraints) {
    w_.key(symbol);
    w_.beginObject();
    w_.key("min_val");
    optionalInt(rc.minVal);
    w_.key("max_val");
    optionalInt(rc.maxVal);
    w_.endObject();
  }
  w_.endObject();
  w_.key("schema_version");
  w_.beginObject();
  w_.fieldInt("major", ep.schemaVersion.major);
  w_.fieldInt("minor", ep.schemaVersion.minor);
  w_.endObject();
  w_.key("verifiers");
  strings(ep.verifiers);
  w_.field("torch_version", ep.torchVersion);
  if (!ep.guardsCode.empty() || ep.schemaVersion.minor >= kGuardsCodeMinor) {
    w_.key("guards_code");
    strings(ep.guardsCode);
  }
  w_.endObject();
}

} // namespace exportjson

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

ExportedProgram exportedProgramFromDom(json::Element e, json::Reader &reader,
                                       const ExportJsonOptions &options) {
  return exportjson::ExportReader(reader, options).exportedProgram(e);
}

TensorMeta tensorMetaFromDom(json::Element e, json::Reader &reader, const ExportJsonOptions &options) {
  return exportjson::ExportReader(reader, options).tensorMeta(e);
}

ScalarType scalarTypeFromDom(json::Element e, json::Reader &reader, const ExportJsonOptions &options) {
  return exportjson::ExportReader(reader, options).scalarType(e);
}

ExportedProgram readExportedProgramJson(std::string_view json, const std::string &file,
                                        const ExportJsonOptions &options) {
  json::Document doc(json, file);
  json::Reader reader(file);
  return exportedProgramFromDom(doc.root(), reader, options);
}

ExportedProgram readExportedProgramJsonPadded(simdjson::padded_string json, const std::string &file,
                                              const ExportJsonOptions &options) {
  json::Document doc(json::PaddedText(std::move(json)), file);
  json::Reader reader(file);
  return exportedProgramFromDom(doc.root(), reader, options);
}

ExportedProgram readExportedProgramJsonFile(const std::string &path, const ExportJsonOptions &options) {
  json::Document doc(json::loadPadded(path), path);
  json::Reader reader(path);
  return exportedProgramFromDom(doc.root(), reader, options);
}

void writeExportedProgramJson(const ExportedProgram &program, JsonWriter &writer) {
  exportjson::ExportWriter(writer, program.schemaVersion).exportedProgram(program);
}

size_t estimateJsonSize(const ExportedProgram &program) {
  // Typical sizes of a node with metadata and of a tensor_values entry; an
  // accurate reservation avoids regrowing (and re-faulting) a 65 MB buffer.
  return 4096 + program.graph.nodes.size() * 640 + program.graph.tensorValues.size() * 320;
}

std::string writeExportedProgramJson(const ExportedProgram &program) {
  JsonWriter writer;
  writer.reserve(estimateJsonSize(program));
  writeExportedProgramJson(program, writer);
  return writer.take();
}

} // namespace exir
