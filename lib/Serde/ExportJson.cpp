//===- Serde/ExportJson.cpp - torch.export ExportedProgram JSON <-> IR ----===//
//
// The reader walks the simdjson DOM once, dispatching on keys, so unknown
// fields from newer minors are skipped for free and missing required fields
// are found with a bit mask. Every struct reader mirrors one dataclass of
// torch/_export/serde/schema.py; the writer emits the same fields in the
// dataclass declaration order.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJson.h"
#include "Serde/ExportJsonDom.h"
#include "Serde/JsonWriter.h"

#include <cmath>
#include <functional>
#include <initializer_list>
#include <unordered_map>
#include <unordered_set>

namespace exir {

using json::Array;
using json::Element;
using json::Object;
using json::Reader;

SchemaVersion currentSchemaVersion() { return SchemaVersion{}; }

namespace {

// Minor versions that introduced fields the writer only emits from then on.
constexpr int64_t kGuardsCodeMinor = 15;
constexpr int64_t kNodeNameMinor = 17;

struct EnumName {
  const char *name;
  int64_t value;
};
const EnumName kScalarTypeNames[] = {
    {"UNKNOWN", 0}, {"BYTE", 1}, {"CHAR", 2}, {"SHORT", 3}, {"INT", 4}, {"LONG", 5}, {"HALF", 6},
    {"FLOAT", 7}, {"DOUBLE", 8}, {"COMPLEXHALF", 9}, {"COMPLEXFLOAT", 10}, {"COMPLEXDOUBLE", 11},
    {"BOOL", 12}, {"BFLOAT16", 13}, {"UINT16", 28}, {"FLOAT8E4M3FN", 29}, {"FLOAT8E5M2", 30},
    {"FLOAT8E4M3FNUZ", 31}, {"FLOAT8E5M2FNUZ", 32}, {"UINT32", 34},
    {"UINT64", 35}};
const EnumName kLayoutNames[] = {{"Unknown", 0},   {"SparseCoo", 1}, {"SparseCsr", 2},
                                 {"SparseCsc", 3}, {"SparseBsr", 4}, {"SparseBsc", 5},
                                 {"_mkldnn", 6},   {"Strided", 7}};
const EnumName kMemoryFormatNames[] = {{"Unknown", 0},
                                       {"ContiguousFormat", 1},
                                       {"ChannelsLast", 2},
                                       {"ChannelsLast3d", 3},
                                       {"PreserveFormat", 4}};
const EnumName kArgumentKindNames[] = {{"UNKNOWN", 0}, {"POSITIONAL", 1}, {"KEYWORD", 2}};

template <size_t N>
int64_t readEnum(Reader &r, Element e, const EnumName (&names)[N], const char *enumName) {
  if (e.is_string()) {
    std::string_view s = e.get_string().value_unsafe();
    for (const auto &entry : names)
      if (s == entry.name) return entry.value;
    r.fail(std::string("unknown ") + enumName + " name '" + std::string(s) + "'");
  }
  if (!e.is_int64() && !e.is_uint64()) r.expected((std::string("a ") + enumName + " number").c_str(), e);
  int64_t v = r.integer(e);
  for (const auto &entry : names)
    if (v == entry.value) return v;
  r.fail(std::string("unknown ") + enumName + " value " + std::to_string(v));
}

// Marks required fields seen while iterating an object.
template <size_t N> class Required {
public:
  Required(const char *structName, const char *const (&names)[N]) : structName_(structName) {
    for (size_t i = 0; i < N; ++i) names_[i] = names[i];
  }
  void see(unsigned bit) { seen_ |= 1u << bit; }
  bool has(unsigned bit) const { return seen_ & (1u << bit); }
  void check(Reader &r) const {
    for (size_t bit = 0; bit < N; ++bit)
      if (!(seen_ & (1u << bit)))
        r.fail(std::string("missing required field '") + names_[bit] + "' of " + structName_);
  }

private:
  const char *structName_;
  const char *names_[N];
  unsigned seen_ = 0;
};

struct UnionMember {
  std::string_view tag;
  Element value;
};

//===----------------------------------------------------------------------===//
// Reader
//===----------------------------------------------------------------------===//

class ExportReader {
public:
  ExportReader(Reader &r, const ExportJsonOptions &options) : r_(r), options_(options) {}

  ExportedProgram exportedProgram(Element e);
  TensorMeta tensorMeta(Element e);
  ScalarType scalarType(Element e);

private:
  using KeyScope = Reader::KeyScope;
  using IndexScope = Reader::IndexScope;

  UnionMember unionMember(Element e, const char *unionName);
  // Called inside the member's KeyScope; reports at the union object itself.
  [[noreturn]] void unknownTag(const char *unionName, std::string_view tag) {
    r_.failAtParent(std::string("unknown ") + unionName + " tag '" + std::string(tag) + "'");
  }

  template <typename F> void forEach(Array a, F &&f) {
    int64_t index = 0;
    Reader::LoopScope scope(r_);
    for (Element item : a) {
      scope.index(index++);
      f(item);
    }
  }
  template <typename F> void forEachField(Object o, F &&f) {
    Reader::LoopScope scope(r_);
    for (auto field : o) {
      scope.key(field.key);
      f(field.key, field.value);
    }
  }

  std::string str(Element e) { return std::string(r_.string(e)); }
  std::vector<std::string> strings(Element e);
  std::vector<int64_t> ints(Element e);
  std::optional<int64_t> optionalInt(Element e) {
    if (r_.isNull(e)) return std::nullopt;
    return r_.integer(e);
  }

  Argument argument(Element e);
  std::string tensorArgumentName(Element e);
  std::string optionalTensorArgument(Element e);
  SymArg symArgument(Element e, ArgKind kind);
  Device device(Element e);
  SymInt symInt(Element e);
  SymBool symBool(Element e);
  SymFloat symFloat(Element e);
  // SymExpr {expr_str, hint}: returns the expression and the hint member, if any.
  std::string symExpr(Element e, std::optional<UnionMember> &hint);
  Graph graph(Element e);
  Node node(Element e);
  NamedArgument namedArgument(Element e);
  CustomObjValue customObj(Element e);
  GraphSignature signature(Element e, const Graph &graph);
  GraphSignature legacySignature(Object o, const Graph &graph);
  InputSpec inputSpec(Element e);
  OutputSpec outputSpec(Element e);
  ConstantValue constantValue(Element e);
  ModuleCallEntry moduleCallEntry(Element e);
  ModuleCallSignature moduleCallSignature(Element e);
  RangeConstraint rangeConstraint(Element e);
  std::optional<int64_t> rangeBound(Element e, bool isMin);
  void graphModule(Element e, ExportedProgram &ep);

