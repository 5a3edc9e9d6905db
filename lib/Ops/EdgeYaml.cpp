//===- Ops/EdgeYaml.cpp - edge.yaml dtype constraints ---------------------===//
//
// Loading validates the file against the operator table up front, so a
// malformed rule is reported with its line once instead of surfacing as a
// confusing verdict on some model later.
//
//===----------------------------------------------------------------------===//
#include "Ops/EdgeYaml.h"

#include "Ops/CompiledTables.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace exir {

namespace {

// The dtypes edge.yaml can name (pte-format.md §6.3).
const ScalarType kEdgeDtypes[] = {
    ScalarType::Bool,  ScalarType::Byte,     ScalarType::Char,   ScalarType::Short,
    ScalarType::Int,   ScalarType::Long,     ScalarType::Half,   ScalarType::BFloat16,
    ScalarType::Float, ScalarType::Double,   ScalarType::UInt16, ScalarType::ComplexFloat,
    ScalarType::ComplexDouble,
};

bool isEdgeDtype(ScalarType t) {
  return std::find(std::begin(kEdgeDtypes), std::end(kEdgeDtypes), t) != std::end(kEdgeDtypes);
}

std::string lineOf(const YAML::Node &node) {
  return "line " + std::to_string(node.Mark().line + 1);
}

std::string dtypeName(ScalarType t) {
  if (t == ScalarType::Undefined) return "*";
  const char *n = edgeYamlName(t);
  return *n ? n : torchName(t);
}

std::string scalarString(const YAML::Node &node, const std::string &what, const std::string &file) {
  if (!node || !node.IsScalar()) throw Error(what + " must be a string", file, lineOf(node));
  return node.Scalar();
}

bool isTensorReturn(const SchemaArgument &r) { return r.type.base == SchemaBaseType::Tensor; }

} // namespace

