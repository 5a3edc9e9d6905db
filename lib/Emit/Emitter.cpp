//===- Emit/Emitter.cpp - planned program -> pte::Program -----------------===//
#include "Emit/Emitter.h"
#include "Emit/ConstantLayout.h"
#include "IR/StringHash.h"
#include "IR/TreeSpec.h"
#include "IR/ValueNames.h"
#include "Pte/DistinctBlobs.h"
#include "Ops/OperatorTable.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "Support/Hash.h"
#include "Support/Strings.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace exir::emit {

namespace {

/// The bytes a DataRef names; file ranges with a recorded CRC-32 are checked
/// as they stream, so a replaced weights file fails instead of emitting
/// wrong bytes. `what` names the payload in errors ("constant 'w'").
pte::BlobSource blobOf(const DataRef &ref, const std::string &what) {
  if (ref.inlineBytes) return pte::BlobSource::fromBytes(*ref.inlineBytes);
  pte::BlobSource blob = pte::BlobSource::fromFile(ref.file, ref.offset, ref.length);
  return ref.crc32 ? blob.withExpectedCrc32(*ref.crc32, what) : blob;
}

/// Program-wide constant list shared by all methods, deduplicated by bytes
/// (tied weights: one storage, several FQNs), or the external .ptd entries.
class ConstantPool {
public:
  ConstantPool(pte::Program &out, ExternalConstants *external, size_t expected) : out_(out), external_(external) {
    if (!external) distinct_.reserve(expected);
  }

  /// Fills the program's constant list once every method is emitted: the
  /// distinct blobs themselves, not a second copy of each (100k constants).
  void finish() {
    std::vector<pte::BlobSource> blobs = distinct_.take();
    out_.constants.reserve(blobs.size() + 1);
    out_.constants.push_back(pte::BlobSource());
    std::move(blobs.begin(), blobs.end(), std::back_inserter(out_.constants));
  }

