//===- Serde/ExportJsonMeta.cpp - tensor and symbolic metadata ------------===//
//
// ScalarType (both numberings, names), Device, SymExpr and the SymInt/SymBool/
// SymFloat unions, and TensorMeta: reader and writer.
//
//===----------------------------------------------------------------------===//
#include "Serde/ExportJsonImpl.h"

namespace exir::exportjson {

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
      d.setType(str(v));
      req.see(0);
    } else if (k == "index") {
      d.setIndex(optionalInt(v));
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
    s.setExpr(symExpr(m.value, hint));
    if (hint) {
      KeyScope hintScope(r_, "hint");
      if (hint->tag == "as_bool") s.setHint(r_.boolean(hint->value));
      else s.setHint(r_.integer(hint->value));
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
  symExpr(s.expr(), s.hint() ? "as_int" : nullptr, [&] { w_.integer(*s.hint()); });
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
  device(m.device.type(), m.device.index());
  w_.key("strides");
  w_.beginArray();
  for (const auto &s : m.strides) symInt(s);
  w_.endArray();
  w_.key("storage_offset");
  symInt(m.storageOffset);
  w_.fieldInt("layout", m.layout);
  w_.endObject();
}

} // namespace exir::exportjson
