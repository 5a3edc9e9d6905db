//===- Run/GraphInterpreter.cpp - Executing an IR program -----------------===//
//
// Walks the graph in node order. Each op node is called through the kernel of
// its out variant with the KernelCall layout the emitter would give it (schema
// order, defaults filled, return slot last), so a graph run and a .pte run
// feed kernels the same arguments. Functional ops (edge stage) get fresh owned
// outputs; out-variant ops (planned stage) write into their memory.alloc
// tensors, which live in the method's arenas at their planned offsets.
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"
#include "Emit/ConstantLayout.h"
#include "Ops/OperatorTable.h"
#include "Plan/PlanPasses.h"
#include "Run/Delegates.h"
#include "Run/Interpreter.h"
#include "Run/Kernel.h"
#include "Run/TensorData.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace exir::run {

Executable::~Executable() = default;

std::string defaultMethod(const Executable &exe) {
  std::vector<std::string> names = exe.methods();
  if (std::find(names.begin(), names.end(), "forward") != names.end()) return "forward";
  if (names.size() == 1) return names[0];
  std::string list;
  for (const auto &n : names) list += (list.empty() ? "" : ", ") + n;
  throw Error("the program has several methods (" + list + "); choose one with --method");
}

namespace {

using ValuePtr = std::shared_ptr<Value>;

std::string dataRefBytes(const DataRef &ref, const std::string &baseDirectory) {
  if (ref.inlineBytes) return *ref.inlineBytes;
  std::string path = ref.file;
  if (!path.empty() && path[0] != '/' && !std::filesystem::exists(path)) path = baseDirectory + "/" + path;
  return readFileRange(path, ref.offset, ref.length, ref.crc32);
}

/// Dim order from strides: dims by descending stride, ties in dim order.
std::vector<uint8_t> dimOrderOfStrides(const std::vector<int64_t> &strides, size_t rank) {
  std::vector<uint8_t> order(rank);
  for (size_t i = 0; i < rank; ++i) order[i] = uint8_t(i);
  if (strides.size() == rank)
    std::stable_sort(order.begin(), order.end(), [&](uint8_t a, uint8_t b) { return strides[a] > strides[b]; });
  return order;
}

// A constant as the .pte holds it: in the dim order the emitter keeps
// (contiguous or channels-last), gathered densely from its view of the storage
// (tied, offset, strided and broadcast views alike), as emit::denseConstantBytes lays it out.
Tensor constantTensor(const Program &program, const std::string &target) {
  const ConstantTensor *c = program.constants.find(target);
  if (!c) throw Error("no constant data for '" + target + "'");
  Tensor t = Tensor::make(c->dtype, c->sizes);
  t.dimOrder = emit::emittedDimOrder(dimOrderOfStrides(c->strides, c->sizes.size()));
  ConstantTensor resolved = *c;
  if (!resolved.data.inlineBytes && !resolved.data.file.empty() && resolved.data.file[0] != '/' &&
      !std::filesystem::exists(resolved.data.file))
    resolved.data.file = program.baseDirectory + "/" + resolved.data.file;
  std::string bytes = emit::denseConstantBytes(resolved, t.dimOrder, "constant '" + target + "'").bytes();
  if (bytes.size() != t.nbytes())
    throw Error("constant '" + target + "' has " + std::to_string(bytes.size()) + " bytes; its shape needs " +
                std::to_string(t.nbytes()));
  if (t.nbytes()) std::memcpy(t.data, bytes.data(), t.nbytes());
  return t;
}

/// executorch_prim kernel of a Python sym op (_operator.add, math.ceil, torch.sym_max, ...).
std::string primKernelOf(const OpTarget &t) {
  static const char *names[] = {"add", "sub", "mul", "floordiv", "truediv", "mod", "eq", "ne", "gt", "lt", "ge",
                                "le", "neg", "ceil", "round", "trunc", "sym_float", "sym_max", "sym_min"};
  for (const char *n : names)
    if (t.name == n) return std::string("executorch_prim::") + n + ".Scalar";
  throw Error("symbolic op " + t.ns + "." + t.name + " has no executorch_prim kernel");
}

bool scalarTruth(const Value &v, const std::string &what) {
  if (v.isBool()) return v.toBool();
  if (v.isInt()) return v.toInt() != 0;
  if (v.isTensor()) {
    const Tensor &t = v.toTensor();
    if (t.numel() != 1) throw Error(what + " must be a one-element tensor, got " + std::to_string(t.numel()) + " elements");
    return toDoubles(t)[0] != 0;
  }
  throw Error(what + " must be a bool or a one-element tensor, got " + v.kindName());
}

/// Executes one graph (a method's, a cond branch's or a delegate's original).
class GraphRun {
public:
  GraphRun(const Program &program, const ExportedProgram &ep, const Graph &graph, const MemoryPlan *plan,
           const RunOptions &options, RunResult *record, std::string where)
      : program_(program), ep_(ep), graph_(graph), plan_(plan), options_(options), record_(record),
        where_(std::move(where)) {
    if (plan_) {
      // Inputs and outputs, and the allocs whose storage an output is.
      auto aliases = plan::storageAliases(graph_);
      for (const auto *list : {&graph_.inputs, &graph_.outputs})
        for (const auto &a : *list) {
          std::vector<std::string> names;
          a.collectTensorNames(names);
          for (const auto &n : names) {
            boundary_.insert(n);
            boundary_.insert(plan::storageRoot(aliases, n));
          }
        }
      arenas_.resize(plan_->bufferSizes.size());
      for (size_t k = 1; k < plan_->bufferSizes.size(); ++k)
        arenas_[k] = std::make_shared<std::vector<uint8_t>>(plan_->bufferSizes[k], options_.poison);
    }
  }