  /// Gives the placeholder tensor `t` its data: dense bytes in the emitted dim
  /// order, in the constant segment or, when external, under its FQN.
  void place(pte::Tensor &t, const ConstantTensor &c, const std::string &name) {
    if (!c.data.inlineBytes && c.data.file.empty())
      throw Error("constant '" + name + "' has no data reference", {}, "/constants/" + name);
    t.dimOrder = emittedDimOrder(t.dimOrder);
    pte::BlobSource blob = denseConstantBytes(c, t.dimOrder, "constant '" + name + "'");
    if (external_ && external_->matches(name)) {
      t.extraTensorInfo = pte::ExtraTensorInfo{0, name, pte::TensorDataLocation::External};
      external_->add(name, blob, t);
      return;
    }
    size_t index = distinct_.add(blob);
    t.dataBufferIdx = uint32_t(index + 1); // 0 is the placeholder
  }

private:
  pte::Program &out_;
  ExternalConstants *external_;
  pte::DistinctBlobs distinct_;
};

/// ExecuTorch's compact pytree string of a checked spec (see Emitter.h).
std::string compactTreeSpec(const TreeSpec &spec) {
  if (spec.isLeaf()) return "$";
  std::string kind;
  bool dict = false;
  if (spec.type == "builtins.tuple") kind = "T";
  else if (spec.type == "builtins.list") kind = "L";
  else if (spec.type == "builtins.dict" || spec.type == "collections.OrderedDict") {
    kind = "D";
    dict = true;
  } else if (spec.type == "collections.namedtuple") kind = "N";
  else kind = "C(" + spec.type + ")";
  std::string out = kind + std::to_string(spec.children.size());
  for (const auto &child : spec.children) out += "#" + std::to_string(child.leafCount());
  out += "(";
  for (size_t i = 0; i < spec.children.size(); ++i) {
    if (i) out += ",";
    if (dict) {
      const TreeSpec::Key &k = spec.keys[i];
      out += (k.isString ? "'" + k.text + "'" : k.text) + ":";
    }
    out += compactTreeSpec(spec.children[i]);
  }
  return out + ")";
}

/// A hash table keyed by names the graph owns (the graph outlives the
/// emitter; a slot points at the characters of the graph's string, one cache
/// miss fewer per hit than at the std::string): open addressing, 24 bytes a
/// slot, no key copies and no allocation per entry. A 100k-node
/// method has ~300k values, and a node-based map of copied std::string keys
/// was most of the emit pass.
template <typename V> class NameTable {
public:
  void reserve(size_t n) { rehash(n); }
  const V *find(std::string_view key) const {
    if (slots_.empty()) return nullptr;
    const Slot &slot = slots_[probe(key, hashOf(key))];
    return slot.key ? &slot.value : nullptr;
  }
  /// Inserts or overwrites. `key` must outlive the table.
  void set(const std::string &key, V value) {
    rehash(size_ + 1);
    size_t hash = hashOf(key);
    Slot &slot = slots_[probe(key, hash)];
    if (!slot.key) {
      slot.key = key.data();
      slot.size = uint32_t(key.size());
      slot.tag = uint32_t(hash);
      ++size_;
    }
    slot.value = value;
  }

private:
  struct Slot {
    const char *key = nullptr; // null: free
    uint32_t size = 0;
    uint32_t tag = 0; // low hash bits: most mismatches skip the string compare
    V value{};
  };
  static size_t hashOf(std::string_view key) { return size_t(hashString(key)); }
  /// The slot holding `key`, or the free slot where it goes.
  size_t probe(std::string_view key, size_t hash) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot &slot = slots_[i];
      if (!slot.key || (slot.tag == uint32_t(hash) && std::string_view(slot.key, slot.size) == key)) return i;
    }
  }
  /// Room for `n` entries at most 3/4 full (a power of two of slots).
  void rehash(size_t n) {
    if (4 * n <= 3 * slots_.size()) return;
    size_t capacity = 16;
    while (4 * n > 3 * capacity) capacity *= 2;
    std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
    for (const Slot &slot : old)
      if (slot.key) slots_[probe(std::string_view(slot.key, slot.size), slot.tag)] = slot; // the tag holds the bits a slot index uses
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

/// The values of one graph being emitted. A cond branch is emitted in its own
/// scope (its value names are local to it) into the method's single chain.
struct Scope {
  Scope(const Graph &g, std::string path) : graph(&g), path(std::move(path)) {
    // Out-variant results and views name the storage of another value.
    // (About one a kernel: a planned graph is half memory.alloc nodes.)
    aliases.reserve(g.nodes.size() / 2);
    plan::forEachStorageAlias(g, [&](const std::string &value, const std::string &base) { aliases.set(value, &base); });
    ids.reserve(g.tensorValues.size() + g.symIntValues.size());
  }
  const Graph *graph;
  std::string path; // subgraph path, qualifies names in the memory plan
  NameTable<const std::string *> aliases;
  NameTable<int32_t> ids;
};

/// Python sym ops -> the ExecuTorch prim ops upstream's emitter calls for them.
const char *primOpFor(const OpTarget &t) {
  static const std::map<std::string, const char *> kPrim = {
      {"add", "add"}, {"sub", "sub"}, {"mul", "mul"}, {"floordiv", "floordiv"}, {"truediv", "truediv"},
      {"mod", "mod"}, {"eq", "eq"}, {"ne", "ne"}, {"gt", "gt"}, {"lt", "lt"}, {"ge", "ge"}, {"le", "le"},
      {"neg", "neg"}, {"ceil", "ceil"}, {"round", "round"}, {"trunc", "trunc"}, {"sym_float", "sym_float"},
      {"sym_max", "sym_max"}, {"sym_min", "sym_min"},
  };
  auto it = kPrim.find(t.name);
  return it == kPrim.end() ? nullptr : it->second;
}

class MethodEmitter {
public:
  MethodEmitter(const Program &program, const std::string &name, const Method &method, ConstantPool &constants,
                const EmitOptions &options)
      : program_(program), name_(name), method_(method), ep_(method.program), graph_(method.program.graph),
        constants_(constants), options_(options), top_(graph_, ""), scope_(&top_) {}

  pte::ExecutionPlan emit() {
    plan_.name = name_;
    plan_.chains.emplace_back();
    // A value per tensor plus the literal arguments (a few per node; the
    // graphs measured have under one per two nodes): growing a vector of
    // 96-byte values by doubling touched twice the memory.
    plan_.values.reserve(graph_.tensorValues.size() + graph_.nodes.size() / 2 + 16);
    plan_.chains[0].instructions.reserve(graph_.nodes.size());
    emitPlaceholders();
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      try {
        emitNode(graph_.nodes[i]);
      } catch (Error &e) {
        e.withLocation("/methods/" + name_ + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                       graph_.nodes[i].displayName() + ")");
        throw;
      }
    }
    emitOutputs();
    if (options_.emitStacktraces) padFrames(nullptr);
    for (uint64_t s : method_.plan->bufferSizes) plan_.nonConstBufferSizes.push_back(int64_t(s));
    if (plan_.nonConstBufferSizes.size() < 2) plan_.nonConstBufferSizes.resize(2, 0);
    emitContainerMeta();
    return std::move(plan_);
  }

private:
  int32_t push(pte::EValue v) {
    plan_.values.push_back(std::move(v));
    return int32_t(plan_.values.size() - 1);
  }

  pte::Tensor tensorOf(const std::string &valueName, bool planned) {
    const TensorMeta *meta = scope_->graph->tensorValues.find(valueName);
    if (!meta) throw Error("tensor '" + valueName + "' has no metadata");
    pte::Tensor t;
    t.scalarType = meta->dtype;
    t.sizes.reserve(meta->sizes.size());
    t.dimOrder.reserve(meta->sizes.size());
    bool dynamic = false;
    for (size_t d = 0; d < meta->sizes.size(); ++d) {
      const SymInt &s = meta->sizes[d];
      if (s.isExpr) dynamic = true;
      // The .pte stores sizes as int32.
      int64_t size = plan::upperBound(s, ep_);
      if (size < 0 || size > INT32_MAX)
        throw Error("tensor '" + valueName + "' has size " + std::to_string(size) + " in dim " + std::to_string(d) +
                        (s.isExpr ? " (upper bound of " + s.expr() + ")" : std::string()) +
                        ", outside the 0..2^31-1 a .pte can hold",
                    {}, scope_->path.empty() ? "/methods/" + name_ + "/graph_module/graph/tensor_values/" + valueName
                                             : "/methods/" + name_ + " (subgraph " + scope_->path + ")");
      t.sizes.push_back(int32_t(size));
    }
    // TensorMeta::dimOrder sorts the dims by stride (a vector and a stable
    // sort's buffer per tensor); strides already in order, as nearly all are,
    // give the identity without that.
    const std::vector<SymInt> &strides = meta->strides;
    bool inOrder = strides.size() == meta->sizes.size();
    for (size_t d = 0; d + 1 < strides.size() && inOrder; ++d)
      inOrder = strides[d].isExpr || strides[d + 1].isExpr || strides[d].value >= strides[d + 1].value;
    if (inOrder)
      for (size_t d = 0; d < meta->sizes.size(); ++d) t.dimOrder.push_back(uint8_t(d));
    else
      for (int64_t d : meta->dimOrder()) t.dimOrder.push_back(uint8_t(d));
    t.requiresGrad = meta->requiresGrad;
    t.shapeDynamism = dynamic ? pte::TensorShapeDynamism::DynamicBound : pte::TensorShapeDynamism::Static;
    if (planned) {
      // The method's own values are planned under their plain names: no copy.
      const Allocation *a = scope_->path.empty() ? method_.plan->allocations.find(valueName)
                                                 : method_.plan->allocations.find(scopedValueName(scope_->path, valueName));
      if (a) t.allocationInfo = pte::AllocationDetails::at(a->memId, a->offset);
    }
    return t;
  }

  void emitPlaceholders() {
    for (size_t i = 0; i < ep_.signature.inputSpecs.size(); ++i) {
      const InputSpec &spec = ep_.signature.inputSpecs[i];
      const Argument &arg = graph_.inputs.at(i);
      if (arg.kind != ArgKind::Tensor) {
        // Non-tensor user input (e.g. a float): a scalar value the caller sets.
        int32_t id = push(arg.kind == ArgKind::SymFloat ? pte::EValue(pte::Double{0}) : pte::EValue(pte::Int{0}));
        if (arg.kind == ArgKind::SymInt && !arg.syms.empty()) scope_->ids.set(arg.syms[0].name, id);
        if (spec.kind == InputKind::UserInput) plan_.inputs.push_back(id);
        continue;
      }
      bool isConstant = spec.kind == InputKind::Parameter || spec.kind == InputKind::TensorConstant ||
                        (spec.kind == InputKind::Buffer && !method_.plan->allocations.contains(arg.name));
      pte::Tensor t = tensorOf(arg.name, !isConstant);
      if (isConstant) {
        const ConstantTensor *c = program_.constants.find(spec.target);
        if (!c) throw Error("no constant data for '" + spec.target + "' (input '" + arg.name + "')", {},
                            "/methods/" + name_ + "/graph_module/signature/input_specs/" + std::to_string(i));
        constants_.place(t, *c, spec.target);
      }
      int32_t id = push(std::move(t));
      scope_->ids.set(arg.name, id);
      if (spec.kind == InputKind::UserInput) plan_.inputs.push_back(id);
    }
  }

  int32_t operatorIndex(const std::string &name, const std::string &overload) {
    for (size_t i = 0; i < plan_.operators.size(); ++i)
      if (plan_.operators[i].name == name && plan_.operators[i].overload == overload) return int32_t(i);
    plan_.operators.push_back(pte::Operator{name, overload});
    return int32_t(plan_.operators.size() - 1);
  }

  int32_t valueOf(std::string_view name) {
    if (const int32_t *id = scope_->ids.find(name)) return *id;
    if (const std::string *const *base = scope_->aliases.find(name)) return valueOf(**base);
    throw Error("value '" + std::string(name) + "' is used before the emitter has seen it");
  }

  /// Emits a literal argument as new values (no deduplication, as upstream).
  int32_t emitArgument(const Argument &a, const SchemaArgument &param) {
    switch (a.kind) {
    case ArgKind::Tensor: return valueOf(a.name);
    case ArgKind::OptionalTensor:
      if (!a.name.empty()) return valueOf(a.name);
      [[fallthrough]];
    case ArgKind::None:
      if (param.type.isTensor() && !param.type.optional) {
        pte::Tensor empty;
        empty.scalarType = ScalarType::Byte;
        empty.sizes = {0};
        empty.dimOrder = {0};
        return push(std::move(empty));
      }
      return push(pte::Null{});
    case ArgKind::Int: return push(pte::Int{a.intValue});
    case ArgKind::Float: return push(pte::Double{a.floatValue});
    case ArgKind::Bool: return push(pte::Bool{a.intValue != 0});
    case ArgKind::String: return push(pte::String{a.name});
    case ArgKind::ScalarType: return push(pte::Int{a.intValue});
    case ArgKind::Layout: return push(pte::Int{a.intValue == kLayoutStrided ? 0 : 1});
    case ArgKind::MemoryFormat:
      if (a.intValue == kMemoryFormatContiguous) return push(pte::Int{0});
      if (a.intValue == kMemoryFormatPreserve) return push(pte::Int{1});
      throw Error("memory_format " + std::to_string(a.intValue) + " cannot be emitted (only contiguous and preserve)");
    case ArgKind::Ints: {
      pte::IntList list;
      list.items.reserve(a.ints.size());
      for (int64_t v : a.ints) list.items.push_back(push(pte::Int{v}));
      return push(std::move(list));
    }
    case ArgKind::SymInts: {
      pte::IntList list;
      list.items.reserve(a.syms.size());
      for (const auto &s : a.syms) list.items.push_back(s.isName ? valueOf(s.name) : push(pte::Int{s.intValue}));
      return push(std::move(list));
    }
    case ArgKind::SymInt:
      if (!a.syms.empty() && a.syms[0].isName) return valueOf(a.syms[0].name);
      return push(pte::Int{a.syms.empty() ? 0 : a.syms[0].intValue});
    case ArgKind::Floats: return push(pte::DoubleList{a.floats()});
    case ArgKind::Bools: {
      pte::BoolList list;
      for (int64_t v : a.ints) list.items.push_back(v != 0);
      return push(std::move(list));
    }
    case ArgKind::Tensors: {
      pte::TensorList list;
      list.items.reserve(a.names.size());
      for (const auto &n : a.names) list.items.push_back(valueOf(n));
      return push(std::move(list));
    }
    case ArgKind::OptionalTensors: {
      pte::OptionalTensorList list;
      for (const auto &n : a.names) list.items.push_back(n.empty() ? -1 : valueOf(n));
      return push(std::move(list));
    }
    default:
      throw Error(std::string("argument '") + param.name + "' of kind " + argKindTag(a.kind) + " cannot be emitted");
    }
  }

  /// Chain.stacktrace holds one FrameList per instruction: the instructions
  /// emitted since the last call get `node`'s frames (none for null).
  void padFrames(const Node *node) {
    auto &chain = plan_.chains[0];
    if (!chain.stacktrace) chain.stacktrace.emplace();
    pte::FrameList frames;
    if (node)
      if (const SharedString *trace = node->metadata.find("stack_trace")) frames = framesOfStackTrace(trace->str());
    while (chain.stacktrace->size() < chain.instructions.size()) chain.stacktrace->push_back(frames);
  }

  void emitNode(const Node &node) {
    if (!options_.emitStacktraces) return emitNodeInstructions(node);
    // The instructions an enclosing node (a cond) emitted so far are its own.
    padFrames(enclosing_.empty() ? nullptr : enclosing_.back());
    enclosing_.push_back(&node);
    emitNodeInstructions(node);
    enclosing_.pop_back();
    padFrames(&node);
  }

  /// A node target parsed once per method, with its schema and operator
  /// index: a 100k-node graph has a handful of distinct targets.
  struct KnownTarget {
    OpTarget target;
    const OpSchema *schema = nullptr; // kernel calls only
    int32_t opIndex = -1;
  };

  KnownTarget &knownTarget(const std::string &target) {
    auto [it, inserted] = targets_.try_emplace(target);
    if (inserted) it->second.target = parseTarget(target);
    return it->second;
  }

  void emitNodeInstructions(const Node &node) {
    KnownTarget &known = knownTarget(node.target);
    const OpTarget &t = known.target;
    switch (t.dialect) {
    case TargetDialect::MemoryAlloc: {
      const std::string &name = node.outputs.at(0).name;
      scope_->ids.set(name, push(tensorOf(name, true)));
      return;
    }
    case TargetDialect::MemoryView: return emitView(node);
    case TargetDialect::HigherOrder:
      if (t.name == "executorch_call_delegate") return emitDelegateCall(node);
      if (t.name == "cond") return emitCond(node);
      throw Error("higher-order op " + node.target + " cannot be emitted yet");
    case TargetDialect::SymOp: return emitSymOp(node, t);
    default:
      break;
    }
    emitKernelCall(node, known);
  }

  void emitKernelCall(const Node &node, KnownTarget &known) {
    const OpTarget &t = known.target;
    if (!known.schema) {
      known.schema = OperatorTable::builtin().lookup(t.qualifiedName());
      if (!known.schema) throw Error("operator " + t.qualifiedName() + " is unknown to the operator table");
      known.opIndex = operatorIndex(t.ns + "::" + t.name, t.overload == "default" ? "" : t.overload);
    }
    const OpSchema *schema = known.schema;
    pte::KernelCall call;
    call.opIndex = known.opIndex;
    // One allocation per call, not one per doubling (100k calls are kept).
    call.args.reserve(schema->arguments.size() + 1);
    std::vector<int32_t> &outIds = outIds_;
    outIds.clear();
    for (const auto &param : schema->arguments) {
      const NamedArgument *given = node.input(param.name);
      Argument fallback; // only for a default: the given argument is not copied
      if (!given) {
        if (!param.defaultValue)
          throw Error("argument '" + param.name + "' of " + schema->qualifiedName() + " is missing and has no default");
        fallback = defaultToArgument(param);
      }
      int32_t id = emitArgument(given ? given->arg : fallback, param);
      call.args.push_back(id);
      if (param.isOut) outIds.push_back(id);
    }
    // The return slot.
    if (schema->isInplace() && !call.args.empty()) {
      // In place (copy_): the result is the mutated first argument itself.
      call.args.push_back(call.args[0]);
      for (const auto &o : node.outputs)
        if (o.kind == ArgKind::Tensor) scope_->ids.set(o.name, call.args[0]);
    } else if (outIds.size() == 1) {
      call.args.push_back(outIds[0]);
    } else if (outIds.size() > 1) {
      call.args.push_back(push(pte::TensorList{outIds}));
    } else {
      // Sym / prim ops: a placeholder the kernel overwrites (upstream always emits Int 0).
      int32_t ret = push(pte::Int{0});
      call.args.push_back(ret);
      for (const auto &o : node.outputs)
        if ((o.kind == ArgKind::SymInt || o.kind == ArgKind::SymFloat || o.kind == ArgKind::SymBool) && !o.syms.empty())
          scope_->ids.set(o.syms[0].name, ret);
        else if (o.kind == ArgKind::Tensor)
          scope_->ids.set(o.name, ret);
    }
    plan_.chains[0].instructions.push_back(std::move(call));
  }

  /// memory.view: a free alias when static and its base has storage; otherwise
  /// executorch_prim::et_view(self, size, out), which sets the sizes at run time.
  void emitView(const Node &node) {
    const std::string &name = node.outputs.at(0).name;
    const std::string &base = node.inputs.at(0).arg.name;
    pte::Tensor t = tensorOf(name, true);
    const auto &baseValue = std::get<pte::Tensor>(plan_.values.at(size_t(valueOf(base))));
    t.allocationInfo = baseValue.allocationInfo;
    t.dataBufferIdx = baseValue.dataBufferIdx;
    bool hasStorage = baseValue.allocationInfo || baseValue.dataBufferIdx != 0;
    if (t.shapeDynamism == pte::TensorShapeDynamism::Static &&
        baseValue.shapeDynamism == pte::TensorShapeDynamism::Static && hasStorage) {
      scope_->ids.set(name, push(std::move(t)));
      return;
    }
    const OpSchema *schema = OperatorTable::builtin().lookup("executorch_prim::et_view");
    if (!schema || schema->arguments.size() != 2) throw InternalError("executorch_prim::et_view is not in the operator table");
    const NamedArgument *size = node.inputs.size() > 1 ? &node.inputs[1] : nullptr;
    if (!size) throw Error("memory.view has no size argument");
    int32_t self = valueOf(base);
    int32_t sizeId = emitArgument(size->arg, schema->arguments[1]);
    int32_t out = push(std::move(t));
    scope_->ids.set(name, out);
    pte::KernelCall call;
    call.opIndex = operatorIndex("executorch_prim::et_view", "default");
    call.args = {self, sizeId, out};
    plan_.chains[0].instructions.push_back(std::move(call));
  }

  /// _operator.mul(a, b) -> executorch_prim::mul.Scalar [a, b, ret]; the return is
  /// a placeholder Int the kernel overwrites (upstream always emits Int 0).
  void emitSymOp(const Node &node, const OpTarget &t) {
    const char *prim = primOpFor(t);
    if (!prim) throw Error("symbolic op " + node.target + " has no ExecuTorch prim op");
    std::string qualified = std::string("executorch_prim::") + prim;
    const OpSchema *schema = OperatorTable::builtin().lookup(qualified + ".Scalar");
    if (!schema) throw InternalError(qualified + ".Scalar is not in the operator table");
    if (node.inputs.size() != schema->arguments.size())
      throw Error(node.target + " takes " + std::to_string(schema->arguments.size()) + " arguments, got " +
                  std::to_string(node.inputs.size()));
    pte::KernelCall call;
    call.opIndex = operatorIndex(qualified, "Scalar");
    for (size_t k = 0; k < node.inputs.size(); ++k) {
      const Argument &a = node.inputs[k].arg;
      switch (a.kind) {
      case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
        if (!a.syms.empty() && a.syms[0].isName) call.args.push_back(valueOf(a.syms[0].name));
        else if (a.kind == ArgKind::SymFloat) call.args.push_back(push(pte::Double{a.syms.empty() ? 0 : a.syms[0].floatValue}));
        else if (a.kind == ArgKind::SymBool) call.args.push_back(push(pte::Bool{!a.syms.empty() && a.syms[0].intValue != 0}));
        else call.args.push_back(push(pte::Int{a.syms.empty() ? 0 : a.syms[0].intValue}));
        break;
      default: call.args.push_back(emitArgument(a, schema->arguments[k])); break;
      }
    }
    int32_t ret = push(pte::Int{0});
    call.args.push_back(ret);
    for (const auto &o : node.outputs)
      if (!o.syms.empty() && o.syms[0].isName) scope_->ids.set(o.syms[0].name, ret);
    plan_.chains[0].instructions.push_back(std::move(call));
  }

  /// cond(pred, true_graph, false_graph, operands), inlined as upstream's emitter
  /// does (pte-format.md §3.6): the outputs are new values; JumpFalse(pred) over
  /// the true branch, which ends with MoveCalls into the outputs; an
  /// unconditional JumpFalse(Bool false) over the false branch, which ends with
  /// its MoveCalls. Destinations are absolute instruction indices in the chain.
  void emitCond(const Node &node) {
    if (node.inputs.size() != 4 || node.inputs[1].arg.kind != ArgKind::Graph ||
        node.inputs[2].arg.kind != ArgKind::Graph || node.inputs[3].arg.kind != ArgKind::Tensors)
      throw Error("cond expects (pred, true_graph, false_graph, operands)");
    std::vector<int32_t> outIds;
    for (const auto &o : node.outputs) {
      if (o.kind != ArgKind::Tensor) throw Error(std::string("cond output of kind ") + argKindTag(o.kind) + " cannot be emitted");
      int32_t id = push(tensorOf(o.name, true));
      scope_->ids.set(o.name, id);
      outIds.push_back(id);
    }
    const Argument &pred = node.inputs[0].arg;
    int32_t predId = pred.kind == ArgKind::Tensor ? valueOf(pred.name)
                     : pred.kind == ArgKind::SymBool && !pred.syms.empty() && pred.syms[0].isName
                         ? valueOf(pred.syms[0].name)
                         : push(pte::Bool{pred.kind == ArgKind::Bool ? pred.intValue != 0
                                                                      : !pred.syms.empty() && pred.syms[0].intValue != 0});
    std::vector<int32_t> operands;
    for (const auto &n : node.inputs[3].arg.names) operands.push_back(valueOf(n));
    auto &chain = plan_.chains[0].instructions;
    size_t jumpToFalse = chain.size();
    chain.push_back(pte::JumpFalseCall{predId, -1});
    emitBranch(node.inputs[1].arg, operands, outIds);
    int32_t falseValue = push(pte::Bool{false});
    size_t jumpToEnd = chain.size();
    chain.push_back(pte::JumpFalseCall{falseValue, -1});
    std::get<pte::JumpFalseCall>(chain[jumpToFalse]).destinationInstruction = int32_t(chain.size());
    emitBranch(node.inputs[2].arg, operands, outIds);
    std::get<pte::JumpFalseCall>(chain[jumpToEnd]).destinationInstruction = int32_t(chain.size());
  }

  void emitBranch(const Argument &branch, const std::vector<int32_t> &operands, const std::vector<int32_t> &outIds) {
    const Graph &g = *branch.graph();
    Scope sub(g, scopedValueName(scope_->path, branch.graphName()));
    if (g.inputs.size() != operands.size()) throw Error("cond branch '" + branch.graphName() + "' takes a different number of operands");
    for (size_t k = 0; k < g.inputs.size(); ++k) {
      const Argument &in = g.inputs[k];
      if (in.kind == ArgKind::Tensor) sub.ids.set(in.name, operands[k]);
      else if (in.kind == ArgKind::SymInt && !in.syms.empty()) sub.ids.set(in.syms[0].name, operands[k]);
    }
    Scope *outer = scope_;
    scope_ = &sub;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      try {
        emitNode(g.nodes[i]);
      } catch (Error &e) {
        scope_ = outer;
        e.withLocation(sub.path + "/nodes/" + std::to_string(i) + " (" + g.nodes[i].displayName() + ")");
        throw;
      }
    }
    if (g.outputs.size() != outIds.size()) throw Error("cond branch '" + branch.graphName() + "' returns a different number of values");
    for (size_t k = 0; k < g.outputs.size(); ++k) {
      const Argument &o = g.outputs[k];
      if (o.kind != ArgKind::Tensor) throw Error(std::string("cond branch output of kind ") + argKindTag(o.kind) + " cannot be emitted");
      int32_t from = valueOf(o.name);
      if (from != outIds[k]) plan_.chains[0].instructions.push_back(pte::MoveCall{from, outIds[k]});
    }
    scope_ = outer;
  }

  void emitDelegateCall(const Node &node) {
    if (node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::String)
      throw Error("executorch_call_delegate's first argument must name the lowered module");
    const std::string &moduleName = node.inputs[0].arg.name;
    const Delegate *d = program_.delegates.find(moduleName);
    if (!d) throw Error("delegate '" + moduleName + "' is not in the program's delegates table");
    pte::BackendDelegate bd;
    bd.id = d->backendId;
    bd.processedData = blobOf(d->processed, "blob of delegate '" + moduleName + "'");
    for (const auto &cs : d->compileSpecs) bd.compileSpecs.push_back(pte::CompileSpec{cs.key, cs.value});
    plan_.delegates.push_back(std::move(bd));
    pte::DelegateCall call;
    call.delegateIndex = int32_t(plan_.delegates.size() - 1);
    std::vector<int32_t> outIds;
    for (const auto &o : node.outputs)
      forEachTensorName(o, [&](const std::string &n) { // n lives in the graph: the table keeps a view of it
        int32_t id = push(tensorOf(n, true));
        scope_->ids.set(n, id);
        outIds.push_back(id);
      });
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      const Argument &a = node.inputs[i].arg;
      if (a.kind == ArgKind::Tensor) call.args.push_back(valueOf(a.name));
      else if (a.kind == ArgKind::Int) call.args.push_back(push(pte::Int{a.intValue}));
      else if (a.kind == ArgKind::Float) call.args.push_back(push(pte::Double{a.floatValue}));
      else if (a.kind == ArgKind::Bool) call.args.push_back(push(pte::Bool{a.intValue != 0}));
      else throw Error("delegate input of kind " + std::string(argKindTag(a.kind)) + " cannot be emitted");
    }
    call.args.insert(call.args.end(), outIds.begin(), outIds.end());
    plan_.chains[0].instructions.push_back(std::move(call));
  }

  void emitOutputs() {
    for (size_t i = 0; i < graph_.outputs.size(); ++i) {
      const OutputSpec *spec = i < ep_.signature.outputSpecs.size() ? &ep_.signature.outputSpecs[i] : nullptr;
      if (spec && spec->kind != OutputKind::UserOutput) continue; // mutations are not outputs
      const Argument &o = graph_.outputs[i];
      switch (o.kind) {
      case ArgKind::Tensor: plan_.outputs.push_back(valueOf(o.name)); break;
      case ArgKind::Int: plan_.outputs.push_back(push(pte::Int{o.intValue})); break;
      case ArgKind::Float: plan_.outputs.push_back(push(pte::Double{o.floatValue})); break;
      case ArgKind::Bool: plan_.outputs.push_back(push(pte::Bool{o.intValue != 0})); break;
      case ArgKind::None: plan_.outputs.push_back(push(pte::Null{})); break;
      case ArgKind::SymInt:
        plan_.outputs.push_back(o.syms.at(0).isName ? valueOf(o.syms[0].name) : push(pte::Int{o.syms[0].intValue}));
        break;
      default: throw Error(std::string("graph output of kind ") + argKindTag(o.kind) + " cannot be emitted");
      }
    }
  }

  void emitContainerMeta() {
    pte::ContainerMetadata meta;
    const ModuleCallSignature *sig = nullptr;
    for (const auto &entry : ep_.moduleCallGraph)
      if (entry.fqn.empty() && entry.signature) sig = &*entry.signature;
    if (sig) {
      meta.encodedInpStr = compactPytreeSpec(sig->inSpec);
      meta.encodedOutStr = compactPytreeSpec(sig->outSpec);
    } else {
      // No spec recorded: ((inputs...), {}) in, a flat tuple out.
      size_t n = plan_.inputs.size(), m = plan_.outputs.size();
      std::string in = "T" + std::to_string(n);
      for (size_t i = 0; i < n; ++i) in += "#1";
      in += "(";
      for (size_t i = 0; i < n; ++i) in += i ? ",$" : "$";
      in += ")";
      meta.encodedInpStr = "T2#" + std::to_string(n) + "#0(" + in + ",D0())";
      std::string out = m == 1 ? "$" : "T" + std::to_string(m);
      if (m != 1) {
        for (size_t i = 0; i < m; ++i) out += "#1";
        out += "(";
        for (size_t i = 0; i < m; ++i) out += i ? ",$" : "$";
        out += ")";
      }
      meta.encodedOutStr = out;
    }
    plan_.containerMetaType = meta;
  }

  const Program &program_;
  std::string name_;
  const Method &method_;
  const ExportedProgram &ep_;
  const Graph &graph_;
  ConstantPool &constants_;
  const EmitOptions &options_;
  Scope top_;
  Scope *scope_; // the graph being emitted: the method's, or a cond branch's
  std::vector<const Node *> enclosing_; // nodes being emitted, outermost first (--emit-stacktraces)
  std::unordered_map<std::string_view, KnownTarget> targets_; // by node.target (the graph's string)
  std::vector<int32_t> outIds_; // emitKernelCall's out arguments, reused from call to call
  pte::ExecutionPlan plan_;
};

} // namespace

