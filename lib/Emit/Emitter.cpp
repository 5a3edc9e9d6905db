//===- Emit/Emitter.cpp - planned program -> pte::Program -----------------===//
#include "Emit/Emitter.h"
#include "Ops/OperatorTable.h"
#include "Plan/PlanPasses.h"
#include "Support/Error.h"
#include "Support/Hash.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace exir::emit {

namespace {

/// Program-wide constant list shared by all methods, deduplicated by SHA-256.
/// A constant is hashed only when its size and first and last bytes match an
/// earlier one's: hashing every constant read all weights twice (once here,
/// once to copy them), a quarter of exir-emit's time on GBs of weights.
class ConstantPool {
public:
  explicit ConstantPool(pte::Program &out) : out_(out) { out_.constants.push_back(pte::BlobSource()); }

  uint32_t add(const ConstantTensor &c, const std::string &name) {
    pte::BlobSource blob;
    if (c.data.inlineBytes) blob = pte::BlobSource::fromBytes(*c.data.inlineBytes);
    else if (!c.data.file.empty()) blob = pte::BlobSource::fromFile(c.data.file, c.data.offset, c.data.length);
    else throw Error("constant '" + name + "' has no data reference", {}, "/constants/" + name);
    std::vector<uint32_t> &sameProbe = byProbe_[probeOf(blob)];
    std::string digest = c.data.sha256;
    if (!sameProbe.empty()) {
      if (digest.empty()) digest = blob.sha256Hex();
      for (uint32_t index : sameProbe)
        if (digestOf(index) == digest) return index;
    }
    uint32_t index = uint32_t(out_.constants.size());
    out_.constants.push_back(std::move(blob));
    if (!digest.empty()) digests_[index] = std::move(digest);
    sameProbe.push_back(index);
    return index;
  }

private:
  static constexpr uint64_t kProbeBytes = 4096;

  /// Size and a hash of the first and last kProbeBytes (all bytes of a small
  /// constant); equal bytes give equal probes, a collision only costs a SHA-256.
  static std::pair<uint64_t, size_t> probeOf(const pte::BlobSource &blob) {
    auto range = [&](uint64_t offset, uint64_t length) {
      if (!blob.isFile()) return std::string(blob.view().substr(offset, length));
      return pte::BlobSource::fromFile(blob.path(), blob.offset() + offset, length).bytes();
    };
    std::string bytes = blob.size() <= 2 * kProbeBytes
                            ? range(0, blob.size())
                            : range(0, kProbeBytes) + range(blob.size() - kProbeBytes, kProbeBytes);
    return {blob.size(), std::hash<std::string>()(bytes)};
  }

  struct ProbeHash {
    size_t operator()(const std::pair<uint64_t, size_t> &p) const { return p.second ^ (p.first * 0x9e3779b97f4a7c15ULL); }
  };

  const std::string &digestOf(uint32_t index) {
    auto it = digests_.find(index);
    if (it == digests_.end()) it = digests_.emplace(index, out_.constants[index].sha256Hex()).first;
    return it->second;
  }

  pte::Program &out_;
  std::unordered_map<std::pair<uint64_t, size_t>, std::vector<uint32_t>, ProbeHash> byProbe_;
  std::unordered_map<uint32_t, std::string> digests_;
};

std::string jsonTreespecToCompact(const nlohmann::json &node, size_t &leaves) {
  if (node.is_null() || !node.is_object() || node.value("type", nlohmann::json()).is_null()) {
    leaves = 1;
    return "$";
  }
  std::string type = node["type"].get<std::string>();
  const auto &children = node["children_spec"];
  std::vector<std::string> parts;
  std::vector<size_t> counts;
  for (const auto &child : children) {
    size_t n = 0;
    parts.push_back(jsonTreespecToCompact(child, n));
    counts.push_back(n);
  }
  std::string kind;
  std::vector<std::string> keys;
  if (type == "builtins.tuple") kind = "T";
  else if (type == "builtins.list") kind = "L";
  else if (type == "builtins.dict" || type == "collections.OrderedDict") {
    kind = "D";
    auto context = nlohmann::json::parse(node.value("context", std::string("[]")));
    for (const auto &k : context) keys.push_back(k.is_string() ? "'" + k.get<std::string>() + "'" : k.dump());
  } else if (type == "collections.namedtuple") kind = "N";
  else kind = "C(" + type + ")";
  std::string out = kind + std::to_string(parts.size());
  leaves = 0;
  for (size_t c : counts) {
    out += "#" + std::to_string(c);
    leaves += c;
  }
  out += "(";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += ",";
    if (kind == "D" && i < keys.size()) out += keys[i] + ":";
    out += parts[i];
  }
  return out + ")";
}