  /// Binds graph inputs: user inputs from `userInputs` (in order), the rest from
  /// the signature (constants, buffers). With `positional`, every graph input is
  /// taken from `userInputs` (cond branches).
  void bindInputs(const std::vector<Value> &userInputs, bool positional) {
    size_t next = 0;
    for (size_t i = 0; i < graph_.inputs.size(); ++i) {
      const Argument &arg = graph_.inputs[i];
      const InputSpec *spec = !positional && i < ep_.signature.inputSpecs.size() ? &ep_.signature.inputSpecs[i] : nullptr;
      bool user = !spec || spec->kind == InputKind::UserInput;
      if (user) {
        if (next >= userInputs.size())
          throw Error("the method takes more than the " + std::to_string(userInputs.size()) + " inputs given");
        bindUserInput(arg, userInputs[next++], i);
        continue;
      }
      if (arg.kind != ArgKind::Tensor) {
        if (spec->kind == InputKind::ConstantInput) define(arg, constantInputValue(spec->constant.get()));
        continue;
      }
      if (spec->kind == InputKind::Parameter || spec->kind == InputKind::Buffer ||
          spec->kind == InputKind::TensorConstant) {
        if (plan_ && plan_->allocations.contains(arg.name)) {
          // A mutable buffer is planned memory. As in the .pte (no mutable data
          // segment is emitted) and upstream without et_init_buffer, it starts
          // with whatever the arena holds: the poison, not the initial value.
          allocTensor(arg.name);
        } else {
          env_[arg.name] = std::make_shared<Value>(Value::of(constantTensor(program_, spec->target)));
        }
        continue;
      }
      env_[arg.name] = std::make_shared<Value>(); // tokens, custom objects: None
    }
    if (next != userInputs.size())
      throw Error("the method takes " + std::to_string(next) + " inputs, " + std::to_string(userInputs.size()) +
                  " were given");
  }

  void runNodes() {
    for (size_t i = 0; i < graph_.nodes.size(); ++i) {
      const Node &node = graph_.nodes[i];
      try {
        runNode(node);
      } catch (Error &e) {
        e.withLocation(where_ + "/nodes/" + std::to_string(i) + " (" + node.displayName() + ")");
        throw;
      }
    }
  }