std::string compactPytreeSpec(const std::string &treespecJson) {
  if (treespecJson.empty()) return "";
  return compactTreeSpec(parseTreeSpec(treespecJson));
}

/// The constants delegates own go to Program.named_data keyed by FQN, where the
/// backend finds them at init; each key once, in delegate order.
void emitDelegateNamedData(const Program &program, pte::Program &out) {
  std::map<std::string, std::pair<std::string, const ConstantTensor *>> byKey; // FQN -> (delegate, constant)
  for (const auto &[name, d] : program.delegates)
    for (const auto &[fqn, c] : d.namedData) {
      auto [it, inserted] = byKey.emplace(fqn, std::make_pair(name, &c));
      if (!inserted) {
        if (!(*it->second.second == c))
          throw Error("delegates '" + it->second.first + "' and '" + name + "' own different data named '" + fqn + "'",
                      {}, "/delegates/" + name + "/named_data/" + fqn);
        continue;
      }
      if (!out.namedData) out.namedData.emplace();
      pte::NamedData entry;
      entry.key = fqn;
      // The tensor's bytes, contiguous: a view (a folded transpose, a slice of a
      // shared storage) is not its whole storage.
      std::vector<uint8_t> contiguous(c.sizes.size());
      std::iota(contiguous.begin(), contiguous.end(), uint8_t(0));
      entry.data = denseConstantBytes(c, contiguous, "constant '" + fqn + "' of delegate '" + name + "'");
      entry.alignment = 16;
      out.namedData->push_back(std::move(entry));
    }
}

