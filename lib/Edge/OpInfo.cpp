//===- Edge/OpInfo.cpp - What the edge passes ask the operator table ------===//
#include "Edge/OpInfo.h"
#include "Edge/EdgeUtil.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OpLibrary.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <unordered_map>

namespace exir::edge {

static const OpSchema *schemaFor(const std::string &qualifiedName) {
  return OperatorTable::builtin().lookup(qualifiedName);
}

static bool gIrValidityChecks = true;
void setIrValidityChecks(bool on) { gIrValidityChecks = on; }
bool irValidityChecks() { return gIrValidityChecks; }

bool isKnownOp(const std::string &qualifiedName) { return schemaFor(qualifiedName) != nullptr; }

bool isCoreOp(const std::string &qualifiedName) {
  const OperatorTable &table = OperatorTable::builtin();
  const OpSchema *s = table.lookup(qualifiedName);
  if (!s) return false;
  if (table.isCore(*s)) return true;
  // Edge also accepts the functional _copy variants of view ops, and view ops
  // that have one (split.Tensor, unbind.int): replace-view-ops swaps them in.
  if (s->name.size() > 5 && s->name.compare(s->name.size() - 5, 5, "_copy") == 0) return true;
  return s->isView() && table.viewCopyOf(*s) != nullptr;
}

const OpSchema *functionalTwin(const OperatorTable &table, const OpSchema &schema) {
  if (schema.isInplace()) {
    std::string name = schema.name.substr(0, schema.name.size() - 1);
    std::string overload = schema.overload.empty() ? "default" : schema.overload;
    // pow_'s overloads are named after the exponent alone; pow's after both
    // operands (pow.Scalar is Scalar ** Tensor).
    if (schema.ns == "aten" && name == "pow") overload = overload == "Scalar" ? "Tensor_Scalar" : "Tensor_Tensor";
    return table.lookup(schema.ns + "::" + name + "." + overload);
  }
  if (schema.isOutVariant()) return table.functionalOf(schema);
  return nullptr;
}

bool isPlainTensorParam(const std::string &qualifiedName, const std::string &argName) {
  const OpSchema *s = schemaFor(qualifiedName);
  if (!s) return false;
  const SchemaArgument *a = s->argument(argName);
  return a && a->type.isTensor() && !a->type.optional;
}

std::vector<std::string> argumentNames(const std::string &qualifiedName) {
  std::vector<std::string> names;
  if (const OpSchema *s = schemaFor(qualifiedName))
    for (const auto &a : s->arguments) names.push_back(a.name);
  return names;
}

std::vector<std::string> requiredArgumentNames(const std::string &qualifiedName) {
  std::vector<std::string> names;
  if (const OpSchema *s = schemaFor(qualifiedName))
    for (const auto &a : s->arguments)
      if (!a.defaultValue && !a.isOut && !(a.type.optional && a.kwargOnly)) names.push_back(a.name);
  return names;
}

namespace {
/// What the dtype check of one target reads of a node, and the verdicts so
/// far. The check is a function of the op and the dtypes of its tensor inputs
/// and outputs, and a graph has few distinct combinations: each is checked
/// once, by EdgeDtypeRules::check on the map EdgeDtypeRules::nodeDtypes makes.
struct TargetCheck {
  const OpSchema *schema = nullptr; // null: ops outside the table are not checked
  std::vector<const SchemaArgument *> tensorArgs; // tensor-like arguments, in schema order
  std::vector<std::string> returnKeys;            // per return ("" for a non-tensor one)
  // Per combination (a byte per key: its dtype, or kAbsent), the verdict.
  StringMap<std::optional<std::string>> verdicts;
};
constexpr char kAbsent = char(-128);
} // namespace

struct DtypeRules::Impl {
  // The builtin table itself when nothing overlays it (a copy costs more than
  // checking a small program), else the overlaid one.
  std::optional<EdgeDtypeRules> owned;
  const EdgeDtypeRules &rules() const { return owned ? *owned : EdgeDtypeRules::builtin(); }
  // Per target string: the verifier checks every node, and a graph has few
  // distinct targets (parsing and looking each one up cost more than the check).
  StringMap<TargetCheck> targets = {};
};

DtypeRules::DtypeRules() = default;
DtypeRules::~DtypeRules() = default;
DtypeRules::DtypeRules(DtypeRules &&) noexcept = default;
DtypeRules &DtypeRules::operator=(DtypeRules &&) noexcept = default;

/// The built-in edge.yaml with the registered op libraries' rules over it;
/// nullopt when no library has rules (the builtin table is used as it is).
static std::optional<EdgeDtypeRules> builtinWithLibraries() {
  std::vector<const EdgeDtypeRules *> libraries = opLibraryDtypeRules();
  if (libraries.empty()) return std::nullopt;
  EdgeDtypeRules rules = EdgeDtypeRules::builtin();
  for (const EdgeDtypeRules *lib : libraries) rules = rules.overlaidWith(*lib);
  return rules;
}

DtypeRules DtypeRules::load(const std::string &path) {
  DtypeRules r;
  r.impl_ = std::make_unique<Impl>();
  r.impl_->owned = path.empty() ? builtinWithLibraries() : EdgeDtypeRules::loadFile(path);
  return r;
}

DtypeRules DtypeRules::forProgram(const Program &program) {
  DtypeRules r;
  r.impl_ = std::make_unique<Impl>();
  registerOpLibraries(program); // a user's edge.yaml may constrain the libraries' ops
  std::optional<EdgeDtypeRules> builtin = builtinWithLibraries();
  if (!program.edgeRules) {
    r.impl_->owned = std::move(builtin);
    return r;
  }
  EdgeDtypeRules user = EdgeDtypeRules::parse(program.edgeRules->text, program.edgeRules->source);
  if (program.edgeRules->replace) r.impl_->owned = std::move(user);
  else r.impl_->owned = (builtin ? *builtin : EdgeDtypeRules::builtin()).overlaidWith(user);
  return r;
}

std::optional<std::string> DtypeRules::check(const Graph &graph, const Node &node) const {
  if (!gIrValidityChecks) return std::nullopt;
  auto [slot, unseen] = impl_->targets.try_emplace(node.target);
  TargetCheck &target = slot->second;
  if (unseen) {
    target.schema = schemaFor(parseTarget(node.target).qualifiedName());
    if (target.schema) {
      for (const auto &arg : target.schema->arguments)
        if (arg.type.isTensorLike()) target.tensorArgs.push_back(&arg);
      for (size_t r = 0; r < target.schema->returns.size(); ++r)
        target.returnKeys.push_back(EdgeDtypeRules::returnKey(*target.schema, r));
    }
  }
  if (!target.schema) return std::nullopt; // ops outside the table are permissive, as upstream treats ops outside edge.yaml
  // The node's combination, read as nodeDtypes reads it.
  std::string combination;
  combination.reserve(target.tensorArgs.size() + target.returnKeys.size());
  auto dtypeOf = [&](const std::string &value) {
    if (value.empty()) return kAbsent;
    const TensorMeta *m = graph.tensorValues.find(value);
    return m ? char(m->dtype) : kAbsent;
  };
  static const std::string kNone;
  for (const SchemaArgument *arg : target.tensorArgs) {
    const NamedArgument *in = node.input(arg->name);
    if (!in) {
      combination += kAbsent;
      continue;
    }
    const Argument &a = in->arg;
    combination += dtypeOf(a.kind == ArgKind::Tensor || a.kind == ArgKind::OptionalTensor ? a.name
                           : a.kind == ArgKind::Tensors && !a.names.empty()                ? a.names[0]
                                                                                           : kNone);
  }
  for (size_t r = 0; r < target.returnKeys.size() && r < node.outputs.size(); ++r) {
    const Argument &out = node.outputs[r];
    combination += target.returnKeys[r].empty() ? kAbsent
                   : dtypeOf(out.kind == ArgKind::Tensor                         ? out.name
                             : out.kind == ArgKind::Tensors && !out.names.empty() ? out.names[0]
                                                                                   : kNone);
  }
  auto [verdict, first] = target.verdicts.try_emplace(std::move(combination));
  if (first) verdict->second = impl_->rules().check(*target.schema, EdgeDtypeRules::nodeDtypes(*target.schema, graph, node));
  return verdict->second;
}

} // namespace exir::edge
