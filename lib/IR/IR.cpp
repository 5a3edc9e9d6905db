//===- IR/IR.cpp - Helpers of the graph IR --------------------------------===//
#include "IR/IR.h"
#include "Support/CheckedMath.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

namespace exir {

// The IR's hot records must not grow (a 100k-node program holds millions of
// them, and fresh memory is most of the time): each out-of-line part is one
// pointer, and the rest is the listed inline fields.
static_assert(sizeof(OutOfLine<std::string>) == sizeof(void *));
static_assert(sizeof(Device) == sizeof(void *));
static_assert(sizeof(SymInt) == 2 * sizeof(int64_t) + sizeof(void *));
static_assert(sizeof(CompactVector<std::string>) == sizeof(void *));
static_assert(sizeof(BoxedOptional<std::string>) == sizeof(void *));
namespace {
struct ArgumentLayout { // Argument's inline fields, in order
  ArgKind kind;
  int64_t intValue;
  double floatValue;
  std::string name;
  void *ints, *names, *syms; // CompactVectors
  void *rare;
};
struct TensorMetaLayout {
  ScalarType dtype;
  bool requiresGrad;
  std::vector<SymInt> sizes, strides;
  SymInt storageOffset;
  Device device;
  int64_t layout;
};
} // namespace
static_assert(sizeof(Argument) == sizeof(ArgumentLayout));
static_assert(sizeof(TensorMeta) == sizeof(TensorMetaLayout));

namespace {
struct DtypeInfo {
  ScalarType type;
  size_t size;
  const char *shortName;
  const char *torchName;
  const char *edgeName;
  int64_t serialized; // torch.export serializer number, -1 if not serializable
};
// Serializer numbers from torch/_export/serde/schema.py (see torch-export-json.md §4.1).
const DtypeInfo kDtypes[] = {
    {ScalarType::Byte, 1, "u8", "uint8", "Byte", 1},
    {ScalarType::Char, 1, "i8", "int8", "Char", 2},
    {ScalarType::Short, 2, "i16", "int16", "Short", 3},
    {ScalarType::Int, 4, "i32", "int32", "Int", 4},
    {ScalarType::Long, 8, "i64", "int64", "Long", 5},
    {ScalarType::Half, 2, "f16", "float16", "Half", 6},
    {ScalarType::Float, 4, "f32", "float32", "Float", 7},
    {ScalarType::Double, 8, "f64", "float64", "Double", 8},
    {ScalarType::ComplexHalf, 4, "c32", "complex32", "", 9},
    {ScalarType::ComplexFloat, 8, "c64", "complex64", "ComplexFloat", 10},
    {ScalarType::ComplexDouble, 16, "c128", "complex128", "ComplexDouble", 11},
    {ScalarType::Bool, 1, "b8", "bool", "Bool", 12},
    {ScalarType::QInt8, 1, "qi8", "qint8", "", -1},
    {ScalarType::QUInt8, 1, "qu8", "quint8", "", -1},
    {ScalarType::QInt32, 4, "qi32", "qint32", "", -1},
    {ScalarType::BFloat16, 2, "bf16", "bfloat16", "BFloat16", 13},
    {ScalarType::QUInt4x2, 1, "qu4x2", "quint4x2", "", -1},
    {ScalarType::QUInt2x4, 1, "qu2x4", "quint2x4", "", -1},
    {ScalarType::Bits1x8, 1, "bits1x8", "bits1x8", "", -1},
    {ScalarType::Bits2x4, 1, "bits2x4", "bits2x4", "", -1},
    {ScalarType::Bits4x2, 1, "bits4x2", "bits4x2", "", -1},
    {ScalarType::Bits8, 1, "bits8", "bits8", "", -1},
    {ScalarType::Bits16, 2, "bits16", "bits16", "", -1},
    {ScalarType::Float8_e5m2, 1, "f8e5m2", "float8_e5m2", "", 30},
    {ScalarType::Float8_e4m3fn, 1, "f8e4m3fn", "float8_e4m3fn", "", 29},
    {ScalarType::Float8_e5m2fnuz, 1, "f8e5m2fnuz", "float8_e5m2fnuz", "", 32},
    {ScalarType::Float8_e4m3fnuz, 1, "f8e4m3fnuz", "float8_e4m3fnuz", "", 31},
    {ScalarType::UInt16, 2, "u16", "uint16", "UInt16", 28},
    {ScalarType::UInt32, 4, "u32", "uint32", "", 34},
    {ScalarType::UInt64, 8, "u64", "uint64", "", 35},
};

const DtypeInfo *info(ScalarType t) {
  for (const auto &d : kDtypes)
    if (d.type == t) return &d;
  return nullptr;
}
} // namespace

size_t elementSize(ScalarType t) {
  auto *d = info(t);
  return d ? d->size : 0;
}
const char *shortName(ScalarType t) {
  auto *d = info(t);
  return d ? d->shortName : "?";
}
std::string torchName(ScalarType t) {
  auto *d = info(t);
  return d ? std::string("torch.") + d->torchName : "torch.undefined";
}
const char *edgeYamlName(ScalarType t) {
  auto *d = info(t);
  return d ? d->edgeName : "";
}
ScalarType scalarTypeFromEdgeYamlName(const std::string &name) {
  for (const auto &d : kDtypes)
    if (*d.edgeName && name == d.edgeName) return d.type;
  return ScalarType::Undefined;
}
bool isFloatingType(ScalarType t) {
  switch (t) {
  case ScalarType::Half: case ScalarType::Float: case ScalarType::Double: case ScalarType::BFloat16:
  case ScalarType::Float8_e5m2: case ScalarType::Float8_e4m3fn: case ScalarType::Float8_e5m2fnuz:
  case ScalarType::Float8_e4m3fnuz:
    return true;
  default:
    return false;
  }
}
bool isIntegralType(ScalarType t, bool includeBool) {
  switch (t) {
  case ScalarType::Byte: case ScalarType::Char: case ScalarType::Short: case ScalarType::Int:
  case ScalarType::Long: case ScalarType::UInt16: case ScalarType::UInt32: case ScalarType::UInt64:
    return true;
  case ScalarType::Bool:
    return includeBool;
  default:
    return false;
  }
}
std::optional<ScalarType> scalarTypeFromSerialized(int64_t v) {
  // -1 in the table marks dtypes the serializer cannot spell; it is not a serialized value.
  for (const auto &d : kDtypes)
    if (d.serialized >= 0 && d.serialized == v) return d.type;
  return std::nullopt;
}
int64_t scalarTypeToSerialized(ScalarType t) {
  auto *d = info(t);
  return d ? d->serialized : 0;
}

bool TensorMeta::isStatic() const {
  return std::none_of(sizes.begin(), sizes.end(), [](const SymInt &s) { return s.isExpr; });
}
std::optional<int64_t> TensorMeta::numel() const {
  int64_t n = 1;
  for (const auto &s : sizes) {
    // Symbolic, negative or overflowing: no static count (the verifier
    // refuses the last two at every tool's input).
    if (s.isExpr || s.value < 0 || __builtin_mul_overflow(n, s.value, &n)) return std::nullopt;
  }
  return n;
}
std::vector<int64_t> TensorMeta::dimOrder() const {
  std::vector<int64_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
  bool concrete = strides.size() == sizes.size() &&
                  std::none_of(strides.begin(), strides.end(), [](const SymInt &s) { return s.isExpr; });
  if (concrete)
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return strides[a].value > strides[b].value; });
  return order;
}