bool EdgeTypeAlias::allows(ScalarType t) const {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

std::optional<size_t> EdgeConstraintRow::aliasOf(std::string_view name) const {
  for (const auto &[key, alias] : entries)
    if (key == name) return alias;
  return std::nullopt;
}

std::string EdgeDtypeRules::returnKey(const OpSchema &schema, size_t index) {
  if (index >= schema.returns.size() || !isTensorReturn(schema.returns[index])) return "";
  if (!schema.returns[index].name.empty()) return schema.returns[index].name;
  size_t k = 0;
  for (size_t i = 0; i < index; ++i)
    if (isTensorReturn(schema.returns[i])) ++k;
  return "__ret_" + std::to_string(k);
}

std::vector<std::string> EdgeDtypeRules::dtypeKeys(const OpSchema &schema) {
  std::vector<std::string> keys;
  for (const auto &a : schema.arguments)
    if (a.type.isTensorLike()) keys.push_back(a.name);
  for (size_t i = 0; i < schema.returns.size(); ++i)
    if (isTensorReturn(schema.returns[i])) keys.push_back(returnKey(schema, i));
  return keys;
}

EdgeDtypeRules EdgeDtypeRules::loadFile(const std::string &path, const OperatorTable &table) {
  return parse(readFileOrStdin(path), path, table);
}

EdgeDtypeRules EdgeDtypeRules::parse(std::string_view text, const std::string &sourceName,
                                     const OperatorTable &table) {
  return parse(text, sourceName, table, false);
}

EdgeDtypeRules EdgeDtypeRules::parseOpLibrary(std::string_view text, const std::string &sourceName,
                                              const OperatorTable &table) {
  return parse(text, sourceName, table, true);
}

EdgeDtypeRules EdgeDtypeRules::parse(std::string_view text, const std::string &sourceName, const OperatorTable &table,
                                     bool opLibrary) {
  EdgeDtypeRules rules;
  rules.sourceName_ = sourceName;
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception &e) {
    throw Error("YAML syntax error: " + e.msg, sourceName, "line " + std::to_string(e.mark.line + 1));
  }
  if (!root || root.IsNull()) return rules; // an empty file has no rules
  if (!root.IsSequence()) throw Error("edge.yaml must be a list of entries", sourceName, lineOf(root));

  for (const YAML::Node &entry : root) {
    if (!entry.IsMap()) throw Error("an entry must be a mapping", sourceName, lineOf(entry));
    EdgeOpConstraint op;
    op.line = entry.Mark().line + 1;
    std::string where = "line " + std::to_string(op.line);
    for (const auto &kv : entry) {
      std::string key = kv.first.Scalar();
      if (key != "func" && key != "namespace" && key != "inherits" && key != "type_alias" &&
          key != "type_constraint" && !(opLibrary && (key == "out" || key == "core")))
        throw Error("unknown key '" + key + "' in entry", sourceName, lineOf(kv.first));
    }
    if (!entry["func"]) throw Error("entry has no 'func'", sourceName, where);
    op.func = scalarString(entry["func"], "'func'", sourceName);
    if (opLibrary) {
      // "ns::name.overload(args) -> rets": the rule is keyed by the name.
      op.func = op.func.substr(0, op.func.find('('));
      while (!op.func.empty() && op.func.back() == ' ') op.func.pop_back();
      if (!entry["type_alias"] && !entry["type_constraint"]) continue;
    }
    op.inherits = entry["inherits"] ? scalarString(entry["inherits"], "'inherits'", sourceName)
                                    : op.func;
    op.schema = table.lookup(op.inherits);
    if (!op.schema)
      throw Error("entry '" + op.func + "' inherits unknown operator '" + op.inherits + "'",
                  sourceName, where);
    std::string key = op.schema->qualifiedName();
    if (rules.byName_.count(key))
      throw Error("a second entry for '" + key + "'", sourceName, where);

    // type_alias: name -> list of dtype names.
    const YAML::Node aliases = entry["type_alias"];
    if (!aliases || !aliases.IsMap())
      throw Error("entry '" + op.func + "' needs a 'type_alias' mapping", sourceName, where);
    for (const auto &kv : aliases) {
      EdgeTypeAlias alias;
      alias.name = kv.first.Scalar();
      if (!kv.second.IsSequence())
        throw Error("alias '" + alias.name + "' must list dtypes", sourceName, lineOf(kv.second));
      for (const YAML::Node &d : kv.second) {
        std::string dname = scalarString(d, "a dtype name", sourceName);
        ScalarType t = scalarTypeFromEdgeYamlName(dname);
        if (t == ScalarType::Undefined)
          throw Error("unknown dtype '" + dname + "' in alias '" + alias.name + "'", sourceName,
                      lineOf(d));
        alias.dtypes.push_back(t);
      }
      for (const auto &other : op.aliases)
        if (other.name == alias.name)
          throw Error("alias '" + alias.name + "' declared twice", sourceName, lineOf(kv.first));
      op.aliases.push_back(std::move(alias));
    }

    // type_constraint: list of {name: alias}.
    const YAML::Node rows = entry["type_constraint"];
    if (!rows || !rows.IsSequence())
      throw Error("entry '" + op.func + "' needs a 'type_constraint' list", sourceName, where);
    std::vector<std::string> required = dtypeKeys(*op.schema);
    for (const YAML::Node &rowNode : rows) {
      if (!rowNode.IsMap()) throw Error("a constraint row must be a mapping", sourceName, lineOf(rowNode));
      EdgeConstraintRow row;
      row.line = rowNode.Mark().line + 1;
      for (const auto &kv : rowNode) {
        std::string name = kv.first.Scalar();
        std::string aliasName = scalarString(kv.second, "an alias name", sourceName);
        auto it = std::find_if(op.aliases.begin(), op.aliases.end(),
                               [&](const EdgeTypeAlias &a) { return a.name == aliasName; });
        if (it == op.aliases.end())
          throw Error("alias '" + aliasName + "' is not declared in 'type_alias' of '" + op.func + "'",
                      sourceName, lineOf(kv.second));
        bool known = op.schema->argument(name) != nullptr;
        for (size_t i = 0; !known && i < op.schema->returns.size(); ++i)
          known = returnKey(*op.schema, i) == name;
        if (!known)
          throw Error("'" + name + "' is not an argument or return of " + op.schema->qualifiedName(),
                      sourceName, lineOf(kv.first));
        row.entries.emplace_back(name, static_cast<size_t>(it - op.aliases.begin()));
      }
      for (const auto &name : required)
        if (!row.aliasOf(name))
          throw Error("row leaves out tensor '" + name + "' of " + op.schema->qualifiedName(),
                      sourceName, "line " + std::to_string(row.line));
      op.rows.push_back(std::move(row));
    }
    rules.byName_.emplace(key, rules.ops_.size());
    rules.ops_.push_back(std::move(op));
  }
  return rules;
}

// The magic word of the compact form; bump it when the layout changes.
static constexpr std::string_view kCompiledMagic = "exir-edge-dtype-rules-1";

std::string EdgeDtypeRules::toCompiled() const {
  compiled::Writer w;
  w.str(kCompiledMagic);
  w.u(ops_.size());
  for (const auto &op : ops_) {
    w.str(op.func);
    w.str(op.inherits);
    w.u(uint64_t(op.line));
    w.u(op.aliases.size());
    for (const auto &alias : op.aliases) {
      w.str(alias.name);
      w.u(alias.dtypes.size());
      for (ScalarType t : alias.dtypes) w.u(uint8_t(t));
    }
    w.u(op.rows.size());
    for (const auto &row : op.rows) {
      w.u(uint64_t(row.line));
      w.u(row.entries.size());
      for (const auto &[name, alias] : row.entries) {
        w.str(name);
        w.u(alias);
      }
    }
  }
  return w.take();
}

