//===- Serde/ExportJsonGraph.cpp - arguments, nodes and graphs ------------===//
//
// The Argument union and its member structs (tensor, optional tensor, symbolic,
// graph, custom object, complex), NamedArgument, Node and Graph: reader and writer.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJsonImpl.h"
#include "Serde/Parallel.h"

#include <unordered_map>

namespace exir::exportjson {

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
    forEach(r_.array(v), [&](Element item) { a.mutableFloats().push_back(r_.real(item)); });
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
    a.name = d.type();
    a.mutableDeviceIndex() = d.index();
    break;
  }
  case ArgKind::Graph: {
    Object o = r_.object(v);
    Required req("GraphArgument", {"name", "graph"});
    forEachField(o, [&](std::string_view k, Element f) {
      if (k == "name") {
        a.mutableGraphName() = str(f);
        req.see(0);
      } else if (k == "graph") {
        a.mutableGraph() = std::make_shared<Graph>(graph(f));
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
    a.mutableClassFqn() = c.classFqn;
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
        a.mutableImagValue() = r_.real(f);
        req.see(1);
      }
    });
    req.check(r_);
    break;
  }
  case ArgKind::IntLists:
    forEach(r_.array(v), [&](Element item) { a.mutableIntLists().push_back(ints(item)); });
    break;
  case ArgKind::StringToArgument:
    forEachField(r_.object(v), [&](std::string_view k, Element f) {
      a.mutableMapping().emplace_back(std::string(k), argument(f));
    });
    break;
  case ArgKind::NestedTensors:
    forEach(r_.array(v), [&](Element item) {
      std::vector<std::string> names;
      forEach(r_.array(item), [&](Element t) { names.push_back(tensorArgumentName(t)); });
      a.mutableNestedTensors().push_back(std::move(names));
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
      if (options_.skipNodeMetadata)
        forEachField(r_.object(v), [&](std::string_view, Element mv) { r_.string(mv); }); // same errors
      else
        forEachField(r_.object(v), [&](std::string_view mk, Element mv) {
          n.metadata.set(strings_.intern(mk), strings_.intern(r_.string(mv)));
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
      Array a = r_.array(v);
      list.reserve(a.size());
      forEach(a, [&](Element item) { list.push_back(argument(item)); });
      req.see(k == "inputs" ? 0 : 1);
    } else if (k == "nodes") {
      const json::DeferredContainer *deferred = r_.deferred(v);
      g.nodes.reserve(withRoomToDouble(deferred ? deferred->size() : r_.array(v).size()));
      convertArray(v, g.nodes, [](ExportReader &reader, Element item) { return reader.node(item); });
      req.see(2);
    } else if (k == "tensor_values") {
      const json::DeferredContainer *deferred = r_.deferred(v);
      g.tensorValues.reserve(withRoomToDouble(deferred ? deferred->size() : r_.object(v).size()));
      convertObject(v, g.tensorValues,
                    [](ExportReader &reader, Element meta) { return reader.tensorMeta(meta); });
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
    for (double v : a.floats()) w_.real(v);
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
  case ArgKind::Device: device(a.name, a.deviceIndex()); break;
  case ArgKind::Graph:
    w_.beginObject();
    w_.field("name", a.graphName());
    w_.key("graph");
    if (!a.graph()) throw InternalError("as_graph argument without a graph");
    graph(*a.graph());
    w_.endObject();
    break;
  case ArgKind::OptionalTensors:
    w_.beginArray();
    for (const auto &n : a.names) optionalTensor(n);
    w_.endArray();
    break;
  case ArgKind::OptionalTensor: optionalTensor(a.name); break;
  case ArgKind::CustomObj: customObj(a.name, a.classFqn()); break;
  case ArgKind::Complex:
    w_.beginObject();
    w_.key("real");
    w_.real(a.floatValue);
    w_.key("imag");
    w_.real(a.imagValue());
    w_.endObject();
    break;
  case ArgKind::IntLists:
    w_.beginArray();
    for (const auto &list : a.intLists()) ints(list);
    w_.endArray();
    break;
  case ArgKind::StringToArgument:
    w_.beginObject();
    for (const auto &[k, v] : a.mapping()) {
      w_.key(k);
      argument(v);
    }
    w_.endObject();
    break;
  case ArgKind::NestedTensors:
    w_.beginArray();
    for (const auto &list : a.nestedTensors()) {
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
  for (const auto &[k, v] : n.metadata) w_.field(k.view(), v.view());
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
  if (!parallel_) {
    for (const auto &n : g.nodes) node(n);
  } else {
    json::writeItemsParallel(w_, g.nodes.size(), [&](JsonWriter &w, size_t begin, size_t end) {
      ExportWriter writer(w, version_, false);
      for (size_t i = begin; i < end; ++i) writer.node(g.nodes[i]);
    });
  }
  w_.endArray();
  w_.key("tensor_values");
  w_.beginObject();
  auto writeValues = [&](JsonWriter &w, size_t begin, size_t end) {
    ExportWriter writer(w, version_, false);
    auto it = g.tensorValues.begin() + static_cast<std::ptrdiff_t>(begin);
    for (size_t i = begin; i < end; ++i, ++it) {
      w.key(it->first);
      writer.tensorMeta(it->second);
    }
  };
  if (!parallel_) writeValues(w_, 0, g.tensorValues.size());
  else json::writeItemsParallel(w_, g.tensorValues.size(), writeValues);
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

} // namespace exir::exportjson