void ExternalConstants::add(const std::string &fqn, const pte::BlobSource &bytes, const pte::Tensor &tensor) {
  for (const auto &entry : entries)
    if (entry.key == fqn) return; // used by several methods
  ptd::NamedData entry;
  entry.key = fqn;
  entry.tensorLayout = ptd::TensorLayout{tensor.scalarType, tensor.sizes, tensor.dimOrder};
  entry.data = bytes;
  entries.push_back(std::move(entry));
}

pte::FrameList framesOfStackTrace(const std::string &stackTrace) {
  auto strip = [](std::string s) {
    size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
    return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
  };
  std::vector<std::string> lines = splitFields(stackTrace, '\n');
  pte::FrameList frames;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string line = strip(lines[i]);
    // File "(.*)", line (\d+), in (.*)
    if (line.rfind("File \"", 0) != 0) continue;
    size_t close = line.find("\", line ", 6);
    if (close == std::string::npos) continue;
    size_t digits = close + 8, end = digits;
    while (end < line.size() && std::isdigit(static_cast<unsigned char>(line[end]))) ++end;
    if (end == digits || line.compare(end, 5, ", in ") != 0) continue;
    pte::Frame f;
    f.filename = line.substr(6, close - 6);
    f.lineno = int32_t(std::strtol(line.c_str() + digits, nullptr, 10));
    f.name = line.substr(end + 5);
    f.context = i + 1 < lines.size() ? strip(lines[i + 1]) : "";
    frames.items.push_back(std::move(f));
  }
  return frames;
}

