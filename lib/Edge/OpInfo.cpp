//===- Edge/OpInfo.cpp - What the edge passes ask the operator table ------===//
#include "Edge/OpInfo.h"
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

struct DtypeRules::Impl {
  EdgeDtypeRules rules;
  // Schema per target string: the verifier checks every node, and a graph
  // has few distinct targets (parsing and looking each one up cost more than the check).
  std::unordered_map<std::string, const OpSchema *> schemas = {};
};

DtypeRules::DtypeRules() = default;
DtypeRules::~DtypeRules() = default;
DtypeRules::DtypeRules(DtypeRules &&) noexcept = default;
DtypeRules &DtypeRules::operator=(DtypeRules &&) noexcept = default;

/// The built-in edge.yaml with the registered op libraries' rules over it.
static EdgeDtypeRules builtinWithLibraries() {
  EdgeDtypeRules rules = EdgeDtypeRules::builtin();
  for (const EdgeDtypeRules *lib : opLibraryDtypeRules()) rules = rules.overlaidWith(*lib);
  return rules;
}

DtypeRules DtypeRules::load(const std::string &path) {
  DtypeRules r;
  r.impl_ = std::make_unique<Impl>(Impl{path.empty() ? builtinWithLibraries() : EdgeDtypeRules::loadFile(path)});
  return r;
}

DtypeRules DtypeRules::forProgram(const Program &program) {
  DtypeRules r;
  registerOpLibraries(program); // a user's edge.yaml may constrain the libraries' ops
  const EdgeDtypeRules builtin = builtinWithLibraries();
  if (!program.edgeRules) {
    r.impl_ = std::make_unique<Impl>(Impl{builtin});
    return r;
  }
  EdgeDtypeRules user = EdgeDtypeRules::parse(program.edgeRules->text, program.edgeRules->source);
  r.impl_ = std::make_unique<Impl>(Impl{program.edgeRules->replace ? std::move(user) : builtin.overlaidWith(user)});
  return r;
}

std::optional<std::string> DtypeRules::check(const Graph &graph, const Node &node) const {
  if (!gIrValidityChecks) return std::nullopt;
  auto [slot, unseen] = impl_->schemas.try_emplace(node.target, nullptr);
  if (unseen) slot->second = schemaFor(parseTarget(node.target).qualifiedName());
  const OpSchema *schema = slot->second;
  if (!schema) return std::nullopt; // ops outside the table are permissive, as upstream treats ops outside edge.yaml
  return impl_->rules.check(*schema, EdgeDtypeRules::nodeDtypes(*schema, graph, node));
}

} // namespace exir::edge