class MethodEmitter {
public:
  MethodEmitter(const Program &program, const std::string &name, const Method &method, ConstantPool &constants)
      : program_(program), name_(name), method_(method), ep_(method.program), graph_(method.program.graph),
        constants_(constants), aliases_(plan::storageAliases(graph_)) {}

  pte::ExecutionPlan emit() {
    plan_.name = name_;
    plan_.chains.emplace_back();
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
    const TensorMeta *meta = graph_.tensorValues.find(valueName);
    if (!meta) throw Error("tensor '" + valueName + "' has no metadata");
    pte::Tensor t;
    t.scalarType = meta->dtype;
    bool dynamic = false;
    for (const auto &s : meta->sizes) {
      if (s.isExpr) dynamic = true;
      t.sizes.push_back(int32_t(plan::upperBound(s, ep_)));
    }
    for (int64_t d : meta->dimOrder()) t.dimOrder.push_back(uint8_t(d));
    t.requiresGrad = meta->requiresGrad;
    t.shapeDynamism = dynamic ? pte::TensorShapeDynamism::DynamicBound : pte::TensorShapeDynamism::Static;
    if (planned)
      if (const Allocation *a = method_.plan->allocations.find(valueName))
        t.allocationInfo = pte::AllocationDetails::at(a->memId, a->offset);
    return t;
  }

  void emitPlaceholders() {
    for (size_t i = 0; i < ep_.signature.inputSpecs.size(); ++i) {
      const InputSpec &spec = ep_.signature.inputSpecs[i];
      const Argument &arg = graph_.inputs.at(i);
      if (arg.kind != ArgKind::Tensor) {
        // Non-tensor user input (e.g. a float): a scalar value the caller sets.
        int32_t id = push(arg.kind == ArgKind::SymFloat ? pte::EValue(pte::Double{0}) : pte::EValue(pte::Int{0}));
        if (arg.kind == ArgKind::SymInt && !arg.syms.empty()) ids_[arg.syms[0].name] = id;
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
        t.dataBufferIdx = constants_.add(*c, spec.target);
      }
      int32_t id = push(std::move(t));
      ids_[arg.name] = id;
      if (spec.kind == InputKind::UserInput) plan_.inputs.push_back(id);
    }
  }

  int32_t operatorIndex(const std::string &name, const std::string &overload) {
    for (size_t i = 0; i < plan_.operators.size(); ++i)
      if (plan_.operators[i].name == name && plan_.operators[i].overload == overload) return int32_t(i);
    plan_.operators.push_back(pte::Operator{name, overload});
    return int32_t(plan_.operators.size() - 1);
  }