  Reader &r_;
  ExportJsonOptions options_;
};

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

ScalarType ExportReader::scalarType(Element e) {
  if (e.is_string()) {
    int64_t v = readEnum(r_, e, kScalarTypeNames, "ScalarType");
    if (v == 0) return ScalarType::Undefined;
    auto t = scalarTypeFromSerialized(v);
    if (!t) r_.fail("unsupported ScalarType value " + std::to_string(v));
    return *t;
  }
  if (!e.is_int64() && !e.is_uint64()) r_.expected("a ScalarType number", e);
  int64_t v = r_.integer(e);
  DtypeNumbering numbering = options_.dtypeNumbering;
  if (numbering != DtypeNumbering::Torch && v >= 14 && v <= 16) {
    // exir/serde numbering; these numbers are unused in torch's table.
    static const ScalarType kExecuTorchSerde[] = {ScalarType::UInt16, ScalarType::Float8_e5m2,
                                                  ScalarType::Float8_e4m3fn};
    return kExecuTorchSerde[v - 14];
  }
  if (v == 0) return ScalarType::Undefined;
  if (numbering == DtypeNumbering::ExecuTorchSerde && v > 16)
    r_.fail("ScalarType " + std::to_string(v) + " does not exist in ExecuTorch serde numbering");
  auto t = scalarTypeFromSerialized(v);
  if (!t) r_.fail("unknown ScalarType value " + std::to_string(v));
  return *t;
}

Device ExportReader::device(Element e) {
  Object o = r_.object(e);
  Device d;
  Required req("Device", {"type"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "type") {
      d.type = str(v);
      req.see(0);
    } else if (k == "index") {
      d.index = optionalInt(v);
    }
  });
  req.check(r_);
  return d;
}

std::string ExportReader::symExpr(Element e, std::optional<UnionMember> &hint) {
  if (e.is_string()) return str(e); // torch 2.1: bare expression string
  Object o = r_.object(e);
  std::string expr;
  Required req("SymExpr", {"expr_str"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "expr_str") {
      expr = str(v);
      req.see(0);
    } else if (k == "hint") {
      if (r_.isNull(v)) return;
      if (v.is_object()) {
        UnionMember m = unionMember(v, "SymExprHint");
        if (m.tag != "as_int" && m.tag != "as_bool" && m.tag != "as_float") {
          KeyScope scope(r_, m.tag);
          unknownTag("SymExprHint", m.tag);
        }
        hint = m;
      } else {
        hint = UnionMember{"as_int", v}; // 2.1: plain int hint
      }
    }
  });
  req.check(r_);
  return expr;
}

SymInt ExportReader::symInt(Element e) {
  if (e.is_int64() || e.is_uint64()) return SymInt::of(r_.integer(e)); // 2.1 plain int
  UnionMember m = unionMember(e, "SymInt");
  KeyScope scope(r_, m.tag);
  SymInt s;
  if (m.tag == "as_int") {
    s.value = r_.integer(m.value);
  } else if (m.tag == "as_expr") {
    std::optional<UnionMember> hint;
    s.isExpr = true;
    s.expr = symExpr(m.value, hint);
    if (hint) {
      KeyScope hintScope(r_, "hint");
      if (hint->tag == "as_bool") s.hint = r_.boolean(hint->value);
      else s.hint = r_.integer(hint->value);
    }
  } else {
    unknownTag("SymInt", m.tag);
  }
  return s;
}

SymBool ExportReader::symBool(Element e) {
  UnionMember m = unionMember(e, "SymBool");
  KeyScope scope(r_, m.tag);
  SymBool s;
  if (m.tag == "as_bool") {
    s.value = r_.boolean(m.value);
  } else if (m.tag == "as_expr") {
    std::optional<UnionMember> hint;
    s.isExpr = true;
    s.expr = symExpr(m.value, hint);
    if (hint) {
      KeyScope hintScope(r_, "hint");
      s.hint = hint->value.is_bool() ? r_.boolean(hint->value) : r_.integer(hint->value) != 0;
    }
  } else {
    unknownTag("SymBool", m.tag);
  }
  return s;
}

SymFloat ExportReader::symFloat(Element e) {
  UnionMember m = unionMember(e, "SymFloat");
  KeyScope scope(r_, m.tag);
  SymFloat s;
  if (m.tag == "as_float") {
    s.value = r_.real(m.value);
  } else if (m.tag == "as_expr") {
    std::optional<UnionMember> hint;
    s.isExpr = true;
    s.expr = symExpr(m.value, hint);
    if (hint) {
      KeyScope hintScope(r_, "hint");
      s.hint = r_.real(hint->value);
    }
  } else {
    unknownTag("SymFloat", m.tag);
  }
  return s;
}

TensorMeta ExportReader::tensorMeta(Element e) {
  Object o = r_.object(e);
  TensorMeta m;
  Required req("TensorMeta",
               {"dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"});
  bool wrapped = false;
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "dtype") {
      m.dtype = scalarType(v);
      req.see(0);
    } else if (k == "sizes") {
      Array a = r_.array(v);
      m.sizes.reserve(a.size());
      forEach(a, [&](Element item) { m.sizes.push_back(symInt(item)); });
      req.see(1);
    } else if (k == "requires_grad") {
      m.requiresGrad = r_.boolean(v);
      req.see(2);
    } else if (k == "device") {
      m.device = device(v);
      req.see(3);
    } else if (k == "strides") {
      Array a = r_.array(v);
      m.strides.reserve(a.size());
      forEach(a, [&](Element item) { m.strides.push_back(symInt(item)); });
      req.see(4);
    } else if (k == "storage_offset") {
      m.storageOffset = symInt(v);
      req.see(5);
    } else if (k == "layout") {
      m.layout = readEnum(r_, v, kLayoutNames, "Layout");
      req.see(6);
    } else if (k == "meta" && v.is_object()) {
      m = tensorMeta(v); // torch 2.1 TensorValue wrapper
      wrapped = true;
    }
  });
  if (!wrapped) req.check(r_);
  return m;
}