  /// Outputs; with `userOnly`, mutations are left out (a method's user outputs).
  std::vector<Value> outputs(bool userOnly) {
    std::vector<Value> out;
    for (size_t i = 0; i < graph_.outputs.size(); ++i) {
      if (userOnly && i < ep_.signature.outputSpecs.size() && ep_.signature.outputSpecs[i].kind != OutputKind::UserOutput)
        continue;
      const Argument &o = graph_.outputs[i];
      switch (o.kind) {
      case ArgKind::Tensor: out.push_back(Value::of(contiguousCopy(lookup(o.name)->toTensor()))); break;
      case ArgKind::Tensors:
        for (const auto &n : o.names) out.push_back(Value::of(contiguousCopy(lookup(n)->toTensor())));
        break;
      case ArgKind::Int: out.push_back(Value::of(o.intValue)); break;
      case ArgKind::Float: out.push_back(Value::of(o.floatValue)); break;
      case ArgKind::Bool: out.push_back(Value::of(o.intValue != 0)); break;
      case ArgKind::None: out.push_back(Value::none()); break;
      case ArgKind::SymInt: case ArgKind::SymFloat: case ArgKind::SymBool:
        out.push_back(symValue(o.syms.at(0), o.kind));
        break;
      default: throw Error(std::string("output of kind ") + argKindTag(o.kind) + " cannot be returned");
      }
    }
    return out;
  }

private:
  static Value constantInputValue(const ConstantValue &c) {
    switch (c.kind) {
    case ConstantValue::Kind::Int: return Value::of(c.intValue);
    case ConstantValue::Kind::Float: return Value::of(c.floatValue);
    case ConstantValue::Kind::Bool: return Value::of(c.intValue != 0);
    case ConstantValue::Kind::String: { Value v; v.v = c.stringValue; return v; }
    default: return Value::none();
    }
  }

  void define(const Argument &arg, Value v) {
    if (arg.kind == ArgKind::Tensor) env_[arg.name] = std::make_shared<Value>(std::move(v));
    else if (!arg.syms.empty() && arg.syms[0].isName) env_[arg.syms[0].name] = std::make_shared<Value>(std::move(v));
    else if (!arg.name.empty()) env_[arg.name] = std::make_shared<Value>(std::move(v));
  }

  void bindUserInput(const Argument &arg, const Value &given, size_t index) {
    if (arg.kind != ArgKind::Tensor) {
      if (given.isTensor()) throw Error("input " + std::to_string(index) + " takes a scalar, got a tensor");
      define(arg, given);
      return;
    }
    if (!given.isTensor()) throw Error("input '" + arg.name + "' takes a tensor, got " + given.kindName());
    const Tensor &in = given.toTensor();
    const TensorMeta *meta = graph_.tensorValues.find(arg.name);
    if (meta) {
      if (in.dtype != meta->dtype)
        throw Error("input '" + arg.name + "' has dtype " + shortName(in.dtype) + "; the method takes " +
                    shortName(meta->dtype));
      if (in.sizes.size() != meta->sizes.size())
        throw Error("input '" + arg.name + "' has rank " + std::to_string(in.sizes.size()) + "; the method takes rank " +
                    std::to_string(meta->sizes.size()));
      for (size_t d = 0; d < in.sizes.size(); ++d) {
        const SymInt &s = meta->sizes[d];
        std::optional<int64_t> bound = upperBoundOf(s);
        if ((!s.isExpr && in.sizes[d] != s.value) || (s.isExpr && bound && in.sizes[d] > *bound))
          throw Error("input '" + arg.name + "' has size " + std::to_string(in.sizes[d]) + " in dim " + std::to_string(d) +
                      (s.isExpr ? "; the upper bound is " : "; the method takes ") + std::to_string(*bound));
        if (s.isExpr && isIdentifier(s.expr())) env_[s.expr()] = std::make_shared<Value>(Value::of(in.sizes[d]));
      }
    }
    if (plan_ && plan_->allocations.contains(arg.name)) {
      ValuePtr v = allocTensor(arg.name);
      copyTensorInto(v->toTensor(), in, "input '" + arg.name + "'");
      env_[arg.name] = v;
    } else {
      // Unplanned: the runtime would alias the caller's tensor; we keep a copy
      // in the input's dim order, growable as any unplanned value.
      Tensor copy = Tensor::make(in.dtype, in.sizes);
      if (meta && meta->sizes.size() == in.sizes.size()) {
        std::vector<int64_t> order = meta->dimOrder();
        copy.dimOrder.assign(order.begin(), order.end());
      }
      copyTensorInto(copy, in, "input '" + arg.name + "'");
      copy.growable = true;
      env_[arg.name] = std::make_shared<Value>(Value::of(std::move(copy)));
    }
  }