EdgeDtypeRules EdgeDtypeRules::fromCompiled(std::string_view data, const std::string &sourceName,
                                            const OperatorTable &table) {
  compiled::Reader r(data);
  if (r.str() != kCompiledMagic) compiled::Reader::corrupt();
  EdgeDtypeRules rules;
  rules.sourceName_ = sourceName;
  size_t numOps = r.count();
  rules.ops_.resize(numOps);
  rules.byName_.reserve(numOps);
  for (size_t i = 0; i < numOps; ++i) {
    EdgeOpConstraint &op = rules.ops_[i];
    op.func = r.str();
    op.inherits = r.str();
    op.line = int(r.u());
    op.schema = table.lookup(op.inherits);
    if (!op.schema) compiled::Reader::corrupt(); // the generator checked every op against this table
    op.aliases.resize(r.count());
    for (auto &alias : op.aliases) {
      alias.name = r.str();
      alias.dtypes.resize(r.count());
      for (ScalarType &t : alias.dtypes) t = ScalarType(int8_t(r.u()));
    }
    op.rows.resize(r.count());
    for (auto &row : op.rows) {
      row.line = int(r.u());
      row.entries.resize(r.count());
      for (auto &[name, alias] : row.entries) {
        name = r.str();
        alias = r.u();
        if (alias >= op.aliases.size()) compiled::Reader::corrupt();
      }
    }
    rules.byName_.emplace(op.schema->qualifiedName(), i);
  }
  if (!r.atEnd()) compiled::Reader::corrupt();
  return rules;
}

EdgeDtypeRules EdgeDtypeRules::overlaidWith(const EdgeDtypeRules &user) const {
  EdgeDtypeRules out = *this;
  for (const auto &op : user.ops_) {
    std::string key = op.schema->qualifiedName();
    if (auto it = out.byName_.find(key); it != out.byName_.end()) {
      out.ops_[it->second] = op;
    } else {
      out.byName_.emplace(key, out.ops_.size());
      out.ops_.push_back(op);
    }
  }
  out.sourceName_ = user.sourceName_ + " over " + sourceName_;
  return out;
}

const EdgeOpConstraint *EdgeDtypeRules::find(std::string_view qualifiedName) const {
  auto it = byName_.find(OperatorTable::normalizeName(qualifiedName));
  return it == byName_.end() ? nullptr : &ops_[it->second];
}

std::vector<const EdgeOpConstraint *> EdgeDtypeRules::all() const {
  std::vector<const EdgeOpConstraint *> out;
  for (const auto &op : ops_) out.push_back(&op);
  return out;
}

std::string EdgeDtypeRules::describeRows(const EdgeOpConstraint &c, size_t maxRows) {
  std::vector<std::string> keys = c.schema ? dtypeKeys(*c.schema) : std::vector<std::string>{};
  std::string out;
  size_t shown = 0;
  for (const auto &row : c.rows) {
    if (shown == maxRows) {
      out += ", ... (" + std::to_string(c.rows.size() - shown) + " more)";
      break;
    }
    std::string text = "{";
    std::vector<std::pair<size_t, std::string>> firstUse; // alias -> first key
    bool firstKey = true;
    for (const auto &[name, alias] : row.entries) {
      if (!keys.empty() && std::find(keys.begin(), keys.end(), name) == keys.end()) continue;
      text += (firstKey ? "" : ", ") + name + ": ";
      firstKey = false;
      auto prev = std::find_if(firstUse.begin(), firstUse.end(),
                               [&, a = alias](const auto &p) { return p.first == a; });
      if (prev != firstUse.end()) {
        text += "same as " + prev->second;
        continue;
      }
      firstUse.emplace_back(alias, name);
      const auto &dtypes = c.aliases[alias].dtypes;
      for (size_t i = 0; i < dtypes.size(); ++i) {
        if (i) text += '|';
        text += dtypeName(dtypes[i]);
      }
    }
    out += (shown ? ", " : "") + text + "}";
    ++shown;
  }
  return out;
}