std::vector<SymInt> TensorMeta::contiguousStrides(const std::vector<SymInt> &sizes) {
  std::vector<SymInt> strides(sizes.size());
  int64_t running = 1;
  bool symbolic = false;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = symbolic ? SymInt::symbol("?") : SymInt::of(running);
    std::optional<int64_t> next;
    if (!sizes[i].isExpr) next = checkedMul<int64_t>(running, std::max<int64_t>(sizes[i].value, 1));
    // A stride past int64 (sizes the verifier refuses) is unknown, as a symbolic one is.
    if (next) running = *next;
    else symbolic = true;
  }
  return strides;
}

const char *argKindTag(ArgKind k) {
  switch (k) {
  case ArgKind::None: return "as_none";
  case ArgKind::Tensor: return "as_tensor";
  case ArgKind::Tensors: return "as_tensors";
  case ArgKind::Int: return "as_int";
  case ArgKind::Ints: return "as_ints";
  case ArgKind::Float: return "as_float";
  case ArgKind::Floats: return "as_floats";
  case ArgKind::String: return "as_string";
  case ArgKind::Strings: return "as_strings";
  case ArgKind::Bool: return "as_bool";
  case ArgKind::Bools: return "as_bools";
  case ArgKind::SymInt: return "as_sym_int";
  case ArgKind::SymInts: return "as_sym_ints";
  case ArgKind::SymBool: return "as_sym_bool";
  case ArgKind::SymBools: return "as_sym_bools";
  case ArgKind::SymFloat: return "as_sym_float";
  case ArgKind::SymFloats: return "as_sym_floats";
  case ArgKind::ScalarType: return "as_scalar_type";
  case ArgKind::MemoryFormat: return "as_memory_format";
  case ArgKind::Layout: return "as_layout";
  case ArgKind::Device: return "as_device";
  case ArgKind::Graph: return "as_graph";
  case ArgKind::OptionalTensors: return "as_optional_tensors";
  case ArgKind::OptionalTensor: return "as_optional_tensor";
  case ArgKind::CustomObj: return "as_custom_obj";
  case ArgKind::Operator: return "as_operator";
  case ArgKind::Complex: return "as_complex";
  case ArgKind::IntLists: return "as_int_lists";
  case ArgKind::StringToArgument: return "as_string_to_argument";
  case ArgKind::NestedTensors: return "as_nested_tensors";
  }
  return "?";
}

