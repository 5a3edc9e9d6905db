//===- Ops/OpLibrary.cpp - Custom operators from a YAML file --------------===//
#include "Ops/OpLibrary.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <yaml-cpp/yaml.h>

#include <memory>
#include <set>

namespace exir {

namespace {

struct Registered {
  std::set<std::string> hashes;
  std::vector<std::unique_ptr<EdgeDtypeRules>> dtypeRules;
};

Registered &registered() {
  static Registered r;
  return r;
}

std::string lineOf(const YAML::Node &node) { return "line " + std::to_string(node.Mark().line + 1); }

std::string stringField(const YAML::Node &entry, const char *key, const std::string &source) {
  const YAML::Node v = entry[key];
  if (!v.IsScalar()) throw Error(std::string("'") + key + "' must be a string", source, lineOf(v));
  return v.Scalar();
}

OpSchema schemaField(const YAML::Node &entry, const char *key, const std::string &source) {
  std::string text = stringField(entry, key, source);
  if (text.find("::") == std::string::npos || text.find("::") > text.find('('))
    throw Error(std::string("'") + key +
                    "' needs a namespace-qualified schema, e.g. 'mylib::custom_sin(Tensor self) -> Tensor'",
                source, lineOf(entry[key]));
  try {
    return parseSchema(text);
  } catch (const Error &e) {
    throw Error(std::string("'") + key + "': " + e.message() + (e.location().empty() ? "" : " (" + e.location() + ")"),
                source, lineOf(entry[key]));
  }
}

} // namespace

void registerOpLibrary(const std::string &text, const std::string &sourceName) {
  Registered &reg = registered();
  std::string hash = sha256Hex(text);
  if (reg.hashes.count(hash)) return;

  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException &e) {
    throw Error("YAML syntax error: " + e.msg, sourceName, "line " + std::to_string(e.mark.line + 1));
  }
  if (!root || root.IsNull()) throw Error("the op library declares no operators", sourceName, "line 1");
  if (!root.IsSequence())
    throw Error("an op library is a list of entries (- func: ns::op(...) -> ...)", sourceName, lineOf(root));

  std::vector<OperatorInfo> ops;
  std::vector<std::pair<size_t, std::string>> outOf;
  for (const YAML::Node &entry : root) {
    if (!entry.IsMap()) throw Error("an entry must be a mapping with 'func'", sourceName, lineOf(entry));
    for (const auto &kv : entry) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (key != "func" && key != "out" && key != "core" && key != "type_alias" && key != "type_constraint")
        throw Error("unknown key '" + key + "' (an entry has func, out, core, type_alias, type_constraint)",
                    sourceName, lineOf(kv.first));
    }
    if (!entry["func"]) throw Error("entry has no 'func'", sourceName, lineOf(entry));
    OperatorInfo info;
    info.schema = schemaField(entry, "func", sourceName);
    info.line = entry.Mark().line + 1;
    if (entry["core"]) {
      const YAML::Node core = entry["core"];
      if (!core.IsScalar() || (core.Scalar() != "true" && core.Scalar() != "false"))
        throw Error("'core' must be true or false", sourceName, lineOf(core));
      info.isCore = core.Scalar() == "true";
    }
    if (info.schema.isOutVariant() && entry["out"])
      throw Error("'" + info.schema.qualifiedName() + "' is an out variant itself; 'out' belongs to functional ops",
                  sourceName, lineOf(entry["out"]));
    size_t index = ops.size();
    ops.push_back(std::move(info));
    if (entry["out"]) {
      OperatorInfo out;
      out.schema = schemaField(entry, "out", sourceName);
      out.line = entry["out"].Mark().line + 1;
      const OpSchema &functional = ops[index].schema;
      if (!out.schema.isOutVariant())
        throw Error("'out' must be an out variant: its out arguments are keyword-only and mutable "
                    "(e.g. '*, Tensor(a!) out) -> Tensor(a!)')",
                    sourceName, lineOf(entry["out"]));
      if (out.schema.ns != functional.ns || out.schema.name != functional.name)
        throw Error("'out' must be an overload of " + functional.ns + "::" + functional.name + ", got " +
                        out.schema.qualifiedName(),
                    sourceName, lineOf(entry["out"]));
      outOf.emplace_back(index, out.schema.overload);
      ops.push_back(std::move(out));
    }
  }
  OperatorTable::extendBuiltin(std::move(ops), outOf, sourceName);
  reg.dtypeRules.push_back(
      std::make_unique<EdgeDtypeRules>(EdgeDtypeRules::parseOpLibrary(text, sourceName, OperatorTable::builtin())));
  reg.hashes.insert(hash);
}

void registerOpLibraries(const Program &program) {
  for (const auto &lib : program.opLibraries) registerOpLibrary(lib.text, lib.source);
}

void addOpLibrary(Program &program, const std::string &path) {
  OpLibraryRecord rec;
  rec.source = path;
  rec.text = readFileOrStdin(path);
  rec.sha256 = sha256Hex(rec.text);
  registerOpLibrary(rec.text, path == "-" ? "<stdin>" : path);
  for (const auto &existing : program.opLibraries)
    if (existing.sha256 == rec.sha256) return;
  program.opLibraries.push_back(std::move(rec));
}

std::vector<const EdgeDtypeRules *> opLibraryDtypeRules() {
  std::vector<const EdgeDtypeRules *> out;
  for (const auto &r : registered().dtypeRules) out.push_back(r.get());
  return out;
}

} // namespace exir