std::string ExportReader::tensorArgumentName(Element e) {
  if (e.is_string()) return str(e); // torch 2.1 wrote bare names in some places
  Object o = r_.object(e);
  auto name = o.at_key("name");
  if (name.error()) r_.fail("missing required field 'name' of TensorArgument");
  KeyScope scope(r_, "name");
  return str(name.value_unsafe());
}

std::string ExportReader::optionalTensorArgument(Element e) {
  UnionMember m = unionMember(e, "OptionalTensorArgument");
  KeyScope scope(r_, m.tag);
  if (m.tag == "as_tensor") return tensorArgumentName(m.value);
  if (m.tag == "as_none") return {};
  unknownTag("OptionalTensorArgument", m.tag);
}

SymArg ExportReader::symArgument(Element e, ArgKind kind) {
  const char *unionName = kind == ArgKind::SymInt    ? "SymIntArgument"
                          : kind == ArgKind::SymBool ? "SymBoolArgument"
                                                     : "SymFloatArgument";
  UnionMember m = unionMember(e, unionName);
  KeyScope scope(r_, m.tag);
  SymArg s;
  if (m.tag == "as_name") {
    s.isName = true;
    s.name = str(m.value);
  } else if (kind == ArgKind::SymInt && m.tag == "as_int") {
    s.intValue = r_.integer(m.value);
  } else if (kind == ArgKind::SymBool && m.tag == "as_bool") {
    s.intValue = r_.boolean(m.value);
  } else if (kind == ArgKind::SymFloat && m.tag == "as_float") {
    s.floatValue = r_.real(m.value);
  } else {
    unknownTag(unionName, m.tag);
  }
  return s;
}

const std::unordered_map<std::string_view, ArgKind> &argumentTags() {
  static const auto *tags = [] {
    auto *map = new std::unordered_map<std::string_view, ArgKind>();
    for (int k = 0; k <= static_cast<int>(ArgKind::NestedTensors); ++k)
      map->emplace(argKindTag(static_cast<ArgKind>(k)), static_cast<ArgKind>(k));
    return map;
  }();
  return *tags;
}

Argument ExportReader::argument(Element e) {
  UnionMember m = unionMember(e, "Argument");
  KeyScope scope(r_, m.tag);
  auto it = argumentTags().find(m.tag);
  if (it == argumentTags().end()) unknownTag("Argument", m.tag);
  Argument a;
  a.kind = it->second;
  Element v = m.value;
  switch (a.kind) {
  case ArgKind::None:
    break; // payload is true (8.x) or [] (older / ExecuTorch); nothing to keep
  case ArgKind::Tensor:
    a.name = tensorArgumentName(v);
    break;
  case ArgKind::Tensors:
    forEach(r_.array(v), [&](Element item) { a.names.push_back(tensorArgumentName(item)); });
    break;
  case ArgKind::Int:
  case ArgKind::Bool:
    a.intValue = a.kind == ArgKind::Int ? r_.integer(v) : r_.boolean(v);
    break;
  case ArgKind::Ints:
    a.ints = ints(v);
    break;
  case ArgKind::Bools:
    forEach(r_.array(v), [&](Element item) { a.ints.push_back(r_.boolean(item)); });
    break;
  case ArgKind::Float:
    a.floatValue = r_.real(v);
    break;
  case ArgKind::Floats:
    forEach(r_.array(v), [&](Element item) { a.floats.push_back(r_.real(item)); });
    break;
  case ArgKind::String:
  case ArgKind::Operator:
    a.name = str(v);
    break;
  case ArgKind::Strings:
    a.names = strings(v);
    break;
  case ArgKind::SymInt:
  case ArgKind::SymBool:
  case ArgKind::SymFloat:
    a.syms.push_back(symArgument(v, a.kind));
    break;
  case ArgKind::SymInts:
  case ArgKind::SymBools:
  case ArgKind::SymFloats: {
    ArgKind element = a.kind == ArgKind::SymInts    ? ArgKind::SymInt
                      : a.kind == ArgKind::SymBools ? ArgKind::SymBool
                                                    : ArgKind::SymFloat;
    forEach(r_.array(v), [&](Element item) { a.syms.push_back(symArgument(item, element)); });
    break;
  }
  case ArgKind::ScalarType:
    a.intValue = static_cast<int64_t>(scalarType(v));
    break;
  case ArgKind::MemoryFormat:
    a.intValue = readEnum(r_, v, kMemoryFormatNames, "MemoryFormat");
    break;
  case ArgKind::Layout:
    a.intValue = readEnum(r_, v, kLayoutNames, "Layout");
    break;
  case ArgKind::Device: {
    Device d = device(v);
    a.name = d.type;
    a.deviceIndex = d.index;
    break;
  }
  case ArgKind::Graph: {
    Object o = r_.object(v);
    Required req("GraphArgument", {"name", "graph"});
    forEachField(o, [&](std::string_view k, Element f) {
      if (k == "name") {
        a.graphName = str(f);
        req.see(0);
      } else if (k == "graph") {
        a.graph = std::make_shared<Graph>(graph(f));
        req.see(1);
      }
    });
    req.check(r_);
    break;
  }
  case ArgKind::OptionalTensors:
    forEach(r_.array(v), [&](Element item) { a.names.push_back(optionalTensorArgument(item)); });
    break;
  case ArgKind::OptionalTensor:
    a.name = optionalTensorArgument(v);
    break;
  case ArgKind::CustomObj: {
    CustomObjValue c = customObj(v);
    a.name = c.name;
    a.classFqn = c.classFqn;
    break;
  }
  case ArgKind::Complex: {
    Object o = r_.object(v);
    Required req("ComplexValue", {"real", "imag"});
    forEachField(o, [&](std::string_view k, Element f) {
      if (k == "real") {
        a.floatValue = r_.real(f);
        req.see(0);
      } else if (k == "imag") {
        a.imagValue = r_.real(f);
        req.see(1);
      }
    });
    req.check(r_);
    break;
  }
  case ArgKind::IntLists:
    forEach(r_.array(v), [&](Element item) { a.intLists.push_back(ints(item)); });
    break;
  case ArgKind::StringToArgument:
    forEachField(r_.object(v), [&](std::string_view k, Element f) {
      a.mapping.emplace_back(std::string(k), argument(f));
    });
    break;
  case ArgKind::NestedTensors:
    forEach(r_.array(v), [&](Element item) {
      std::vector<std::string> names;
      forEach(r_.array(item), [&](Element t) { names.push_back(tensorArgumentName(t)); });
      a.nestedTensors.push_back(std::move(names));
    });
    break;
  }
  return a;
}