void Argument::collectTensorNames(std::vector<std::string> &out) const {
  switch (kind) {
  case ArgKind::Tensor:
    out.push_back(name);
    break;
  case ArgKind::OptionalTensor:
    if (!name.empty()) out.push_back(name);
    break;
  case ArgKind::Tensors:
  case ArgKind::OptionalTensors:
    for (const auto &n : names)
      if (!n.empty()) out.push_back(n);
    break;
  case ArgKind::NestedTensors:
    for (const auto &l : nestedTensors())
      for (const auto &n : l) out.push_back(n);
    break;
  case ArgKind::StringToArgument:
    for (const auto &[k, v] : mapping()) v.collectTensorNames(out);
    break;
  default:
    break;
  }
}

void Argument::collectValueNames(std::vector<std::string> &out) const {
  collectTensorNames(out);
  switch (kind) {
  case ArgKind::SymInt: case ArgKind::SymInts: case ArgKind::SymBool: case ArgKind::SymBools:
  case ArgKind::SymFloat: case ArgKind::SymFloats:
    for (const auto &s : syms)
      if (s.isName) out.push_back(s.name);
    break;
  default:
    break;
  }
}

bool Argument::operator==(const Argument &o) const {
  if (kind != o.kind || intValue != o.intValue || floatValue != o.floatValue || name != o.name ||
      ints != o.ints || names != o.names || syms != o.syms)
    return false;
  return rare_ == o.rare_;
}

bool ArgumentRare::operator==(const ArgumentRare &o) const {
  if (imagValue != o.imagValue || classFqn != o.classFqn || deviceIndex != o.deviceIndex ||
      floats != o.floats || intLists != o.intLists || nestedTensors != o.nestedTensors ||
      mapping != o.mapping || graphName != o.graphName)
    return false;
  if (!graph || !o.graph) return !graph && !o.graph;
  return *graph == *o.graph;
}

const NamedArgument *Node::input(const std::string &argName) const {
  for (const auto &in : inputs)
    if (in.name == argName) return &in;
  return nullptr;
}
NamedArgument *Node::input(const std::string &argName) {
  for (auto &in : inputs)
    if (in.name == argName) return &in;
  return nullptr;
}
std::string Node::displayName() const {
  for (const auto &out : outputs) {
    switch (out.kind) {
    case ArgKind::Tensor: return out.name;
    case ArgKind::Tensors: if (!out.names.empty()) return out.names[0]; break;
    case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
      if (!out.syms.empty()) return out.syms[0].name;
      break;
    default: break;
    }
  }
  return name.value_or("");
}
bool Node::operator==(const Node &o) const {
  return target == o.target && inputs == o.inputs && outputs == o.outputs &&
         metadata == o.metadata && isHopSingleTensorReturn == o.isHopSingleTensorReturn &&
         name == o.name;
}

bool Graph::operator==(const Graph &o) const {
  return inputs == o.inputs && outputs == o.outputs && nodes == o.nodes &&
         tensorValues == o.tensorValues && symIntValues == o.symIntValues &&
         symBoolValues == o.symBoolValues && symFloatValues == o.symFloatValues &&
         customObjValues == o.customObjValues && isSingleTensorReturn == o.isSingleTensorReturn;
}

std::string Graph::freshName(const std::string &base) const { return freshName(base, nullptr); }

