//===- Serde/ExportJsonImpl.h - The ExportJson reader, writer -*- C++ -*-===//
//
// Internal to lib/Serde: the reader and writer classes behind ExportJson.h,
// shared by the files that implement them, one file per schema area:
//   ExportJson.cpp          unions, the ExportedProgram and GraphModule, entry points
//   ExportJsonMeta.cpp      ScalarType, Device, SymInt/SymBool/SymFloat, TensorMeta
//   ExportJsonGraph.cpp     Argument and its members, Node, Graph
//   ExportJsonSignature.cpp GraphSignature (input/output specs), module call graph
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Serde/ExportJson.h"
#include "Serde/JsonDom.h"
#include "Serde/JsonWriter.h"
#include "Serde/Parallel.h"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exir::exportjson {

using json::Array;
using json::Element;
using json::Object;
using json::Reader;

// Minor versions that introduced fields the writer only emits from then on.
constexpr int64_t kGuardsCodeMinor = 15;
constexpr int64_t kNodeNameMinor = 17;

struct EnumName {
  const char *name;
  int64_t value;
};
inline constexpr EnumName kScalarTypeNames[] = {
    {"UNKNOWN", 0}, {"BYTE", 1}, {"CHAR", 2}, {"SHORT", 3}, {"INT", 4}, {"LONG", 5}, {"HALF", 6},
    {"FLOAT", 7}, {"DOUBLE", 8}, {"COMPLEXHALF", 9}, {"COMPLEXFLOAT", 10}, {"COMPLEXDOUBLE", 11},
    {"BOOL", 12}, {"BFLOAT16", 13}, {"UINT16", 28}, {"FLOAT8E4M3FN", 29}, {"FLOAT8E5M2", 30},
    {"FLOAT8E4M3FNUZ", 31}, {"FLOAT8E5M2FNUZ", 32}, {"UINT32", 34},
    {"UINT64", 35}};
inline constexpr EnumName kLayoutNames[] = {
    {"Unknown", 0},   {"SparseCoo", 1}, {"SparseCsr", 2}, {"SparseCsc", 3},
    {"SparseBsr", 4}, {"SparseBsc", 5}, {"_mkldnn", 6},   {"Strided", 7}};
inline constexpr EnumName kMemoryFormatNames[] = {{"Unknown", 0},
                                                  {"ContiguousFormat", 1},
                                                  {"ChannelsLast", 2},
                                                  {"ChannelsLast3d", 3},
                                                  {"PreserveFormat", 4}};
inline constexpr EnumName kArgumentKindNames[] = {{"UNKNOWN", 0}, {"POSITIONAL", 1}, {"KEYWORD", 2}};

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

class ExportReader {
public:
  /// `parallel`: big arrays may be converted on two threads (off for the
  /// readers of the second thread's parts).
  ExportReader(Reader &r, const ExportJsonOptions &options, bool parallel = true)
      : r_(r), options_(options), parallel_(parallel) {}

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
  // An in_spec/out_spec string, checked with parseTreeSpec (IR/TreeSpec.h).
  std::string treeSpec(Element e);
  RangeConstraint rangeConstraint(Element e);
  std::optional<int64_t> rangeBound(Element e, bool isMin);
  void graphModule(Element e, ExportedProgram &ep);

  /// Appends the elements of the array `v`, converted with
  /// `convert(ExportReader &, Element)`, to `out`; on two threads when there are
  /// many, each half with its own reader and path. A deferred array (see
  /// json::Reader::deferred) is read in batches.
  template <typename T, typename Convert> void convertArray(Element v, std::vector<T> &out, Convert &&convert);
  /// Sets `map[key] = convert(value)` for every field of the object `v`, in
  /// order; the values of the second half are converted on another thread. A
  /// deferred object is read in batches.
  template <typename Map, typename Convert> void convertObject(Element v, Map &map, Convert &&convert);

  Reader &r_;
  ExportJsonOptions options_;
  bool parallel_;
  StringInterner strings_; // node metadata: keys and values repeat across nodes
};

// Items converted between two releases of document memory (DomReleaser).
constexpr size_t kReleaseEvery = 256;