CustomObjValue ExportReader::customObj(Element e) {
  Object o = r_.object(e);
  CustomObjValue c;
  Required req("CustomObjArgument", {"name", "class_fqn"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "name") {
      c.name = str(v);
      req.see(0);
    } else if (k == "class_fqn") {
      c.classFqn = str(v);
      req.see(1);
    }
  });
  req.check(r_);
  return c;
}

NamedArgument ExportReader::namedArgument(Element e) {
  Object o = r_.object(e);
  NamedArgument n;
  Required req("NamedArgument", {"name", "arg"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "name") {
      n.name = str(v);
      req.see(0);
    } else if (k == "arg") {
      n.arg = argument(v);
      req.see(1);
    } else if (k == "kind") {
      if (!r_.isNull(v))
        n.kind = static_cast<ArgumentPassing>(readEnum(r_, v, kArgumentKindNames, "ArgumentKind"));
    }
  });
  req.check(r_);
  return n;
}

Node ExportReader::node(Element e) {
  Object o = r_.object(e);
  Node n;
  Required req("Node", {"target", "inputs", "outputs", "metadata"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "target") {
      n.target = str(v);
      req.see(0);
    } else if (k == "inputs") {
      Array a = r_.array(v);
      n.inputs.reserve(a.size());
      forEach(a, [&](Element item) { n.inputs.push_back(namedArgument(item)); });
      req.see(1);
    } else if (k == "outputs") {
      Array a = r_.array(v);
      n.outputs.reserve(a.size());
      forEach(a, [&](Element item) { n.outputs.push_back(argument(item)); });
      req.see(2);
    } else if (k == "metadata") {
      forEachField(r_.object(v), [&](std::string_view mk, Element mv) {
        n.metadata.set(std::string(mk), str(mv));
      });
      req.see(3);
    } else if (k == "is_hop_single_tensor_return") {
      if (!r_.isNull(v)) n.isHopSingleTensorReturn = r_.boolean(v);
    } else if (k == "name") {
      if (!r_.isNull(v)) n.name = str(v);
    }
  });
  req.check(r_);
  return n;
}

Graph ExportReader::graph(Element e) {
  Object o = r_.object(e);
  Graph g;
  Required req("Graph",
               {"inputs", "outputs", "nodes", "tensor_values", "sym_int_values", "sym_bool_values"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "inputs" || k == "outputs") {
      auto &list = k == "inputs" ? g.inputs : g.outputs;
      forEach(r_.array(v), [&](Element item) { list.push_back(argument(item)); });
      req.see(k == "inputs" ? 0 : 1);
    } else if (k == "nodes") {
      Array a = r_.array(v);
      g.nodes.reserve(a.size());
      forEach(a, [&](Element item) { g.nodes.push_back(node(item)); });
      req.see(2);
    } else if (k == "tensor_values") {
      Object values = r_.object(v);
      g.tensorValues.reserve(values.size());
      forEachField(values, [&](std::string_view name, Element meta) {
        g.tensorValues.set(std::string(name), tensorMeta(meta));
      });
      req.see(3);
    } else if (k == "sym_int_values") {
      forEachField(r_.object(v), [&](std::string_view name, Element s) {
        g.symIntValues.set(std::string(name), symInt(s));
      });
      req.see(4);
    } else if (k == "sym_bool_values") {
      forEachField(r_.object(v), [&](std::string_view name, Element s) {
        g.symBoolValues.set(std::string(name), symBool(s));
      });
      req.see(5);
    } else if (k == "sym_float_values") {
      if (r_.isNull(v)) return;
      forEachField(r_.object(v), [&](std::string_view name, Element s) {
        g.symFloatValues.set(std::string(name), symFloat(s));
      });
    } else if (k == "custom_obj_values") {
      if (r_.isNull(v)) return;
      forEachField(r_.object(v), [&](std::string_view name, Element c) {
        g.customObjValues.set(std::string(name), customObj(c));
      });
    } else if (k == "is_single_tensor_return") {
      if (!r_.isNull(v)) g.isSingleTensorReturn = r_.boolean(v);
    }
  });
  req.check(r_);
  return g;
}

ConstantValue ExportReader::constantValue(Element e) {
  UnionMember m = unionMember(e, "ConstantValue");
  KeyScope scope(r_, m.tag);
  ConstantValue c;
  if (m.tag == "as_none") c.kind = ConstantValue::Kind::None;
  else if (m.tag == "as_int") {
    c.kind = ConstantValue::Kind::Int;
    c.intValue = r_.integer(m.value);
  } else if (m.tag == "as_float") {
    c.kind = ConstantValue::Kind::Float;
    c.floatValue = r_.real(m.value);
  } else if (m.tag == "as_string") {
    c.kind = ConstantValue::Kind::String;
    c.stringValue = str(m.value);
  } else if (m.tag == "as_bool") {
    c.kind = ConstantValue::Kind::Bool;
    c.intValue = r_.boolean(m.value);
  } else {
    unknownTag("ConstantValue", m.tag);
  }
  return c;
}

