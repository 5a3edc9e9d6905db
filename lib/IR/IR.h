//===- IR/IR.h - The graph IR shared by every stage ------------*- C++ -*-===//
//
// One in-memory form for every stage (aten -> edge -> delegated -> planned).
// It mirrors torch.export's ExportedProgram schema (schema 8.x) closely, so the
// JSON reader/writer is a mechanical mapping, and adds the program-level pieces
// of our stage artifact: several methods, one constant table, delegates and
// memory plans. See schema/README.md for the artifact format.
//
// Numbering conventions inside the IR (converted at the JSON boundary):
//  - ScalarType uses c10 / .pte numbering (float32 = 6), not the serializer's.
//  - Layout and MemoryFormat keep torch.export's serializer numbering.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/OrderedMap.h"
#include "IR/CompactVector.h"
#include "IR/NodeMetadata.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace exir {

//===----------------------------------------------------------------------===//
// Scalar types
//===----------------------------------------------------------------------===//

/// c10::ScalarType numbering, identical to the .pte flatbuffer's ScalarType.
enum class ScalarType : int8_t {
  Undefined = -1,
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7,
  ComplexHalf = 8, ComplexFloat = 9, ComplexDouble = 10, Bool = 11,
  QInt8 = 12, QUInt8 = 13, QInt32 = 14, BFloat16 = 15, QUInt4x2 = 16, QUInt2x4 = 17,
  Bits1x8 = 18, Bits2x4 = 19, Bits4x2 = 20, Bits8 = 21, Bits16 = 22,
  Float8_e5m2 = 23, Float8_e4m3fn = 24, Float8_e5m2fnuz = 25, Float8_e4m3fnuz = 26,
  UInt16 = 27, UInt32 = 28, UInt64 = 29,
};

/// Bytes per element (0 for Undefined).
size_t elementSize(ScalarType t);
/// Short form used in printed graphs: "f32", "i64", "b8", ...
const char *shortName(ScalarType t);
/// torch spelling: "torch.float32".
std::string torchName(ScalarType t);
/// edge.yaml spelling: "Float", "Long", "Bool", ... (empty if edge.yaml has none).
const char *edgeYamlName(ScalarType t);
/// Parses an edge.yaml dtype name; Undefined if unknown.
ScalarType scalarTypeFromEdgeYamlName(const std::string &name);
bool isFloatingType(ScalarType t);
bool isIntegralType(ScalarType t, bool includeBool);

/// torch.export serializer numbering <-> c10. Unknown values give nullopt.
std::optional<ScalarType> scalarTypeFromSerialized(int64_t v);
int64_t scalarTypeToSerialized(ScalarType t);

//===----------------------------------------------------------------------===//
// Symbolic values and tensor metadata
//===----------------------------------------------------------------------===//