std::string Graph::freshName(const std::string &base,
                             const std::function<bool(const std::string &)> &released) const {
  auto used = [&](const std::string &n) {
    return holdsValueName(n) && !(released && released(n));
  };
  if (!used(base)) return base;
  int &suffix = freshSuffix_[base];
  for (suffix = std::max(suffix, 1);; ++suffix) {
    std::string candidate = base + "_" + std::to_string(suffix);
    if (!used(candidate)) return candidate;
  }
}

const char *inputKindTag(InputKind k) {
  switch (k) {
  case InputKind::UserInput: return "user_input";
  case InputKind::Parameter: return "parameter";
  case InputKind::Buffer: return "buffer";
  case InputKind::TensorConstant: return "tensor_constant";
  case InputKind::CustomObj: return "custom_obj";
  case InputKind::Token: return "token";
  case InputKind::ConstantInput: return "constant_input";
  }
  return "?";
}
const char *outputKindTag(OutputKind k) {
  switch (k) {
  case OutputKind::UserOutput: return "user_output";
  case OutputKind::LossOutput: return "loss_output";
  case OutputKind::BufferMutation: return "buffer_mutation";
  case OutputKind::ParameterMutation: return "parameter_mutation";
  case OutputKind::GradientToParameter: return "gradient_to_parameter";
  case OutputKind::GradientToUserInput: return "gradient_to_user_input";
  case OutputKind::UserInputMutation: return "user_input_mutation";
  case OutputKind::Token: return "token";
  }
  return "?";
}

std::optional<uint64_t> ConstantTensor::numel() const {
  uint64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0 || (s > 0 && n > UINT64_MAX / uint64_t(s))) return std::nullopt;
    n *= uint64_t(s);
  }
  return n;
}

std::optional<uint64_t> ConstantTensor::storageBytesNeeded() const {
  std::optional<uint64_t> count = numel();
  if (!count || storageOffset < 0 || (!strides.empty() && strides.size() != sizes.size())) return std::nullopt;
  if (*count == 0) return 0;
  // Without strides the view is contiguous: its last element is numel - 1.
  unsigned __int128 last = strides.empty() ? *count - 1 : 0;
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] < 0) return std::nullopt;
    last += (unsigned __int128)(sizes[i] - 1) * uint64_t(strides[i]);
  }
  unsigned __int128 bytes = (last + uint64_t(storageOffset) + 1) * elementSize(dtype);
  if (bytes > UINT64_MAX) return std::nullopt;
  return uint64_t(bytes);
}

bool Delegate::operator==(const Delegate &o) const {
  if (backendId != o.backendId || compileSpecs != o.compileSpecs || processed != o.processed ||
      !(namedData == o.namedData))
    return false;
  if (!original || !o.original) return !original && !o.original;
  return *original == *o.original;
}

bool Program::operator==(const Program &o) const {
  return stage == o.stage && methods == o.methods && constants == o.constants &&
         delegates == o.delegates && constantMethods == o.constantMethods && edgeRules == o.edgeRules &&
         opLibraries == o.opLibraries;
}

const char *stageName(Stage s) {
  switch (s) {
  case Stage::Aten: return "aten";
  case Stage::Edge: return "edge";
  case Stage::Delegated: return "delegated";
  case Stage::Planned: return "planned";
  }
  return "?";
}
std::optional<Stage> stageFromName(const std::string &name) {
  for (Stage s : {Stage::Aten, Stage::Edge, Stage::Delegated, Stage::Planned})
    if (name == stageName(s)) return s;
  return std::nullopt;
}

std::string OpTarget::qualifiedName() const {
  std::string q = ns + "::" + name;
  if (!overload.empty() && overload != "default") q += "." + overload;
  return q;
}

namespace {
bool startsWith(const std::string &s, const char *prefix) { return s.rfind(prefix, 0) == 0; }

// Splits "<ns>.<op>.<overload>" (the tail after a dialect prefix).
OpTarget splitTail(TargetDialect d, const std::string &tail) {
  OpTarget t;
  t.dialect = d;
  auto first = tail.find('.');
  auto last = tail.rfind('.');
  if (first == std::string::npos || first == last) {
    t.dialect = TargetDialect::Other;
    t.name = tail;
    return t;
  }
  t.ns = tail.substr(0, first);
  t.name = tail.substr(first + 1, last - first - 1);
  t.overload = tail.substr(last + 1);
  return t;
}
} // namespace