InputSpec ExportReader::inputSpec(Element e) {
  UnionMember m = unionMember(e, "InputSpec");
  KeyScope scope(r_, m.tag);
  InputSpec spec;
  const char *targetField = nullptr;
  const char *structName = nullptr;
  bool tensorArg = true;
  if (m.tag == "user_input") {
    spec.kind = InputKind::UserInput;
    structName = "UserInputSpec";
    tensorArg = false;
  } else if (m.tag == "parameter") {
    spec.kind = InputKind::Parameter;
    targetField = "parameter_name";
    structName = "InputToParameterSpec";
  } else if (m.tag == "buffer") {
    spec.kind = InputKind::Buffer;
    targetField = "buffer_name";
    structName = "InputToBufferSpec";
    spec.persistent = true; // files older than the field held only persistent buffers
  } else if (m.tag == "tensor_constant") {
    spec.kind = InputKind::TensorConstant;
    targetField = "tensor_constant_name";
    structName = "InputToTensorConstantSpec";
  } else if (m.tag == "custom_obj") {
    spec.kind = InputKind::CustomObj;
    targetField = "custom_obj_name";
    structName = "InputToCustomObjSpec";
    tensorArg = false;
  } else if (m.tag == "token") {
    spec.kind = InputKind::Token;
    structName = "InputTokenSpec";
  } else if (m.tag == "constant_input") {
    spec.kind = InputKind::ConstantInput;
    Object o = r_.object(m.value);
    Required req("InputToConstantInputSpec", {"name", "value"});
    forEachField(o, [&](std::string_view k, Element v) {
      if (k == "name") {
        spec.target = str(v);
        req.see(0);
      } else if (k == "value") {
        spec.constant = constantValue(v);
        req.see(1);
      }
    });
    req.check(r_);
    return spec;
  } else {
    unknownTag("InputSpec", m.tag);
  }
  Object o = r_.object(m.value);
  Required req(structName, {"arg", targetField ? targetField : "arg"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "arg") {
      if (spec.kind == InputKind::CustomObj) {
        CustomObjValue c = customObj(v);
        spec.arg.kind = ArgKind::CustomObj;
        spec.arg.name = c.name;
        spec.arg.classFqn = c.classFqn;
      } else {
        spec.arg = tensorArg ? Argument::tensor(tensorArgumentName(v)) : argument(v);
      }
      req.see(0);
      if (!targetField) req.see(1);
    } else if (targetField && k == targetField) {
      spec.target = str(v);
      req.see(1);
    } else if (k == "persistent" && spec.kind == InputKind::Buffer) {
      if (!r_.isNull(v)) spec.persistent = r_.boolean(v);
    }
  });
  req.check(r_);
  return spec;
}

OutputSpec ExportReader::outputSpec(Element e) {
  UnionMember m = unionMember(e, "OutputSpec");
  KeyScope scope(r_, m.tag);
  OutputSpec spec;
  const char *targetField = nullptr;
  const char *structName = nullptr;
  if (m.tag == "user_output") {
    spec.kind = OutputKind::UserOutput;
    structName = "UserOutputSpec";
  } else if (m.tag == "loss_output" || m.tag == "loss_outout") { // 2.1 spelling
    spec.kind = OutputKind::LossOutput;
    structName = "LossOutputSpec";
  } else if (m.tag == "buffer_mutation") {
    spec.kind = OutputKind::BufferMutation;
    targetField = "buffer_name";
    structName = "BufferMutationSpec";
  } else if (m.tag == "parameter_mutation") {
    spec.kind = OutputKind::ParameterMutation;
    targetField = "parameter_name";
    structName = "ParameterMutationSpec";
  } else if (m.tag == "gradient_to_parameter") {
    spec.kind = OutputKind::GradientToParameter;
    targetField = "parameter_name";
    structName = "GradientToParameterSpec";
  } else if (m.tag == "gradient_to_user_input") {
    spec.kind = OutputKind::GradientToUserInput;
    targetField = "user_input_name";
    structName = "GradientToUserInputSpec";
  } else if (m.tag == "user_input_mutation") {
    spec.kind = OutputKind::UserInputMutation;
    targetField = "user_input_name";
    structName = "UserInputMutationSpec";
  } else if (m.tag == "token") {
    spec.kind = OutputKind::Token;
    structName = "OutputTokenSpec";
  } else {
    unknownTag("OutputSpec", m.tag);
  }
  Object o = r_.object(m.value);
  Required req(structName, {"arg", targetField ? targetField : "arg"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "arg") {
      spec.arg = spec.kind == OutputKind::UserOutput ? argument(v)
                                                     : Argument::tensor(tensorArgumentName(v));
      req.see(0);
      if (!targetField) req.see(1);
    } else if (targetField && k == targetField) {
      spec.target = str(v);
      req.see(1);
    }
  });
  req.check(r_);
  return spec;
}

GraphSignature ExportReader::legacySignature(Object o, const Graph &g) {
  // torch 2.1 dict form: derive specs from the graph's placeholders and outputs.
  std::unordered_map<std::string, std::string> toParameter, toBuffer, mutatedBuffers;
  std::string lossOutput;
  auto readMap = [&](Element v, std::unordered_map<std::string, std::string> &out) {
    if (r_.isNull(v)) return;
    forEachField(r_.object(v), [&](std::string_view k, Element target) {
      out.emplace(std::string(k), str(target));
    });
  };
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "inputs_to_parameters") readMap(v, toParameter);
    else if (k == "inputs_to_buffers") readMap(v, toBuffer);
    else if (k == "buffers_to_mutate") readMap(v, mutatedBuffers);
    else if (k == "backward_signature" && v.is_object()) {
      auto loss = v.get_object().value_unsafe().at_key("loss_output");
      if (!loss.error() && loss.value_unsafe().is_string()) lossOutput = str(loss.value_unsafe());
    }
  });
  GraphSignature sig;
  for (const auto &input : g.inputs) {
    InputSpec spec;
    spec.arg = input;
    if (input.kind == ArgKind::Tensor) {
      if (auto it = toParameter.find(input.name); it != toParameter.end()) {
        spec.kind = InputKind::Parameter;
        spec.target = it->second;
      } else if (auto it2 = toBuffer.find(input.name); it2 != toBuffer.end()) {
        spec.kind = InputKind::Buffer;
        spec.target = it2->second;
        spec.persistent = true;
      }
    }
    sig.inputSpecs.push_back(std::move(spec));
  }
  for (const auto &output : g.outputs) {
    OutputSpec spec;
    spec.arg = output;
    if (output.kind == ArgKind::Tensor) {
      if (auto it = mutatedBuffers.find(output.name); it != mutatedBuffers.end()) {
        spec.kind = OutputKind::BufferMutation;
        spec.target = it->second;
      } else if (output.name == lossOutput) {
        spec.kind = OutputKind::LossOutput;
      }
    }
    sig.outputSpecs.push_back(std::move(spec));
  }
  return sig;
}