  static bool isIdentifier(const std::string &s) {
    if (s.empty() || !(std::isalpha(uint8_t(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(uint8_t(c)) || c == '_'; });
  }

  std::optional<int64_t> upperBoundOf(const SymInt &s) const {
    if (!s.isExpr) return s.value;
    try {
      return plan::upperBound(s, ep_);
    } catch (const Error &) {
      return std::nullopt;
    }
  }
  /// Sizes to allocate: unbounded dims start at 0 (the kernel resizes an owned tensor).
  int64_t bound_(const SymInt &s) const { return upperBoundOf(s).value_or(0); }

  ValuePtr lookup(const std::string &name) const {
    auto it = env_.find(name);
    if (it == env_.end()) throw Error("value '" + name + "' is used before it is defined");
    return it->second;
  }

  Value symValue(const SymArg &s, ArgKind kind) const {
    if (s.isName) return *lookup(s.name);
    if (kind == ArgKind::SymFloat || kind == ArgKind::SymFloats) return Value::of(s.floatValue);
    if (kind == ArgKind::SymBool || kind == ArgKind::SymBools) return Value::of(s.intValue != 0);
    return Value::of(s.intValue);
  }

  /// A tensor for value `name`: at its planned place in an arena, else owned.
  ValuePtr allocTensor(const std::string &name) {
    const TensorMeta *meta = graph_.tensorValues.find(name);
    if (!meta) throw Error("tensor '" + name + "' has no metadata");
    std::vector<int64_t> sizes;
    for (const auto &s : meta->sizes) sizes.push_back(bound_(s));
    std::vector<int64_t> order = meta->dimOrder();
    const Allocation *a = plan_ ? plan_->allocations.find(name) : nullptr;
    Tensor t;
    if (a) {
      t.dtype = meta->dtype;
      t.sizes = sizes;
      size_t bytes = size_t(t.numel()) * elementSize(t.dtype);
      if (a->memId == 0 || a->memId >= arenas_.size())
        throw Error("tensor '" + name + "' is planned in arena " + std::to_string(a->memId) + ", but the plan has " +
                    std::to_string(arenas_.empty() ? 0 : arenas_.size() - 1) + " arenas");
      auto &arena = *arenas_[a->memId];
      if (a->offset + bytes > arena.size())
        throw Error("tensor '" + name + "' (" + std::to_string(bytes) + " bytes at offset " + std::to_string(a->offset) +
                    ") does not fit in arena " + std::to_string(a->memId) + " of " + std::to_string(arena.size()) +
                    " bytes");
      t.data = arena.data() + a->offset;
      t.capacity = bytes;
      t.growable = false;
    } else {
      // In a planned program only inputs and outputs may be unplanned (the
      // caller provides them); the runtime gives any other tensor no memory.
      if (plan_ && !boundary_.count(name))
        throw Error("tensor '" + name + "' has no placement in the memory plan");
      t = Tensor::make(meta->dtype, sizes);
      t.growable = true;
    }
    t.dimOrder.assign(order.begin(), order.end());
    if (t.dimOrder.size() != t.sizes.size()) t.dimOrder.resize(t.sizes.size());
    auto v = std::make_shared<Value>(Value::of(std::move(t)));
    env_[name] = v;
    return v;
  }

  ValuePtr emptyByteTensor() {
    Tensor t = Tensor::make(ScalarType::Byte, {0});
    return std::make_shared<Value>(Value::of(std::move(t)));
  }

  /// An IR argument as the runtime value the emitter would make of it.
  ValuePtr toValue(const Argument &a, const SchemaArgument *param) {
    auto make = [](Value v) { return std::make_shared<Value>(std::move(v)); };
    switch (a.kind) {
    case ArgKind::Tensor: return lookup(a.name);
    case ArgKind::OptionalTensor:
      if (!a.name.empty()) return lookup(a.name);
      [[fallthrough]];
    case ArgKind::None:
      if (param && param->type.isTensor() && !param->type.optional) return emptyByteTensor();
      return make(Value::none());
    case ArgKind::Int: return make(Value::of(a.intValue));
    case ArgKind::Float: return make(Value::of(a.floatValue));
    case ArgKind::Bool: return make(Value::of(a.intValue != 0));
    case ArgKind::String: { Value v; v.v = a.name; return make(std::move(v)); }
    case ArgKind::ScalarType: return make(Value::of(a.intValue));
    case ArgKind::Layout: return make(Value::of(int64_t(a.intValue == kLayoutStrided ? 0 : 1)));
    case ArgKind::MemoryFormat:
      if (a.intValue == kMemoryFormatContiguous) return make(Value::of(int64_t(0)));
      if (a.intValue == kMemoryFormatPreserve) return make(Value::of(int64_t(1)));
      throw Error("memory_format " + std::to_string(a.intValue) + " is not supported (only contiguous and preserve)");
    case ArgKind::Device: return make(Value::none());
    case ArgKind::Ints: { Value v; v.v = a.ints.toVector(); return make(std::move(v)); }
    case ArgKind::SymInts: {
      std::vector<int64_t> ints;
      for (const auto &s : a.syms) ints.push_back(symValue(s, ArgKind::SymInt).toInt());
      Value v;
      v.v = std::move(ints);
      return make(std::move(v));
    }
    case ArgKind::SymInt: case ArgKind::SymFloat: case ArgKind::SymBool:
      if (a.syms.empty()) throw Error("symbolic argument without a value");
      if (a.syms[0].isName) return lookup(a.syms[0].name);
      return make(symValue(a.syms[0], a.kind));
    case ArgKind::Floats: { Value v; v.v = a.floats(); return make(std::move(v)); }
    case ArgKind::Bools: {
      std::vector<bool> bools;
      for (int64_t b : a.ints) bools.push_back(b != 0);
      Value v;
      v.v = std::move(bools);
      return make(std::move(v));
    }
    case ArgKind::Tensors: {
      Value::TensorList list;
      for (const auto &n : a.names) list.push_back(&lookup(n)->toTensor());
      Value v;
      v.v = std::move(list);
      return make(std::move(v));
    }
    case ArgKind::OptionalTensors: {
      Value::OptionalTensorList list;
      for (const auto &n : a.names) list.push_back(n.empty() ? nullptr : &lookup(n)->toTensor());
      Value v;
      v.v = std::make_pair(std::move(list), 0);
      return make(std::move(v));
    }
    default:
      throw Error(std::string("argument") + (param ? " '" + param->name + "'" : "") + " of kind " + argKindTag(a.kind) +
                  " cannot be run");
    }
  }

  void recordOutputs(const Node &node) {
    if (!record_ || !options_.recordIntermediates) return;
    std::vector<std::string> names;
    for (const auto &o : node.outputs) o.collectTensorNames(names);
    for (const auto &n : names) {
      auto it = env_.find(n);
      if (it != env_.end() && it->second->isTensor())
        record_->intermediates.emplace_back(n, contiguousCopy(it->second->toTensor()));
    }
  }

  void runNode(const Node &node) {
    OpTarget t = parseTarget(node.target);
    switch (t.dialect) {
    case TargetDialect::MemoryAlloc:
      allocTensor(node.outputs.at(0).name);
      return;
    case TargetDialect::MemoryView: return runView(node);
    case TargetDialect::MemoryFree: return;
    case TargetDialect::HigherOrder:
      if (t.name == "executorch_call_delegate") return runDelegate(node);
      if (t.name == "cond") return runCond(node);
      throw Error("higher-order op " + node.target + " cannot be run");
    case TargetDialect::SymOp: return runSymOp(node, t);
    case TargetDialect::Aten: case TargetDialect::Edge: case TargetDialect::Backend: return runOp(node, t);
    default: throw Error("node target " + node.target + " cannot be run");
    }
  }

  void runView(const Node &node) {
    const std::string &name = node.outputs.at(0).name;
    ValuePtr base = lookup(node.inputs.at(0).arg.name);
    const TensorMeta *meta = graph_.tensorValues.find(name);
    if (!meta) throw Error("tensor '" + name + "' has no metadata");
    Tensor view = base->toTensor(); // shares the base's bytes (and ownership)
    view.sizes.clear();
    for (const auto &s : meta->sizes) view.sizes.push_back(bound_(s));
    std::vector<int64_t> order = meta->dimOrder();
    view.dimOrder.assign(order.begin(), order.end());
    if (view.nbytes() > base->toTensor().capacity)
      throw Error("view '" + name + "' needs " + std::to_string(view.nbytes()) + " bytes; its base has " +
                  std::to_string(base->toTensor().capacity));
    view.capacity = view.nbytes();
    view.growable = false;
    env_[name] = std::make_shared<Value>(Value::of(std::move(view)));
    recordOutputs(node);
  }

  void runOp(const Node &node, const OpTarget &t) {
    const OperatorTable &table = OperatorTable::builtin();
    const OpSchema *schema = table.lookup(t.qualifiedName());
    if (!schema) throw Error("operator " + t.qualifiedName() + " is unknown to the operator table");
    bool tensorResult = schema->numTensorReturns() > 0;
    const OpSchema *callee = schema;
    if (tensorResult && !schema->isOutVariant() && !schema->isInplace()) {
      callee = table.outVariant(*schema);
      if (!callee) throw Error("operator " + schema->qualifiedName() + " has no out variant to run");
    }
    std::string kernelName = callee->qualifiedName();
    const KernelFn *fn = KernelRegistry::global().find(kernelName);
    if (!fn) throw Error("exir-run has no kernel for " + kernelName);

    std::vector<std::string> results;
    for (const auto &o : node.outputs) {
      if (o.kind == ArgKind::Tensor) results.push_back(o.name);
      else if (o.kind == ArgKind::None) results.push_back("");
      else if (o.kind == ArgKind::Tensors) results.insert(results.end(), o.names.begin(), o.names.end());
    }
    std::vector<ValuePtr> holders, outs;
    ValuePtr listOut; // the Tensor[] out argument, whose elements are already bound by name
    size_t resultIndex = 0;
    for (const auto &param : callee->arguments) {
      const NamedArgument *given = node.input(param.name);
      if (param.isOut && param.type.isList) {
        // A Tensor[] out (split_copy, unbind_copy): every remaining result.
        Value::TensorList list;
        if (given && given->arg.kind == ArgKind::Tensors) {
          for (const auto &n : given->arg.names) list.push_back(&lookup(n)->toTensor());
        } else {
          for (; resultIndex < results.size(); ++resultIndex)
            list.push_back(&allocTensor(results[resultIndex])->toTensor());
        }
        auto v = std::make_shared<Value>();
        v->v = std::move(list);
        listOut = v;
        holders.push_back(v);
        continue;
      }
      if (param.isOut) {
        ValuePtr v;
        if (given && given->arg.kind == ArgKind::Tensor) {
          v = lookup(given->arg.name);
        } else {
          if (resultIndex >= results.size())
            throw Error("operator " + schema->qualifiedName() + " has fewer results than " + kernelName + " has out arguments");
          const std::string &name = results[resultIndex];
          v = name.empty() ? emptyByteTensor() : allocTensor(name);
        }
        ++resultIndex;
        outs.push_back(v);
        holders.push_back(v);
        continue;
      }
      if (given) {
        holders.push_back(toValue(given->arg, &param));
      } else {
        if (!param.defaultValue)
          throw Error("argument '" + param.name + "' of " + callee->qualifiedName() + " is missing and has no default");
        holders.push_back(toValue(defaultToArgument(param), &param));
      }
    }
    ValuePtr ret;
    if (listOut) ret = listOut;
    else if (callee->isInplace() && !holders.empty()) ret = holders[0];
    else if (outs.size() == 1) ret = outs[0];
    else if (outs.size() > 1) {
      Value::TensorList list;
      for (const auto &o : outs) list.push_back(&o->toTensor());
      ret = std::make_shared<Value>();
      ret->v = std::move(list);
    } else {
      ret = std::make_shared<Value>(Value::of(int64_t(0))); // the placeholder the kernel overwrites
    }
    holders.push_back(ret);
    std::vector<Value *> args;
    for (const auto &h : holders) args.push_back(h.get());
    (*fn)(std::span<Value *>(args));

    if (listOut) {
      // Results were bound to their tensors when the list was made.
    } else if (callee->isInplace()) {
      for (const auto &o : node.outputs)
        if (o.kind == ArgKind::Tensor) env_[o.name] = holders[0];
    } else if (!outs.empty()) {
      for (size_t k = 0; k < results.size() && k < outs.size(); ++k)
        if (!results[k].empty()) env_[results[k]] = outs[k];
    } else {
      for (const auto &o : node.outputs) {
        if ((o.kind == ArgKind::SymInt || o.kind == ArgKind::SymFloat || o.kind == ArgKind::SymBool) && !o.syms.empty())
          env_[o.syms[0].name] = ret;
        else if (o.kind == ArgKind::Tensor)
          env_[o.name] = ret;
      }
    }
    recordOutputs(node);
  }

  void runSymOp(const Node &node, const OpTarget &t) {
    if (t.name == "getitem")
      throw Error("a standalone getitem: serialized graphs give a multi-output node its results directly "
                  "(the serializer folds getitem away), and exir-run reads only that form");
    std::string kernelName = primKernelOf(t);
    const KernelFn *fn = KernelRegistry::global().find(kernelName);
    if (!fn) throw Error("exir-run has no kernel for " + kernelName);
    std::vector<ValuePtr> holders;
    for (const auto &in : node.inputs) holders.push_back(toValue(in.arg, nullptr));
    ValuePtr ret = std::make_shared<Value>(Value::of(int64_t(0)));
    holders.push_back(ret);
    std::vector<Value *> args;
    for (const auto &h : holders) args.push_back(h.get());
    (*fn)(std::span<Value *>(args));
    for (const auto &o : node.outputs)
      if (!o.syms.empty() && o.syms[0].isName) env_[o.syms[0].name] = ret;
  }

  void runDelegate(const Node &node) {
    if (node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::String)
      throw Error("executorch_call_delegate's first argument must name the lowered module");
    const std::string &moduleName = node.inputs[0].arg.name;
    const Delegate *d = program_.delegates.find(moduleName);
    if (!d) throw Error("delegate '" + moduleName + "' is not in the program's delegates table");
    std::vector<ValuePtr> holders;
    std::vector<Value> inputs;
    for (size_t i = 1; i < node.inputs.size(); ++i) {
      holders.push_back(toValue(node.inputs[i].arg, nullptr));
      inputs.push_back(*holders.back());
    }
    size_t numInputs = holders.size();
    std::vector<std::string> names;
    for (const auto &o : node.outputs) o.collectTensorNames(names);
    for (const auto &n : names) holders.push_back(allocTensor(n));
    // The demo backend runs its blob (its numbers differ from the subgraph's);
    // any other backend runs the original subgraph, which has its constants,
    // and only without one its blob.
    bool blobFirst = d->backendId == "BackendWithCompilerDemo";
    if (isKnownBackend(d->backendId) && (blobFirst || !d->original)) {
      std::vector<Value *> args;
      for (const auto &h : holders) args.push_back(h.get());
      runBackendBlob(d->backendId, dataRefBytes(d->processed, program_.baseDirectory), d->compileSpecs,
                     std::span<Value *>(args), options_);
    } else if (d->original) {
      std::vector<Value> results = runExportedProgram(program_, *d->original, inputs, options_,
                                                      "/delegates/" + moduleName + "/original_module/graph_module/graph");
      if (results.size() != names.size())
        throw Error("delegate '" + moduleName + "' original subgraph returns " + std::to_string(results.size()) +
                    " values; the call takes " + std::to_string(names.size()));
      for (size_t k = 0; k < names.size(); ++k)
        copyTensorInto(holders[numInputs + k]->toTensor(), results[k].toTensor(), "delegate output '" + names[k] + "'");
    } else {
      throw Error("delegate '" + moduleName + "' uses backend '" + d->backendId +
                  "', which exir-run cannot execute, and the artifact does not keep its original subgraph");
    }
    recordOutputs(node);
  }

  void runCond(const Node &node) {
    if (node.inputs.size() < 4 || node.inputs[1].arg.kind != ArgKind::Graph || node.inputs[2].arg.kind != ArgKind::Graph)
      throw Error("cond takes (pred, true_graph, false_graph, operands)");
    bool pred = scalarTruth(*toValue(node.inputs[0].arg, nullptr), "cond's predicate");
    const Argument &branch = node.inputs[pred ? 1 : 2].arg;
    if (!branch.graph()) throw Error("cond branch '" + branch.graphName() + "' has no graph");
    std::vector<Value> operands;
    const Argument &ops = node.inputs[3].arg;
    if (ops.kind == ArgKind::Tensors) {
      for (const auto &n : ops.names) operands.push_back(*lookup(n));
    } else {
      operands.push_back(*toValue(ops, nullptr));
    }
    GraphRun sub(program_, ep_, *branch.graph(), nullptr, options_, nullptr,
                 where_ + "/" + (branch.graphName().empty() ? std::string(pred ? "true_graph" : "false_graph") : branch.graphName()));
    sub.bindInputs(operands, true);
    sub.runNodes();
    std::vector<Value> results = sub.outputs(false);
    std::vector<std::string> names;
    for (const auto &o : node.outputs) o.collectTensorNames(names);
    if (results.size() != names.size())
      throw Error("cond branch returns " + std::to_string(results.size()) + " values; the node defines " +
                  std::to_string(names.size()));
    for (size_t k = 0; k < names.size(); ++k) {
      if (plan_ && plan_->allocations.contains(names[k])) {
        ValuePtr v = allocTensor(names[k]);
        copyTensorInto(v->toTensor(), results[k].toTensor(), "cond output '" + names[k] + "'");
      } else {
        env_[names[k]] = std::make_shared<Value>(results[k]);
      }
    }
    recordOutputs(node);
  }

  const Program &program_;
  const ExportedProgram &ep_;
  const Graph &graph_;
  const MemoryPlan *plan_;
  const RunOptions &options_;
  RunResult *record_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> arenas_; // [mem_id]
  std::unordered_map<std::string, ValuePtr> env_;
  std::unordered_set<std::string> boundary_; // planned programs: graph inputs and outputs
  std::string where_;                          // JSON pointer of the graph, for errors
};

class GraphExecutable final : public Executable {
public:
  explicit GraphExecutable(Program program) : program_(std::move(program)) {
    if (program_.stage == Stage::Aten) edge::toEdge(program_, edge::EdgeOptions{});
  }

  std::string kind() const override { return std::string(stageName(program_.stage)) + " program"; }

  std::vector<std::string> methods() const override {
    std::vector<std::string> names;
    for (const auto &[name, m] : program_.methods) names.push_back(name);
    return names;
  }

  std::vector<InputInfo> inputs(const std::string &methodName) const override {
    const ExportedProgram &ep = method(methodName).program;
    std::vector<InputInfo> infos;
    for (size_t i = 0; i < ep.graph.inputs.size(); ++i) {
      if (i < ep.signature.inputSpecs.size() && ep.signature.inputSpecs[i].kind != InputKind::UserInput) continue;
      const Argument &arg = ep.graph.inputs[i];
      InputInfo info;
      if (arg.kind == ArgKind::Tensor) {
        info.name = arg.name;
        const TensorMeta *meta = ep.graph.tensorValues.find(arg.name);
        if (!meta) throw Error("input '" + arg.name + "' has no metadata");
        info.dtype = meta->dtype;
        for (const auto &s : meta->sizes) {
          info.dynamic |= s.isExpr;
          int64_t size = s.value;
          if (s.isExpr) {
            // Unbounded symbols: the traced hint, else 1 (the caller may give --sizes).
            try {
              size = plan::upperBound(s, ep);
            } catch (const Error &) {
              size = s.hint().value_or(1);
            }
          }
          info.sizes.push_back(size);
        }
        for (int64_t d : meta->dimOrder()) info.dimOrder.push_back(uint8_t(d));
      } else {
        info.isTensor = false;
        info.name = !arg.syms.empty() && arg.syms[0].isName ? arg.syms[0].name : "input" + std::to_string(infos.size());
        if (arg.kind == ArgKind::SymFloat || arg.kind == ArgKind::Float) info.scalar = Value::of(0.0);
        else if (arg.kind == ArgKind::SymBool || arg.kind == ArgKind::Bool) info.scalar = Value::of(false);
        else info.scalar = Value::of(int64_t(0));
      }
      infos.push_back(std::move(info));
    }
    return infos;
  }

  RunResult run(const std::string &methodName, const std::vector<Value> &inputs, const RunOptions &options) override {
    const Method &m = method(methodName);
    RunResult result;
    GraphRun run(program_, m.program, m.program.graph, m.plan ? &*m.plan : nullptr, options, &result,
                 "/methods/" + methodName + "/graph_module/graph");
    run.bindInputs(inputs, false);
    run.runNodes();
    result.outputs = run.outputs(true);
    return result;
  }

private:
  const Method &method(const std::string &name) const {
    const Method *m = program_.methods.find(name);
    if (!m) throw Error("the program has no method '" + name + "'");
    return *m;
  }

  Program program_;
};

} // namespace

std::vector<Value> runExportedProgram(const Program &owner, const ExportedProgram &ep,
                                      const std::vector<Value> &userInputs, const RunOptions &options,
                                      const std::string &where) {
  GraphRun run(owner, ep, ep.graph, nullptr, options, nullptr, where);
  run.bindInputs(userInputs, false);
  run.runNodes();
  return run.outputs(true);
}

std::unique_ptr<Executable> makeGraphExecutable(Program program) {
  return std::make_unique<GraphExecutable>(std::move(program));
}

} // namespace exir::run