OpTarget parseTarget(const std::string &target) {
  static const char *kEdge = "executorch.exir.dialects.edge.ops.";
  static const char *kBackend = "executorch.exir.dialects.backend.ops.";
  if (startsWith(target, kEdge)) return splitTail(TargetDialect::Edge, target.substr(strlen(kEdge)));
  if (startsWith(target, kBackend))
    return splitTail(TargetDialect::Backend, target.substr(strlen(kBackend)));
  if (startsWith(target, "torch.ops.higher_order.")) {
    OpTarget t;
    t.dialect = TargetDialect::HigherOrder;
    t.ns = "higher_order";
    t.name = target.substr(strlen("torch.ops.higher_order."));
    return t;
  }
  if (startsWith(target, "torch.ops.")) return splitTail(TargetDialect::Aten, target.substr(10));
  if (target == "memory.alloc" || target == kAllocTarget) {
    OpTarget t;
    t.dialect = TargetDialect::MemoryAlloc;
    t.ns = "memory";
    t.name = "alloc";
    return t;
  }
  if (target == "memory.view" || target == kViewTarget) {
    OpTarget t;
    t.dialect = TargetDialect::MemoryView;
    t.ns = "memory";
    t.name = "view";
    return t;
  }
  if (target == "memory.free" || target == "executorch.exir.memory.free") {
    OpTarget t;
    t.dialect = TargetDialect::MemoryFree;
    t.ns = "memory";
    t.name = "free";
    return t;
  }
  if (startsWith(target, "_operator.") || startsWith(target, "math.") ||
      startsWith(target, "torch.sym_") || startsWith(target, "operator.")) {
    OpTarget t;
    t.dialect = TargetDialect::SymOp;
    auto dot = target.rfind('.');
    t.ns = target.substr(0, dot);
    t.name = target.substr(dot + 1);
    return t;
  }
  OpTarget t;
  t.name = target;
  return t;
}

bool staysAtenInEdge(const OpTarget &t) {
  if (t.dialect == TargetDialect::HigherOrder) return true;
  if (t.dialect != TargetDialect::Aten) return false;
  return isSymSizeOp(t) || isGraphAssert(t) || t.qualifiedName() == "aten::scalar_tensor" ||
         t.qualifiedName() == "aten::_local_scalar_dense";
}

bool isGraphAssert(const OpTarget &t) {
  if ((t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge) || t.ns != "aten") return false;
  static const char *names[] = {"_assert_scalar", "_assert_async", "_assert_tensor_metadata", "sym_constrain_range",
                                "sym_constrain_range_for_size", "_functional_assert_scalar",
                                "_functional_assert_async", "_functional_sym_constrain_range",
                                "_functional_sym_constrain_range_for_size"};
  for (const char *n : names)
    if (t.name == n) return true;
  return false;
}

bool isSymSizeOp(const OpTarget &t) {
  if (t.dialect != TargetDialect::Aten && t.dialect != TargetDialect::Edge) return false;
  std::string q = t.qualifiedName();
  return q == "aten::sym_size.int" || q == "aten::sym_stride.int" || q == "aten::sym_numel" ||
         q == "aten::sym_storage_offset";
}

namespace {
template <typename G, typename F> void walkSubgraphs(G &graph, const F &fn, const std::string &prefix) {
  for (auto &node : graph.nodes)
    for (auto &in : node.inputs)
      if (in.arg.kind == ArgKind::Graph && in.arg.graph()) {
        std::string path = prefix.empty() ? in.arg.graphName() : prefix + "/" + in.arg.graphName();
        fn(*in.arg.graph(), path);
        walkSubgraphs(*in.arg.graph(), fn, path);
      }
}
} // namespace

void forEachSubgraph(Graph &graph, const std::function<void(Graph &, const std::string &)> &fn,
                     const std::string &prefix) {
  walkSubgraphs(graph, fn, prefix);
}
void forEachSubgraph(const Graph &graph, const std::function<void(const Graph &, const std::string &)> &fn,
                     const std::string &prefix) {
  walkSubgraphs(graph, fn, prefix);
}

std::string scopedValueName(const std::string &path, const std::string &name) {
  return path.empty() ? name : path + "/" + name;
}

std::string atenTarget(const std::string &ns, const std::string &name, const std::string &overload) {
  return "torch.ops." + ns + "." + name + "." + (overload.empty() ? "default" : overload);
}
std::string edgeTarget(const std::string &ns, const std::string &name, const std::string &overload) {
  return "executorch.exir.dialects.edge.ops." + ns + "." + name + "." +
         (overload.empty() ? "default" : overload);
}

} // namespace exir