GraphSignature ExportReader::signature(Element e, const Graph &g) {
  Object o = r_.object(e);
  GraphSignature sig;
  bool legacy = false;
  Required req("GraphSignature", {"input_specs", "output_specs"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "input_specs") {
      forEach(r_.array(v), [&](Element item) { sig.inputSpecs.push_back(inputSpec(item)); });
      req.see(0);
    } else if (k == "output_specs") {
      forEach(r_.array(v), [&](Element item) { sig.outputSpecs.push_back(outputSpec(item)); });
      req.see(1);
    } else if (k == "user_inputs" || k == "inputs_to_parameters") {
      legacy = true;
    }
  });
  if (legacy && !req.has(0)) return legacySignature(o, g);
  req.check(r_);
  return sig;
}

ModuleCallSignature ExportReader::moduleCallSignature(Element e) {
  Object o = r_.object(e);
  ModuleCallSignature s;
  Required req("ModuleCallSignature", {"inputs", "outputs", "in_spec", "out_spec"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "inputs" || k == "outputs") {
      auto &list = k == "inputs" ? s.inputs : s.outputs;
      forEach(r_.array(v), [&](Element item) { list.push_back(argument(item)); });
      req.see(k == "inputs" ? 0 : 1);
    } else if (k == "in_spec") {
      s.inSpec = str(v);
      req.see(2);
    } else if (k == "out_spec") {
      s.outSpec = str(v);
      req.see(3);
    } else if (k == "forward_arg_names") {
      if (!r_.isNull(v)) s.forwardArgNames = strings(v);
    }
  });
  req.check(r_);
  return s;
}

ModuleCallEntry ExportReader::moduleCallEntry(Element e) {
  Object o = r_.object(e);
  ModuleCallEntry entry;
  Required req("ModuleCallEntry", {"fqn"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "fqn") {
      entry.fqn = str(v);
      req.see(0);
    } else if (k == "signature") {
      if (!r_.isNull(v)) entry.signature = moduleCallSignature(v);
    }
  });
  req.check(r_);
  return entry;
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
      if (k == "in_spec" && !r_.isNull(v)) root.signature->inSpec = str(v);
      else if (k == "out_spec" && !r_.isNull(v)) root.signature->outSpec = str(v);
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

//===----------------------------------------------------------------------===//
// Writer
//===----------------------------------------------------------------------===//

class ExportWriter {
public:
  ExportWriter(JsonWriter &w, SchemaVersion version) : w_(w), version_(version) {}

  void exportedProgram(const ExportedProgram &ep);
  void tensorMeta(const TensorMeta &m);

private:
  void tensorArgument(const std::string &name) {
    w_.beginObject();
    w_.field("name", name);
    w_.endObject();
  }
  void optionalTensor(const std::string &name) {
    w_.beginObject();
    if (name.empty()) {
      w_.key("as_none");
      w_.boolean(true);
    } else {
      w_.key("as_tensor");
      tensorArgument(name);
    }
    w_.endObject();
  }
  void symArgument(const SymArg &s, ArgKind kind);
  void device(const std::string &type, const std::optional<int64_t> &index);
  void symExpr(const std::string &expr, const char *hintTag, const std::function<void()> &hint);
  void symInt(const SymInt &s);
  void symBool(const SymBool &s);
  void symFloat(const SymFloat &s);
  void argument(const Argument &a);
  void graph(const Graph &g);
  void node(const Node &n);
  void customObj(const std::string &name, const std::string &classFqn);
  void inputSpec(const InputSpec &s);
  void outputSpec(const OutputSpec &s);
  void moduleCallEntry(const ModuleCallEntry &entry);
  void strings(const std::vector<std::string> &list) {
    w_.beginArray();
    for (const auto &s : list) w_.string(s);
    w_.endArray();
  }
  void ints(const std::vector<int64_t> &list) {
    w_.beginArray();
    for (int64_t v : list) w_.integer(v);
    w_.endArray();
  }
  void optionalInt(const std::optional<int64_t> &v) {
    if (v) w_.integer(*v);
    else w_.null();
  }

  JsonWriter &w_;
  SchemaVersion version_;
};

void ExportWriter::device(const std::string &type, const std::optional<int64_t> &index) {
  w_.beginObject();
  w_.field("type", type);
  w_.key("index");
  optionalInt(index);
  w_.endObject();
}