std::optional<std::string>
EdgeDtypeRules::check(const OpSchema &schema,
                      const std::map<std::string, ScalarType> &dtypesByName) const {
  // The keys that take part, in schema order; Tensor?[] arguments never do.
  std::vector<std::string> keys = dtypeKeys(schema);
  std::vector<std::pair<std::string, ScalarType>> found;
  for (const auto &key : keys) {
    auto it = dtypesByName.find(key);
    if (it != dtypesByName.end()) found.emplace_back(key, it->second);
  }
  for (const auto &[name, dtype] : dtypesByName) {
    (void)dtype;
    if (std::find(keys.begin(), keys.end(), name) != keys.end()) continue;
    const SchemaArgument *arg = schema.argument(name);
    if (arg && arg->type.base == SchemaBaseType::Tensor && arg->type.elementOptional) continue;
    return schema.qualifiedName() + ": '" + name + "' is not a tensor input or output of the op";
  }
  auto foundText = [&] {
    std::string s;
    for (size_t i = 0; i < found.size(); ++i)
      s += (i ? ", " : "") + found[i].first + "=" + dtypeName(found[i].second);
    return s.empty() ? std::string("no tensors") : s;
  };

  // Essential tensor ios: non-optional Tensor / Tensor[] arguments and tensor returns.
  for (const auto &a : schema.arguments) {
    if (!a.type.isTensorLike() || a.type.optional) continue;
    if (!dtypesByName.count(a.name))
      return schema.qualifiedName() + ": no dtype for tensor argument '" + a.name + "'";
  }
  for (size_t i = 0; i < schema.returns.size(); ++i) {
    std::string key = returnKey(schema, i);
    if (!key.empty() && !dtypesByName.count(key))
      return schema.qualifiedName() + ": no dtype for output '" + key + "'";
  }

  const EdgeOpConstraint *c = find(schema.qualifiedName());
  if (!c) {
    // Permissive constraint: every edge dtype, no unification.
    for (const auto &[name, dtype] : found)
      if (dtype != ScalarType::Undefined && !isEdgeDtype(dtype))
        return schema.qualifiedName() + ": " + name + "=" + dtypeName(dtype) +
               " is not a dtype of the edge dialect";
    return std::nullopt;
  }

  for (const auto &[name, dtype] : found) {
    (void)dtype;
    bool mentioned = std::any_of(c->rows.begin(), c->rows.end(),
                                 [&, n = name](const EdgeConstraintRow &r) { return r.aliasOf(n).has_value(); });
    if (!mentioned)
      return schema.qualifiedName() + ": '" + name + "' has no dtype constraint in " + sourceName_;
  }

  for (const auto &row : c->rows) {
    std::vector<ScalarType> bound(c->aliases.size(), ScalarType::Undefined);
    bool ok = true;
    for (const auto &[name, dtype] : found) {
      if (dtype == ScalarType::Undefined) continue;
      std::optional<size_t> alias = row.aliasOf(name);
      if (!alias || !c->aliases[*alias].allows(dtype)) {
        ok = false;
        break;
      }
      if (bound[*alias] == ScalarType::Undefined) bound[*alias] = dtype;
      else if (bound[*alias] != dtype) {
        ok = false;
        break;
      }
    }
    if (ok) return std::nullopt;
  }
  return schema.qualifiedName() + ": " + foundText() + " matches no allowed row; allowed: " +
         describeRows(*c);
}

std::map<std::string, ScalarType> EdgeDtypeRules::nodeDtypes(const OpSchema &schema, const Graph &graph,
                                                             const Node &node) {
  std::map<std::string, ScalarType> dtypes;
  auto dtypeOf = [&](const std::string &value) -> std::optional<ScalarType> {
    if (const TensorMeta *m = graph.tensorValues.find(value)) return m->dtype;
    return std::nullopt;
  };
  for (const auto &arg : schema.arguments) {
    if (!arg.type.isTensorLike()) continue;
    const NamedArgument *in = node.input(arg.name);
    if (!in) continue;
    std::string value;
    if (in->arg.kind == ArgKind::Tensor || in->arg.kind == ArgKind::OptionalTensor) value = in->arg.name;
    else if (in->arg.kind == ArgKind::Tensors && !in->arg.names.empty()) value = in->arg.names[0];
    if (value.empty()) continue;
    if (auto d = dtypeOf(value)) dtypes[arg.name] = *d;
  }
  for (size_t r = 0; r < schema.returns.size() && r < node.outputs.size(); ++r) {
    std::string key = returnKey(schema, r);
    const Argument &out = node.outputs[r];
    std::string value = out.kind == ArgKind::Tensor ? out.name
                        : (out.kind == ArgKind::Tensors && !out.names.empty()) ? out.names[0] : std::string();
    if (key.empty() || value.empty()) continue;
    if (auto d = dtypeOf(value)) dtypes[key] = *d;
  }
  return dtypes;
}

} // namespace exir