/// A `T` kept out of line behind a pointer, made on first write, with value
/// semantics (copies are deep): for rarely set parts of structs there are
/// millions of. Reading an absent one gives a shared default-constructed `T`.
template <class T> class OutOfLine {
public:
  OutOfLine() = default;
  OutOfLine(const OutOfLine &o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  OutOfLine(OutOfLine &&o) noexcept = default;
  OutOfLine &operator=(const OutOfLine &o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  OutOfLine &operator=(OutOfLine &&o) noexcept = default;
  bool present() const { return p_ != nullptr; }
  const T &get() const { return p_ ? *p_ : absent(); }
  /// An absent record equals a default-constructed one (needs T's ==).
  bool operator==(const OutOfLine &o) const { return p_ == o.p_ || get() == o.get(); }
  T &mutate() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }

private:
  static const T &absent() {
    static const T kAbsent;
    return kAbsent;
  }
  std::unique_ptr<T> p_;
};

/// std::optional<T>'s interface in one pointer (copies are deep): for an
/// optional member that is absent in millions of records (a constant's
/// inline bytes).
template <class T> class BoxedOptional {
public:
  BoxedOptional() = default;
  BoxedOptional(std::nullopt_t) {}
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U &&> &&
                                              !std::is_same_v<std::decay_t<U>, BoxedOptional>>>
  BoxedOptional(U &&v) : p_(std::make_unique<T>(std::forward<U>(v))) {}
  BoxedOptional(const BoxedOptional &o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  BoxedOptional(BoxedOptional &&o) noexcept = default;
  BoxedOptional &operator=(const BoxedOptional &o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  BoxedOptional &operator=(BoxedOptional &&o) noexcept = default;
  BoxedOptional &operator=(std::nullopt_t) noexcept {
    p_.reset();
    return *this;
  }
  template <class U, class = std::enable_if_t<std::is_constructible_v<T, U &&> &&
                                              !std::is_same_v<std::decay_t<U>, BoxedOptional>>>
  BoxedOptional &operator=(U &&v) {
    if (p_) *p_ = std::forward<U>(v);
    else p_ = std::make_unique<T>(std::forward<U>(v));
    return *this;
  }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  bool has_value() const noexcept { return p_ != nullptr; }
  const T &operator*() const { return *p_; }
  T &operator*() { return *p_; }
  const T *operator->() const { return p_.get(); }
  T *operator->() { return p_.get(); }
  void reset() noexcept { p_.reset(); }
  bool operator==(const BoxedOptional &o) const { return p_ ? o.p_ && *p_ == *o.p_ : !o.p_; }

private:
  std::unique_ptr<T> p_;
};

/// torch.export SymInt union: a concrete int (as_int) or a sympy expression (as_expr).
struct SymInt {
  bool isExpr = false;
  int64_t value = 0;         // as_int
  // as_expr.expr_str and as_expr.hint (as_int hint only) live out of line, made
  // only for symbolic dims: a program holds ~5 SymInts per tensor value, nearly
  // all concrete. Absent reads as "" and nullopt.
  const std::string &expr() const { return expr_.get().expr; }
  const std::optional<int64_t> &hint() const { return expr_.get().hint; }
  void setExpr(std::string e) {
    if (expr_.present() || !e.empty()) expr_.mutate().expr = std::move(e);
  }
  void setHint(std::optional<int64_t> h) {
    if (expr_.present() || h) expr_.mutate().hint = h;
  }
  static SymInt of(int64_t v) { SymInt s; s.value = v; return s; }
  static SymInt symbol(std::string e) { SymInt s; s.isExpr = true; s.setExpr(std::move(e)); return s; }
  bool operator==(const SymInt &o) const {
    return isExpr == o.isExpr && value == o.value && expr() == o.expr() && hint() == o.hint();
  }

private:
  struct Expr {
    std::string expr;
    std::optional<int64_t> hint;
  };
  OutOfLine<Expr> expr_;
};

/// SymBool / SymFloat unions (as_expr or a concrete value).
struct SymBool {
  bool isExpr = false;
  bool value = false;
  std::string expr;
  std::optional<bool> hint;
  bool operator==(const SymBool &o) const = default;
};
struct SymFloat {
  bool isExpr = false;
  double value = 0;
  std::string expr;
  std::optional<double> hint;
  bool operator==(const SymFloat &o) const = default;
};

/// A device: type "cpu" and no index unless set. Both live out of line, made
/// only for other devices (every TensorMeta holds one; nearly all are cpu).
struct Device {
  const std::string &type() const { return rec_.get().type; }
  const std::optional<int64_t> &index() const { return rec_.get().index; }
  void setType(std::string t) {
    if (rec_.present() || t != "cpu") rec_.mutate().type = std::move(t);
  }
  void setIndex(std::optional<int64_t> i) {
    if (rec_.present() || i) rec_.mutate().index = i;
  }
  bool operator==(const Device &o) const { return type() == o.type() && index() == o.index(); }

private:
  struct Rec {
    std::string type = "cpu";
    std::optional<int64_t> index;
  };
  OutOfLine<Rec> rec_;
};

/// torch.export Layout enum (serializer numbering): 7 = strided.
enum : int64_t { kLayoutStrided = 7 };
/// torch.export MemoryFormat enum (serializer numbering).
enum : int64_t { kMemoryFormatContiguous = 1, kMemoryFormatChannelsLast = 2,
                 kMemoryFormatChannelsLast3d = 3, kMemoryFormatPreserve = 4 };

struct TensorMeta {
  ScalarType dtype = ScalarType::Float;
  bool requiresGrad = false; // beside dtype: one word for both
  std::vector<SymInt> sizes;
  std::vector<SymInt> strides;
  SymInt storageOffset;
  Device device;
  int64_t layout = kLayoutStrided;
  bool operator==(const TensorMeta &o) const = default;

  bool isStatic() const;
  /// Product of the sizes; nullopt if any size is symbolic or negative, or
  /// the product overflows int64.
  std::optional<int64_t> numel() const;
  /// Dim order from the strides: dims sorted by descending stride, ties keep
  /// dim order ([0..n-1] when the strides are symbolic or missing).
  std::vector<int64_t> dimOrder() const;
  /// Contiguous strides for `sizes` (symbolic sizes make symbolic strides impossible:
  /// such dims get stride SymInt::symbol("?")).
  static std::vector<SymInt> contiguousStrides(const std::vector<SymInt> &sizes);
};

//===----------------------------------------------------------------------===//
// Arguments (torch.export Argument union)
//===----------------------------------------------------------------------===//

struct Graph;
struct Argument;

enum class ArgKind : uint8_t {
  None, Tensor, Tensors, Int, Ints, Float, Floats, String, Strings, Bool, Bools,
  SymInt, SymInts, SymBool, SymBools, SymFloat, SymFloats,
  ScalarType, MemoryFormat, Layout, Device, Graph, OptionalTensors, OptionalTensor,
  CustomObj, Operator, Complex, IntLists, StringToArgument, NestedTensors,
};

/// The JSON tag of an ArgKind ("as_tensor", ...).
const char *argKindTag(ArgKind k);

/// One element of as_sym_ints / as_sym_bools / as_sym_floats, or a single
/// SymIntArgument: a reference to a symbolic value by name, or a literal.
struct SymArg {
  bool isName = false;
  std::string name;
  int64_t intValue = 0;   // SymInt literal / SymBool literal (0/1)
  double floatValue = 0;  // SymFloat literal
  bool operator==(const SymArg &o) const = default;
};

struct ArgumentRare;

struct Argument {
  ArgKind kind = ArgKind::None;
  // Scalars: Int, Bool (0/1), ScalarType (c10 numbering), MemoryFormat, Layout.
  int64_t intValue = 0;
  // Float; Complex uses floatValue (real) and imagValue().
  double floatValue = 0;
  // Tensor / OptionalTensor (empty = None) name, String, Operator, CustomObj name,
  // Device type.
  std::string name;
  CompactVector<int64_t> ints;               // Ints, Bools (0/1)
  CompactVector<std::string> names;          // Tensors, Strings, OptionalTensors ("" = None)
  CompactVector<SymArg> syms;                // SymInt/SymBool/SymFloat (1 element) and lists

  // The rare payloads live in one side record (ArgumentRare, below) so the
  // common kinds stay small: a program holds ~3.5 Arguments per node. Const
  // access of an absent record reads empty values; the mutable*() accessors
  // create the record.
  double imagValue() const;                                        // Complex
  const std::string &classFqn() const;                             // CustomObj class_fqn
  const std::optional<int64_t> &deviceIndex() const;               // Device
  const std::vector<double> &floats() const;                       // Floats
  const std::vector<std::vector<int64_t>> &intLists() const;       // IntLists
  const std::vector<std::vector<std::string>> &nestedTensors() const; // NestedTensors
  const std::vector<std::pair<std::string, Argument>> &mapping() const; // StringToArgument
  const std::shared_ptr<Graph> &graph() const;                     // Graph (GraphArgument.graph)
  const std::string &graphName() const;                            // Graph (GraphArgument.name)
  double &mutableImagValue();
  std::string &mutableClassFqn();
  std::optional<int64_t> &mutableDeviceIndex();
  std::vector<double> &mutableFloats();
  std::vector<std::vector<int64_t>> &mutableIntLists();
  std::vector<std::vector<std::string>> &mutableNestedTensors();
  std::vector<std::pair<std::string, Argument>> &mutableMapping();
  std::shared_ptr<Graph> &mutableGraph();
  std::string &mutableGraphName();

  // Declared here, defined after ArgumentRare (which holds Arguments in
  // `mapping`): clang 14 with libstdc++ 12 in C++20, which the fuzz build
  // needs, rejects the incomplete-type patterns otherwise.
  Argument();
  Argument(const Argument &o);
  Argument(Argument &&o) noexcept;
  Argument &operator=(const Argument &o);
  Argument &operator=(Argument &&o) noexcept;
  ~Argument();
  // Constructors for the common cases.
  static Argument none() { return {}; }
  static Argument tensor(std::string n) { Argument a; a.kind = ArgKind::Tensor; a.name = std::move(n); return a; }
  static Argument tensors(std::vector<std::string> ns) { Argument a; a.kind = ArgKind::Tensors; a.names = std::move(ns); return a; }
  static Argument integer(int64_t v) { Argument a; a.kind = ArgKind::Int; a.intValue = v; return a; }
  static Argument ints_(std::vector<int64_t> v) { Argument a; a.kind = ArgKind::Ints; a.ints = std::move(v); return a; }
  static Argument real(double v) { Argument a; a.kind = ArgKind::Float; a.floatValue = v; return a; }
  static Argument boolean(bool v) { Argument a; a.kind = ArgKind::Bool; a.intValue = v; return a; }
  static Argument string(std::string v) { Argument a; a.kind = ArgKind::String; a.name = std::move(v); return a; }
  static Argument scalarType(ScalarType t) { Argument a; a.kind = ArgKind::ScalarType; a.intValue = int64_t(t); return a; }

  bool isTensor() const { return kind == ArgKind::Tensor; }
  bool isNone() const { return kind == ArgKind::None; }
  /// Every tensor value name this argument refers to (recursing into lists, not subgraphs).
  void collectTensorNames(std::vector<std::string> &out) const;
  /// Tensor names plus the names of symbolic values (SymInt/SymBool/SymFloat references).
  void collectValueNames(std::vector<std::string> &out) const;
  /// An absent side record equals one holding empty values.
  bool operator==(const Argument &o) const;

private:
  const ArgumentRare &rare() const;
  ArgumentRare &mutableRare();
  OutOfLine<ArgumentRare> rare_; // last member: see operator= below
};

/// The rare payloads of an Argument.
struct ArgumentRare {
  double imagValue = 0;
  std::string classFqn;
  std::optional<int64_t> deviceIndex;
  std::vector<double> floats;
  std::vector<std::vector<int64_t>> intLists;
  std::vector<std::vector<std::string>> nestedTensors;
  std::vector<std::pair<std::string, Argument>> mapping;
  std::shared_ptr<Graph> graph;
  std::string graphName;
  bool operator==(const ArgumentRare &o) const;
};

// Defaulted here, where ArgumentRare is complete. Copy assignment stays right
// when `o` lives inside our own record (a = a.mapping()[0].second): rare_ is
// the last member, and OutOfLine copies o's record before it frees ours.
inline Argument::Argument() = default;
inline Argument::Argument(const Argument &o) = default;
inline Argument::Argument(Argument &&o) noexcept = default;
inline Argument &Argument::operator=(const Argument &o) = default;
inline Argument &Argument::operator=(Argument &&o) noexcept = default;
inline Argument::~Argument() = default;
inline const ArgumentRare &Argument::rare() const { return rare_.get(); }
inline ArgumentRare &Argument::mutableRare() { return rare_.mutate(); }
inline double Argument::imagValue() const { return rare().imagValue; }
inline const std::string &Argument::classFqn() const { return rare().classFqn; }
inline const std::optional<int64_t> &Argument::deviceIndex() const { return rare().deviceIndex; }
inline const std::vector<double> &Argument::floats() const { return rare().floats; }
inline const std::vector<std::vector<int64_t>> &Argument::intLists() const { return rare().intLists; }
inline const std::vector<std::vector<std::string>> &Argument::nestedTensors() const { return rare().nestedTensors; }
inline const std::vector<std::pair<std::string, Argument>> &Argument::mapping() const { return rare().mapping; }
inline const std::shared_ptr<Graph> &Argument::graph() const { return rare().graph; }
inline const std::string &Argument::graphName() const { return rare().graphName; }
inline double &Argument::mutableImagValue() { return mutableRare().imagValue; }
inline std::string &Argument::mutableClassFqn() { return mutableRare().classFqn; }
inline std::optional<int64_t> &Argument::mutableDeviceIndex() { return mutableRare().deviceIndex; }
inline std::vector<double> &Argument::mutableFloats() { return mutableRare().floats; }
inline std::vector<std::vector<int64_t>> &Argument::mutableIntLists() { return mutableRare().intLists; }
inline std::vector<std::vector<std::string>> &Argument::mutableNestedTensors() { return mutableRare().nestedTensors; }
inline std::vector<std::pair<std::string, Argument>> &Argument::mutableMapping() { return mutableRare().mapping; }
inline std::shared_ptr<Graph> &Argument::mutableGraph() { return mutableRare().graph; }
inline std::string &Argument::mutableGraphName() { return mutableRare().graphName; }

enum class ArgumentPassing : uint8_t { Unknown = 0, Positional = 1, Keyword = 2 };

struct NamedArgument {
  std::string name;
  Argument arg;
  std::optional<ArgumentPassing> kind; // absent in old files
  bool operator==(const NamedArgument &o) const = default;
};

//===----------------------------------------------------------------------===//
// Nodes and graphs
//===----------------------------------------------------------------------===//

struct Node {
  std::string target; // "torch.ops.aten.add.Tensor", edge / memory spellings, "_operator.add", ...
  std::vector<NamedArgument> inputs;
  std::vector<Argument> outputs;
  NodeMetadata metadata; // stack_trace, nn_module_stack, source_fn_stack, torch_fn, custom, debug_handle, ...
  std::optional<bool> isHopSingleTensorReturn;
  std::optional<std::string> name;

  const NamedArgument *input(const std::string &argName) const;
  NamedArgument *input(const std::string &argName);
  /// Name of the value this node defines for display: first output tensor / sym name.
  std::string displayName() const;
  bool operator==(const Node &o) const;
};

struct CustomObjValue {
  std::string name;
  std::string classFqn;
  bool operator==(const CustomObjValue &o) const = default;
};

struct Graph {
  std::vector<Argument> inputs;
  std::vector<Argument> outputs;
  std::vector<Node> nodes;
  OrderedMap<TensorMeta> tensorValues;
  OrderedMap<SymInt> symIntValues;
  OrderedMap<SymBool> symBoolValues;
  OrderedMap<SymFloat> symFloatValues;
  OrderedMap<CustomObjValue> customObjValues;
  bool isSingleTensorReturn = false;
  bool operator==(const Graph &o) const;

  /// Whether one of the value tables holds `name`: a new value must not take it.
  bool holdsValueName(const std::string &name) const {
    return tensorValues.contains(name) || symIntValues.contains(name) || symBoolValues.contains(name) ||
           symFloatValues.contains(name) || customObjValues.contains(name);
  }

  /// Returns a value name not yet used in this graph, based on `base`
  /// (base, base_1, base_2, ... as torch.fx names them).
  std::string freshName(const std::string &base) const;
  /// The same, treating the names `released` accepts as free although the
  /// value tables still hold them (values whose erasure is pending).
  std::string freshName(const std::string &base, const std::function<bool(const std::string &)> &released) const;

private:
  // Per base, the last suffix freshName() handed out: the search resumes there
  // instead of at 1 (restarting made n decompositions of one op quadratic).
  // Like torch.fx, a name is not reused once a later one was given out.
  mutable std::unordered_map<std::string, int> freshSuffix_;
};

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

enum class InputKind : uint8_t {
  UserInput, Parameter, Buffer, TensorConstant, CustomObj, Token, ConstantInput,
};
enum class OutputKind : uint8_t {
  UserOutput, LossOutput, BufferMutation, ParameterMutation, GradientToParameter,
  GradientToUserInput, UserInputMutation, Token,
};
const char *inputKindTag(InputKind k);   // "user_input", "parameter", ...
const char *outputKindTag(OutputKind k); // "user_output", "buffer_mutation", ...

/// ConstantValue union of constant_input specs.
struct ConstantValue {
  enum class Kind : uint8_t { None, Int, Float, String, Bool } kind = Kind::None;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;
  bool operator==(const ConstantValue &o) const = default;
};

struct InputSpec {
  InputKind kind = InputKind::UserInput;
  Argument arg;        // TensorArgument specs are stored as ArgKind::Tensor
  std::string target;  // parameter_name / buffer_name / tensor_constant_name / custom_obj_name / constant_input name
  bool persistent = false; // buffer only
  OutOfLine<ConstantValue> constant; // constant_input only
  bool operator==(const InputSpec &o) const = default;
};

struct OutputSpec {
  OutputKind kind = OutputKind::UserOutput;
  Argument arg;
  std::string target; // buffer_name / parameter_name / user_input_name
  bool operator==(const OutputSpec &o) const = default;
};

struct GraphSignature {
  std::vector<InputSpec> inputSpecs;
  std::vector<OutputSpec> outputSpecs;
  bool operator==(const GraphSignature &o) const = default;
};

struct ModuleCallSignature {
  std::vector<Argument> inputs, outputs;
  std::string inSpec, outSpec;
  std::optional<std::vector<std::string>> forwardArgNames;
  bool operator==(const ModuleCallSignature &o) const = default;
};
struct ModuleCallEntry {
  std::string fqn;
  std::optional<ModuleCallSignature> signature;
  bool operator==(const ModuleCallEntry &o) const = default;
};

struct RangeConstraint {
  std::optional<int64_t> minVal, maxVal; // nullopt = unbounded
  bool operator==(const RangeConstraint &o) const = default;
};

struct SchemaVersion {
  int64_t major = 8, minor = 20;
  bool operator==(const SchemaVersion &o) const = default;
};

/// One torch.export ExportedProgram (one method of our program).
struct ExportedProgram {
  Graph graph;
  GraphSignature signature;
  std::vector<ModuleCallEntry> moduleCallGraph;
  OrderedMap<std::string> metadata;                    // GraphModule.metadata
  OrderedMap<std::vector<std::string>> treespecNamedtupleFields;
  OrderedMap<int64_t> opsetVersion;
  OrderedMap<RangeConstraint> rangeConstraints;
  SchemaVersion schemaVersion;
  std::vector<std::string> verifiers;
  std::string torchVersion;
  std::vector<std::string> guardsCode;
  bool operator==(const ExportedProgram &o) const = default;
};

//===----------------------------------------------------------------------===//
// Program-level artifact pieces
//===----------------------------------------------------------------------===//

enum class Stage : uint8_t { Aten, Edge, Delegated, Planned };
const char *stageName(Stage s); // "aten", "edge", "delegated", "planned"
std::optional<Stage> stageFromName(const std::string &name);

/// Where the bytes of a constant or blob live. Weights never travel inside the
/// JSON: a reference names a file (relative paths are relative to the JSON
/// document's directory), an offset and a length. Small stage-made constants
/// may be inline (base64 in JSON).
struct DataRef {
  std::string file;            // empty when inline
  uint64_t offset = 0;
  uint64_t length = 0;
  BoxedOptional<std::string> inlineBytes; // raw bytes when inline
  std::string sha256;          // optional cached digest (hex); empty if unknown
  /// Staleness checks (file refs only): the size of the whole file when the
  /// reference was made, and the CRC-32 of the range. exir-emit verifies the
  /// CRC while streaming; every stage tool checks the file size.
  std::optional<uint64_t> fileSize;
  std::optional<uint32_t> crc32;
  bool operator==(const DataRef &o) const = default;
};

struct ConstantTensor {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storageOffset = 0; // elements
  DataRef data;
  bool operator==(const ConstantTensor &o) const = default;

  /// Product of the sizes; nullopt for a negative size or overflow.
  std::optional<uint64_t> numel() const;
  /// Bytes of storage the view reads, from the start of `data`: (storage offset
  /// + the farthest element + 1) x element size; 0 when empty. nullopt for a
  /// negative stride or offset, a stride list of another rank, or overflow.
  std::optional<uint64_t> storageBytesNeeded() const;
};

struct CompileSpec {
  std::string key;
  std::string value; // raw bytes
  bool operator==(const CompileSpec &o) const = default;
};

/// A lowered module: what LoweredBackendModule holds upstream.
struct Delegate {
  std::string backendId;
  std::vector<CompileSpec> compileSpecs;
  DataRef processed;                          // the backend blob
  std::shared_ptr<ExportedProgram> original;  // the original subgraph (edge dialect)
  /// Constants the delegate owns, by FQN: exir-emit writes their bytes into
  /// the .pte's named_data, where the backend finds them at init.
  OrderedMap<ConstantTensor> namedData;
  bool operator==(const Delegate &o) const;
};

/// Memory placement of one planned tensor value.
struct Allocation {
  uint32_t memId = 1; // >= 1, as the .pte wants
  uint64_t offset = 0;
  bool operator==(const Allocation &o) const = default;
};

/// Result of memory planning for one method.
struct MemoryPlan {
  std::string algorithm;                 // "greedy", "naive", ...
  uint64_t alignment = 16;
  std::vector<uint64_t> bufferSizes;     // index 0 reserved (= 0); [k] = arena mem_id k
  std::vector<uint64_t> lowerBounds;     // same indexing: max live bytes (aligned)
  OrderedMap<Allocation> allocations;    // tensor value name -> placement
  bool operator==(const MemoryPlan &o) const = default;
};

struct Method {
  ExportedProgram program;
  std::optional<MemoryPlan> plan; // planned stage only
  bool operator==(const Method &o) const = default;
};

/// The dtype rules (edge.yaml) a program was lowered with, when they are not
/// the built-in ones: every later stage verifies with these same rules.
struct EdgeRulesRecord {
  std::string source;   // the file as the user named it
  std::string sha256;   // of `text`
  std::string text;     // the file's contents
  bool replace = false; // true: these rules alone; false: over the built-in rules
  bool operator==(const EdgeRulesRecord &o) const = default;
};

/// An op library (--op-library FILE.yaml: custom operators' schemas, out
/// variants and dtype rules) a program uses; later stages read it from here.
struct OpLibraryRecord {
  std::string source; // the file as the user named it
  std::string sha256; // of `text`
  std::string text;   // the file's contents
  bool operator==(const OpLibraryRecord &o) const = default;
};

/// The stage artifact: several methods, one constant table, delegates.
struct Program {
  Stage stage = Stage::Aten;
  OrderedMap<Method> methods;
  OrderedMap<ConstantTensor> constants; // key = FQN as in the signature targets
  OrderedMap<Delegate> delegates;       // key = lowered module name (lowered_module_0, ...)
  /// Methods that only return constants (upstream's constant_methods, e.g.
  /// get_max_seq_len -> 128): name -> the returned values, in order.
  OrderedMap<std::vector<ConstantValue>> constantMethods;
  /// The user's edge.yaml (exir-edge --edge-yaml); nullopt = the built-in rules.
  std::optional<EdgeRulesRecord> edgeRules;
  /// The op libraries the program's custom operators come from, in load order.
  std::vector<OpLibraryRecord> opLibraries;
  /// Directory that relative DataRef files are resolved against (not serialized).
  std::string baseDirectory = ".";
  bool operator==(const Program &o) const;
};

//===----------------------------------------------------------------------===//
// Target spellings
//===----------------------------------------------------------------------===//

enum class TargetDialect : uint8_t {
  Aten,         // torch.ops.<ns>.<op>.<overload>
  Edge,         // executorch.exir.dialects.edge.ops.<ns>.<op>.<overload>
  Backend,      // executorch.exir.dialects.backend.ops.<ns>.<op>.<overload>
  HigherOrder,  // torch.ops.higher_order.<name>
  MemoryAlloc,  // memory.alloc / executorch.exir.memory.alloc
  MemoryView,   // executorch.exir.memory.view
  MemoryFree,   // executorch.exir.memory.free
  SymOp,        // _operator.add, math.trunc, torch.sym_max, ...
  Other,
};

/// A node target split into its parts.
struct OpTarget {
  TargetDialect dialect = TargetDialect::Other;
  std::string ns, name, overload; // overload "default" when spelled so
  /// "aten::add.Tensor" (overload omitted when "default"), the key of the operator table.
  std::string qualifiedName() const;
};

OpTarget parseTarget(const std::string &target);
/// Ops upstream's to_edge leaves as they are (sym ops such as sym_size.int and the
/// DISALLOW_LIST _assert_* / scalar_tensor ops): ToEdgeOps keeps them and the
/// edge verifier accepts them.
bool staysAtenInEdge(const OpTarget &t);
/// Runtime asserts torch.export records (_assert_scalar, _assert_async,
/// _assert_tensor_metadata, sym_constrain_range*, their _functional_ forms),
/// which upstream removes (RemoveGraphAssertsPass).
bool isGraphAssert(const OpTarget &t);
/// Removes the asserts of `graph` (not of its subgraphs) and then the symbolic
/// ops only they used (sym_size.int -> _operator.ge -> _assert_scalar); linear.
void removeGraphAssertsIn(Graph &graph);
/// False when a node of this target is neither an assert nor a symbolic op,
/// so removeGraphAssertsIn leaves it alone (from the text alone; true may be wrong).
bool mayHoldGraphAssertWork(const std::string &target);
/// removeGraphAssertsIn on every method's graph and control-flow branches.
void removeProgramAsserts(Program &program);
/// ATen ops computing a symbolic int from a tensor (sym_size.int, sym_numel, ...).
bool isSymSizeOp(const OpTarget &t);

/// Calls `fn(graph, path)` for every graph argument (cond branches, map bodies)
/// of the nodes of `graph`, recursively, parents first. `path` is the chain of
/// graph-argument names from the method's graph ("true_graph_0",
/// "true_graph_0/false_graph_0"); it qualifies a subgraph's value names in a
/// memory plan.
void forEachSubgraph(Graph &graph, const std::function<void(Graph &, const std::string &)> &fn,
                     const std::string &prefix = "");
void forEachSubgraph(const Graph &graph, const std::function<void(const Graph &, const std::string &)> &fn,
                     const std::string &prefix = "");
/// "path/name" (or "name" at the method level): a value's key in MemoryPlan::allocations.
std::string scopedValueName(const std::string &path, const std::string &name);
std::string atenTarget(const std::string &ns, const std::string &name, const std::string &overload);
std::string edgeTarget(const std::string &ns, const std::string &name, const std::string &overload);
inline const char *kAllocTarget = "executorch.exir.memory.alloc";
inline const char *kViewTarget = "executorch.exir.memory.view";
inline const char *kDelegateTarget = "torch.ops.higher_order.executorch_call_delegate";

} // namespace exir