void ExportWriter::symExpr(const std::string &expr, const char *hintTag,
                           const std::function<void()> &hint) {
  w_.beginObject();
  w_.key("as_expr");
  w_.beginObject();
  w_.field("expr_str", expr);
  w_.key("hint");
  if (hintTag) {
    w_.beginObject();
    w_.key(hintTag);
    hint();
    w_.endObject();
  } else {
    w_.null();
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::symInt(const SymInt &s) {
  if (!s.isExpr) {
    w_.beginObject();
    w_.fieldInt("as_int", s.value);
    w_.endObject();
    return;
  }
  symExpr(s.expr, s.hint ? "as_int" : nullptr, [&] { w_.integer(*s.hint); });
}

void ExportWriter::symBool(const SymBool &s) {
  if (!s.isExpr) {
    w_.beginObject();
    w_.fieldBool("as_bool", s.value);
    w_.endObject();
    return;
  }
  symExpr(s.expr, s.hint ? "as_bool" : nullptr, [&] { w_.boolean(*s.hint); });
}

void ExportWriter::symFloat(const SymFloat &s) {
  if (!s.isExpr) {
    w_.beginObject();
    w_.key("as_float");
    w_.real(s.value);
    w_.endObject();
    return;
  }
  symExpr(s.expr, s.hint ? "as_float" : nullptr, [&] { w_.real(*s.hint); });
}

void ExportWriter::tensorMeta(const TensorMeta &m) {
  w_.beginObject();
  w_.fieldInt("dtype", scalarTypeToSerialized(m.dtype));
  w_.key("sizes");
  w_.beginArray();
  for (const auto &s : m.sizes) symInt(s);
  w_.endArray();
  w_.fieldBool("requires_grad", m.requiresGrad);
  w_.key("device");
  device(m.device.type, m.device.index);
  w_.key("strides");
  w_.beginArray();
  for (const auto &s : m.strides) symInt(s);
  w_.endArray();
  w_.key("storage_offset");
  symInt(m.storageOffset);
  w_.fieldInt("layout", m.layout);
  w_.endObject();
}

void ExportWriter::symArgument(const SymArg &s, ArgKind kind) {
  w_.beginObject();
  if (s.isName) {
    w_.field("as_name", s.name);
  } else if (kind == ArgKind::SymInt) {
    w_.fieldInt("as_int", s.intValue);
  } else if (kind == ArgKind::SymBool) {
    w_.fieldBool("as_bool", s.intValue != 0);
  } else {
    w_.key("as_float");
    w_.real(s.floatValue);
  }
  w_.endObject();
}

void ExportWriter::customObj(const std::string &name, const std::string &classFqn) {
  w_.beginObject();
  w_.field("name", name);
  w_.field("class_fqn", classFqn);
  w_.endObject();
}

void ExportWriter::argument(const Argument &a) {
  w_.beginObject();
  w_.key(argKindTag(a.kind));
  switch (a.kind) {
  case ArgKind::None: w_.boolean(true); break;
  case ArgKind::Tensor: tensorArgument(a.name); break;
  case ArgKind::Tensors:
    w_.beginArray();
    for (const auto &n : a.names) tensorArgument(n);
    w_.endArray();
    break;
  case ArgKind::Int:
  case ArgKind::MemoryFormat:
  case ArgKind::Layout: w_.integer(a.intValue); break;
  case ArgKind::Ints: ints(a.ints); break;
  case ArgKind::Bool: w_.boolean(a.intValue != 0); break;
  case ArgKind::Bools:
    w_.beginArray();
    for (int64_t v : a.ints) w_.boolean(v != 0);
    w_.endArray();
    break;
  case ArgKind::Float: w_.real(a.floatValue); break;
  case ArgKind::Floats:
    w_.beginArray();
    for (double v : a.floats) w_.real(v);
    w_.endArray();
    break;
  case ArgKind::String:
  case ArgKind::Operator: w_.string(a.name); break;
  case ArgKind::Strings: strings(a.names); break;
  case ArgKind::SymInt:
  case ArgKind::SymBool:
  case ArgKind::SymFloat:
    if (a.syms.size() != 1)
      throw InternalError(std::string(argKindTag(a.kind)) + " argument must hold exactly one value");
    symArgument(a.syms[0], a.kind);
    break;
  case ArgKind::SymInts:
  case ArgKind::SymBools:
  case ArgKind::SymFloats: {
    ArgKind element = a.kind == ArgKind::SymInts    ? ArgKind::SymInt
                      : a.kind == ArgKind::SymBools ? ArgKind::SymBool
                                                    : ArgKind::SymFloat;
    w_.beginArray();
    for (const auto &s : a.syms) symArgument(s, element);
    w_.endArray();
    break;
  }
  case ArgKind::ScalarType:
    w_.integer(scalarTypeToSerialized(static_cast<ScalarType>(a.intValue)));
    break;
  case ArgKind::Device: device(a.name, a.deviceIndex); break;
  case ArgKind::Graph:
    w_.beginObject();
    w_.field("name", a.graphName);
    w_.key("graph");
    if (!a.graph) throw InternalError("as_graph argument without a graph");
    graph(*a.graph);
    w_.endObject();
    break;
  case ArgKind::OptionalTensors:
    w_.beginArray();
    for (const auto &n : a.names) optionalTensor(n);
    w_.endArray();
    break;
  case ArgKind::OptionalTensor: optionalTensor(a.name); break;
  case ArgKind::CustomObj: customObj(a.name, a.classFqn); break;
  case ArgKind::Complex:
    w_.beginObject();
    w_.key("real");
    w_.real(a.floatValue);
    w_.key("imag");
    w_.real(a.imagValue);
    w_.endObject();
    break;
  case ArgKind::IntLists:
    w_.beginArray();
    for (const auto &list : a.intLists) ints(list);
    w_.endArray();
    break;
  case ArgKind::StringToArgument:
    w_.beginObject();
    for (const auto &[k, v] : a.mapping) {
      w_.key(k);
      argument(v);
    }
    w_.endObject();
    break;
  case ArgKind::NestedTensors:
    w_.beginArray();
    for (const auto &list : a.nestedTensors) {
      w_.beginArray();
      for (const auto &n : list) tensorArgument(n);
      w_.endArray();
    }
    w_.endArray();
    break;
  }
  w_.endObject();
}

void ExportWriter::node(const Node &n) {
  w_.beginObject();
  w_.field("target", n.target);
  w_.key("inputs");
  w_.beginArray();
  for (const auto &in : n.inputs) {
    w_.beginObject();
    w_.field("name", in.name);
    w_.key("arg");
    argument(in.arg);
    w_.key("kind");
    if (in.kind) w_.integer(static_cast<int64_t>(*in.kind));
    else w_.null();
    w_.endObject();
  }
  w_.endArray();
  w_.key("outputs");
  w_.beginArray();
  for (const auto &out : n.outputs) argument(out);
  w_.endArray();
  w_.key("metadata");
  w_.beginObject();
  for (const auto &[k, v] : n.metadata) w_.field(k, v);
  w_.endObject();
  w_.key("is_hop_single_tensor_return");
  if (n.isHopSingleTensorReturn) w_.boolean(*n.isHopSingleTensorReturn);
  else w_.null();
  if (n.name || version_.minor >= kNodeNameMinor) {
    w_.key("name");
    if (n.name) w_.string(*n.name);
    else w_.null();
  }
  w_.endObject();
}

void ExportWriter::graph(const Graph &g) {
  w_.beginObject();
  w_.key("inputs");
  w_.beginArray();
  for (const auto &a : g.inputs) argument(a);
  w_.endArray();
  w_.key("outputs");
  w_.beginArray();
  for (const auto &a : g.outputs) argument(a);
  w_.endArray();
  w_.key("nodes");
  w_.beginArray();
  for (const auto &n : g.nodes) node(n);
  w_.endArray();
  w_.key("tensor_values");
  w_.beginObject();
  for (const auto &[name, meta] : g.tensorValues) {
    w_.key(name);
    tensorMeta(meta);
  }
  w_.endObject();
  w_.key("sym_int_values");
  w_.beginObject();
  for (const auto &[name, s] : g.symIntValues) {
    w_.key(name);
    symInt(s);
  }
  w_.endObject();
  w_.key("sym_bool_values");
  w_.beginObject();
  for (const auto &[name, s] : g.symBoolValues) {
    w_.key(name);
    symBool(s);
  }
  w_.endObject();
  w_.fieldBool("is_single_tensor_return", g.isSingleTensorReturn);
  w_.key("custom_obj_values");
  w_.beginObject();
  for (const auto &[name, c] : g.customObjValues) {
    w_.key(name);
    customObj(c.name, c.classFqn);
  }
  w_.endObject();
  w_.key("sym_float_values");
  w_.beginObject();
  for (const auto &[name, s] : g.symFloatValues) {
    w_.key(name);
    symFloat(s);
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::inputSpec(const InputSpec &s) {
  w_.beginObject();
  w_.key(inputKindTag(s.kind));
  w_.beginObject();
  switch (s.kind) {
  case InputKind::UserInput:
    w_.key("arg");
    argument(s.arg);
    break;
  case InputKind::Parameter:
  case InputKind::Buffer:
  case InputKind::TensorConstant:
    w_.key("arg");
    tensorArgument(s.arg.name);
    w_.field(s.kind == InputKind::Parameter ? "parameter_name"
             : s.kind == InputKind::Buffer  ? "buffer_name"
                                            : "tensor_constant_name",
             s.target);
    if (s.kind == InputKind::Buffer) w_.fieldBool("persistent", s.persistent);
    break;
  case InputKind::CustomObj:
    w_.key("arg");
    customObj(s.arg.name, s.arg.classFqn);
    w_.field("custom_obj_name", s.target);
    break;
  case InputKind::Token:
    w_.key("arg");
    tensorArgument(s.arg.name);
    break;
  case InputKind::ConstantInput: {
    w_.field("name", s.target);
    w_.key("value");
    w_.beginObject();
    const ConstantValue &c = s.constant;
    switch (c.kind) {
    case ConstantValue::Kind::None: w_.fieldBool("as_none", true); break;
    case ConstantValue::Kind::Int: w_.fieldInt("as_int", c.intValue); break;
    case ConstantValue::Kind::Float:
      w_.key("as_float");
      w_.real(c.floatValue);
      break;
    case ConstantValue::Kind::String: w_.field("as_string", c.stringValue); break;
    case ConstantValue::Kind::Bool: w_.fieldBool("as_bool", c.intValue != 0); break;
    }
    w_.endObject();
    break;
  }
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::outputSpec(const OutputSpec &s) {
  w_.beginObject();
  w_.key(outputKindTag(s.kind));
  w_.beginObject();
  w_.key("arg");
  if (s.kind == OutputKind::UserOutput) argument(s.arg);
  else tensorArgument(s.arg.name);
  switch (s.kind) {
  case OutputKind::BufferMutation: w_.field("buffer_name", s.target); break;
  case OutputKind::ParameterMutation:
  case OutputKind::GradientToParameter: w_.field("parameter_name", s.target); break;
  case OutputKind::GradientToUserInput:
  case OutputKind::UserInputMutation: w_.field("user_input_name", s.target); break;
  default: break;
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::moduleCallEntry(const ModuleCallEntry &entry) {
  w_.beginObject();
  w_.field("fqn", entry.fqn);
  w_.key("signature");
  if (!entry.signature) {
    w_.null();
  } else {
    const auto &s = *entry.signature;
    w_.beginObject();
    w_.key("inputs");
    w_.beginArray();
    for (const auto &a : s.inputs) argument(a);
    w_.endArray();
    w_.key("outputs");
    w_.beginArray();
    for (const auto &a : s.outputs) argument(a);
    w_.endArray();
    w_.field("in_spec", s.inSpec);
    w_.field("out_spec", s.outSpec);
    w_.key("forward_arg_names");
    if (s.forwardArgNames) strings(*s.forwardArgNames);
    else w_.null();
    w_.endObject();
  }
  w_.endObject();
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

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

ExportedProgram exportedProgramFromDom(json::Element e, json::Reader &reader,
                                       const ExportJsonOptions &options) {
  return ExportReader(reader, options).exportedProgram(e);
}

TensorMeta tensorMetaFromDom(json::Element e, json::Reader &reader, const ExportJsonOptions &options) {
  return ExportReader(reader, options).tensorMeta(e);
}

ScalarType scalarTypeFromDom(json::Element e, json::Reader &reader, const ExportJsonOptions &options) {
  return ExportReader(reader, options).scalarType(e);
}

ExportedProgram readExportedProgramJson(std::string_view json, const std::string &file,
                                        const ExportJsonOptions &options) {
  json::Document doc(json, file);
  json::Reader reader(file);
  return exportedProgramFromDom(doc.root(), reader, options);
}

ExportedProgram readExportedProgramJsonFile(const std::string &path, const ExportJsonOptions &options) {
  json::Document doc(json::loadPadded(path), path);
  json::Reader reader(path);
  return exportedProgramFromDom(doc.root(), reader, options);
}

void writeExportedProgramJson(const ExportedProgram &program, JsonWriter &writer) {
  ExportWriter(writer, program.schemaVersion).exportedProgram(program);
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