  int32_t valueOf(const std::string &name) {
    auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    auto alias = aliases_.find(name);
    if (alias != aliases_.end()) return valueOf(alias->second);
    throw Error("value '" + name + "' is used before the emitter has seen it");
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
      for (int64_t v : a.ints) list.items.push_back(push(pte::Int{v}));
      return push(std::move(list));
    }
    case ArgKind::SymInts: {
      pte::IntList list;
      for (const auto &s : a.syms) list.items.push_back(s.isName ? valueOf(s.name) : push(pte::Int{s.intValue}));
      return push(std::move(list));
    }
    case ArgKind::SymInt:
      if (!a.syms.empty() && a.syms[0].isName) return valueOf(a.syms[0].name);
      return push(pte::Int{a.syms.empty() ? 0 : a.syms[0].intValue});
    case ArgKind::Floats: return push(pte::DoubleList{a.floats});
    case ArgKind::Bools: {
      pte::BoolList list;
      for (int64_t v : a.ints) list.items.push_back(v != 0);
      return push(std::move(list));
    }
    case ArgKind::Tensors: {
      pte::TensorList list;
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

  void emitNode(const Node &node) {
    OpTarget t = parseTarget(node.target);
    switch (t.dialect) {
    case TargetDialect::MemoryAlloc: {
      const std::string &name = node.outputs.at(0).name;
      ids_[name] = push(tensorOf(name, true));
      return;
    }
    case TargetDialect::MemoryView: {
      // A free alias: the base's storage (planned offset or constant index), the view's shape.
      const std::string &name = node.outputs.at(0).name;
      const std::string &base = node.inputs.at(0).arg.name;
      pte::Tensor t = tensorOf(name, true);
      const auto &baseValue = std::get<pte::Tensor>(plan_.values.at(size_t(valueOf(base))));
      t.allocationInfo = baseValue.allocationInfo;
      t.dataBufferIdx = baseValue.dataBufferIdx;
      ids_[name] = push(std::move(t));
      return;
    }
    case TargetDialect::HigherOrder:
      if (t.name == "executorch_call_delegate") return emitDelegateCall(node);
      throw Error("higher-order op " + node.target + " cannot be emitted yet");
    default:
      break;
    }
    emitKernelCall(node, t);
  }

  void emitKernelCall(const Node &node, const OpTarget &t) {
    const OpSchema *schema = OperatorTable::builtin().lookup(t.qualifiedName());
    if (!schema) throw Error("operator " + t.qualifiedName() + " is unknown to the operator table");
    pte::KernelCall call;
    std::string overload = t.overload == "default" ? "" : t.overload;
    call.opIndex = operatorIndex(t.ns + "::" + t.name, overload);
    std::vector<int32_t> outIds;
    for (const auto &param : schema->arguments) {
      const NamedArgument *given = node.input(param.name);
      Argument value = given ? given->arg : Argument();
      if (!given) {
        if (!param.defaultValue)
          throw Error("argument '" + param.name + "' of " + schema->qualifiedName() + " is missing and has no default");
        value = defaultToArgument(param);
      }
      int32_t id = emitArgument(value, param);
      call.args.push_back(id);
      if (param.isOut) outIds.push_back(id);
    }
    // The return slot.
    if (schema->isInplace() && !call.args.empty()) {
      // In place (copy_): the result is the mutated first argument itself.
      call.args.push_back(call.args[0]);
      for (const auto &o : node.outputs)
        if (o.kind == ArgKind::Tensor) ids_[o.name] = call.args[0];
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
          ids_[o.syms[0].name] = ret;
        else if (o.kind == ArgKind::Tensor)
          ids_[o.name] = ret;
    }
    plan_.chains[0].instructions.push_back(std::move(call));
  }

  void emitDelegateCall(const Node &node) {
    if (node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::String)
      throw Error("executorch_call_delegate's first argument must name the lowered module");
    const std::string &moduleName = node.inputs[0].arg.name;
    const Delegate *d = program_.delegates.find(moduleName);
    if (!d) throw Error("delegate '" + moduleName + "' is not in the program's delegates table");
    pte::BackendDelegate bd;
    bd.id = d->backendId;
    if (d->processed.inlineBytes) bd.processedData = pte::BlobSource::fromBytes(*d->processed.inlineBytes);
    else bd.processedData = pte::BlobSource::fromFile(d->processed.file, d->processed.offset, d->processed.length);
    for (const auto &cs : d->compileSpecs) bd.compileSpecs.push_back(pte::CompileSpec{cs.key, cs.value});
    plan_.delegates.push_back(std::move(bd));
    pte::DelegateCall call;
    call.delegateIndex = int32_t(plan_.delegates.size() - 1);
    std::vector<int32_t> outIds;
    for (const auto &o : node.outputs) {
      std::vector<std::string> names;
      o.collectTensorNames(names);
      for (const auto &n : names) {
        int32_t id = push(tensorOf(n, true));
        ids_[n] = id;
        outIds.push_back(id);
      }
    }
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
  std::unordered_map<std::string, std::string> aliases_;
  std::unordered_map<std::string, int32_t> ids_;
  pte::ExecutionPlan plan_;
};

} // namespace

std::string compactPytreeSpec(const std::string &treespecJson) {
  if (treespecJson.empty()) return "";
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(treespecJson);
  } catch (const nlohmann::json::exception &e) {
    throw Error(std::string("pytree spec is not valid JSON: ") + e.what());
  }
  if (!doc.is_array() || doc.size() != 2) throw Error("pytree spec must be [protocol, node]");
  size_t leaves = 0;
  return jsonTreespecToCompact(doc[1], leaves);
}

pte::Program emitProgram(const Program &program) {
  if (program.stage != Stage::Planned)
    throw Error(std::string("exir-emit needs a planned program, got stage '") + stageName(program.stage) + "'");
  pte::Program out;
  ConstantPool constants(out);
  // Methods are emitted sorted by name, as upstream does.
  std::vector<std::string> names;
  for (const auto &[name, m] : program.methods) names.push_back(name);
  std::sort(names.begin(), names.end());
  for (const auto &name : names) {
    const Method &m = *program.methods.find(name);
    if (!m.plan) throw Error("method has no memory plan", {}, "/memory_plans/" + name);
    out.executionPlan.push_back(MethodEmitter(program, name, m, constants).emit());
  }
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