/// Capacity for a graph's node list and tensor table of `n` entries. Every
/// stage's passes append to them (decompositions, write-back copies, delegate
/// calls), and the first append to a full vector moved all of it to fresh
/// memory. With a quarter more room, on llama-100k (3,174 buffer write-backs),
/// exir-plan's insert-buffer-write-back took 10-13 -> 4 ms and to-out-variant
/// 173-219 -> 109-144 ms; exir-edge on mlp-100k 1.55 -> 1.36 s (alternating
/// runs). The room is now twice the entries: to-out-variant adds a
/// memory.alloc node and value for about every node (79k on llama-100k), in
/// place when the room is there. Room never used is only address space:
/// pages are backed when first written.
inline size_t withRoomToDouble(size_t n) { return 2 * n + 16; }

template <typename T, typename Convert>
void ExportReader::convertArray(Element v, std::vector<T> &out, Convert &&convert) {
  Array a = r_.array(v);
  if (const json::DeferredContainer *deferred = r_.deferred(v)) {
    json::convertDeferredArray(
        r_, *deferred, out, *this, [&](Reader &second) { return ExportReader(second, options_, false); }, convert);
    return;
  }
  size_t n = a.size();
  if (!parallel_ || n < json::parallelMinItems() || n < 2) {
    out.reserve(n);
    forEach(a, [&](Element item) { out.push_back(convert(*this, item)); });
    return;
  }
  // Appended, as the serial loop does (a repeated key's items follow the first's).
  const size_t base = out.size();
  out.resize(base + n);
  size_t mid = n / 2;
  // Copied before either half moves the path on.
  Reader secondReader = r_;
  // The second thread walks the first half to find its start while this one
  // converts; until it is past, the first half's memory must stay.
  std::atomic<bool> walked{false};
  // Each half gives back the document memory of what it has converted (the
  // IR owns copies of everything; nothing reads these elements again).
  auto run = [&](Reader &r, ExportReader &reader, Array::iterator it, size_t begin, size_t end, bool mayRelease) {
    Reader::LoopScope scope(r);
    json::DomReleaser releaser(*it);
    for (size_t i = begin; i < end; ++i, ++it) {
      Element item = *it;
      if ((i - begin) % kReleaseEvery == 0 && (mayRelease || walked.load(std::memory_order_acquire)))
        releaser.consumedUpTo(item);
      scope.index(static_cast<int64_t>(i));
      out[base + i] = convert(reader, item);
    }
    if (end < n && (mayRelease || walked.load(std::memory_order_acquire))) releaser.consumedUpTo(*it);
  };
  runBeside([&] { run(r_, *this, a.begin(), 0, mid, false); },
                [&] {
                  Array::iterator it = a.begin();
                  for (size_t i = 0; i < mid; ++i) ++it;
                  walked.store(true, std::memory_order_release);
                  ExportReader reader(secondReader, options_, false);
                  run(secondReader, reader, it, mid, n, true);
                });
}

template <typename Map, typename Convert>
void ExportReader::convertObject(Element v, Map &map, Convert &&convert) {
  Object o = r_.object(v);
  if (const json::DeferredContainer *deferred = r_.deferred(v)) {
    json::convertDeferredObject(
        r_, *deferred, map, *this, [&](Reader &second) { return ExportReader(second, options_, false); }, convert);
    return;
  }
  if (parallel_ &&
      json::convertObjectInHalves(
          r_, o, map, kReleaseEvery, *this,
          [&](Reader &second) { return ExportReader(second, options_, false); }, convert))
    return;
  forEachField(o, [&](std::string_view k, Element v) { map.set(std::string(k), convert(*this, v)); });
}

class ExportWriter {
public:
  /// `parallel`: big graphs may be written on two threads (off for the
  /// writers of fragments, which already run on the second thread).
  ExportWriter(JsonWriter &w, SchemaVersion version, bool parallel = true)
      : w_(w), version_(version), parallel_(parallel) {}

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
  // A std::vector or an Argument's CompactVector.
  template <class List> void strings(const List &list) {
    w_.beginArray();
    for (const auto &s : list) w_.string(s);
    w_.endArray();
  }
  template <class List> void ints(const List &list) {
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
  bool parallel_;
};

} // namespace exir::exportjson