pte::Program emitProgram(const Program &program, ExternalConstants *external, const EmitOptions &options) {
  if (program.stage != Stage::Planned)
    throw Error(std::string("exir-emit needs a planned program, got stage '") + stageName(program.stage) + "'");
  pte::ScopedFileCache files; // deduplication samples constants: one open per weights file
  pte::Program out;
  ConstantPool constants(out, external, program.constants.size());
  // Methods are emitted sorted by name, as upstream does.
  std::vector<std::string> names;
  for (const auto &[name, m] : program.methods) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const auto &name : names) {
    const Method &m = *program.methods.find(name);
    if (!m.plan) throw Error("method has no memory plan", {}, "/memory_plans/" + name);
    out.executionPlan.push_back(MethodEmitter(program, name, m, constants, options).emit());
  }
  constants.finish();
  emitDelegateNamedData(program, out);
  // Constant methods follow, in the order they were given (as upstream's prim getters).
  for (const auto &[name, values] : program.constantMethods) {
    if (program.methods.contains(name))
      throw Error("constant method '" + name + "' has the name of a method", {}, "/constant_methods/" + name);
    pte::ExecutionPlan plan;
    plan.name = name;
    for (const auto &c : values) {
      switch (c.kind) {
      case ConstantValue::Kind::Int: plan.values.push_back(pte::Int{c.intValue}); break;
      case ConstantValue::Kind::Float: plan.values.push_back(pte::Double{c.floatValue}); break;
      case ConstantValue::Kind::Bool: plan.values.push_back(pte::Bool{c.intValue != 0}); break;
      case ConstantValue::Kind::String: plan.values.push_back(pte::String{c.stringValue}); break;
      case ConstantValue::Kind::None: plan.values.push_back(pte::Null{}); break;
      }
      plan.outputs.push_back(int32_t(plan.values.size() - 1));
    }
    plan.chains.emplace_back();
    plan.nonConstBufferSizes = {0};
    std::string spec = "$";
    if (values.size() != 1) {
      spec = "L" + std::to_string(values.size());
      for (size_t i = 0; i < values.size(); ++i) spec += "#1";
      spec += "(";
      for (size_t i = 0; i < values.size(); ++i) spec += i ? ",$" : "$";
      spec += ")";
    }
    plan.containerMetaType = pte::ContainerMetadata{"", spec};
    out.executionPlan.push_back(std::move(plan));
  }
  return out;
}

} // namespace exir::emit
