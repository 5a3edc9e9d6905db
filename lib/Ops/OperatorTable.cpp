//===- Ops/OperatorTable.cpp - Every operator the tools know --------------===//
//
// Parses the operators.txt format and links entries: out variants by
// signature, view ops to their `_copy` ops, and the reverse links.
//
//===----------------------------------------------------------------------===//
#include "Ops/OperatorTable.h"

#include "Ops/CompiledTables.h"

#include "Support/Error.h"

#include <algorithm>
#include <array>

namespace exir {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Factory kwargs that out variants drop because the out tensor carries them.
constexpr std::array<std::string_view, 4> kTensorOptionArgs = {"dtype", "layout", "device",
                                                                "pin_memory"};

bool isTensorOptionArg(const SchemaArgument &arg) {
  return arg.kwargOnly &&
         std::find(kTensorOptionArgs.begin(), kTensorOptionArgs.end(), arg.name) !=
             kTensorOptionArgs.end();
}

/// torchgen's "signature" comparison with returns ignored: the out variant's
/// non-out arguments must equal the functional arguments by name and type,
/// except that TensorOptions kwargs may be absent from the out variant.
bool signatureMatchesOut(const OpSchema &functional, const OpSchema &out) {
  std::vector<const SchemaArgument *> outArgs;
  for (const auto &a : out.arguments)
    if (!a.isOut) outArgs.push_back(&a);
  size_t j = 0;
  for (const auto &a : functional.arguments) {
    if (j < outArgs.size() && outArgs[j]->name == a.name) {
      if (!(outArgs[j]->type == a.type)) return false;
      ++j;
      continue;
    }
    if (isTensorOptionArg(a) && !out.argument(a.name)) continue;
    return false;
  }
  return j == outArgs.size();
}

} // namespace

std::string OperatorTable::normalizeName(std::string_view qualifiedName) {
  std::string name(trim(qualifiedName));
  if (name.find("::") == std::string::npos) name = "aten::" + name;
  constexpr std::string_view kDefault = ".default";
  if (name.size() > kDefault.size() &&
      std::string_view(name).substr(name.size() - kDefault.size()) == kDefault)
    name.resize(name.size() - kDefault.size());
  return name;
}

void OperatorTable::add(OperatorInfo info, const std::string &sourceName) {
  std::string key = info.schema.qualifiedName();
  if (byName_.count(key))
    throw Error("operator '" + key + "' is defined twice", sourceName,
                "line " + std::to_string(info.line));
  byName_.emplace(std::move(key), entries_.size());
  entries_.push_back(std::make_unique<OperatorInfo>(std::move(info)));
}

OperatorTable OperatorTable::parse(std::string_view text, const std::string &sourceName) {
  OperatorTable table;
  std::string ns = "aten";
  std::vector<std::pair<size_t, std::string>> explicitOut, explicitCopy;
  int lineNo = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++lineNo;
    if (line.empty() || line.front() == '#') continue;
    std::string location = "line " + std::to_string(lineNo);
    if (line.substr(0, 10) == "namespace ") {
      ns = std::string(trim(line.substr(10)));
      if (ns.empty()) throw Error("'namespace' needs a name", sourceName, location);
      continue;
    }
    OperatorInfo info;
    info.line = lineNo;
    std::string outTag, copyTag;
    size_t column = 0;
    while (!line.empty() && line.front() == '@') {
      size_t tagEnd = line.find_first_of(" \t");
      if (tagEnd == std::string_view::npos) throw Error("a tag without a schema", sourceName, location);
      std::string_view tag = line.substr(1, tagEnd - 1);
      if (tag == "core") info.isCore = true;
      else if (tag.substr(0, 4) == "out=") outTag = std::string(tag.substr(4));
      else if (tag.substr(0, 5) == "copy=") copyTag = std::string(tag.substr(5));
      else throw Error("unknown tag '@" + std::string(tag) + "'", sourceName, location);
      std::string_view rest = trim(line.substr(tagEnd));
      column += line.size() - rest.size();
      line = rest;
    }
    try {
      info.schema = parseSchema(line, ns);
    } catch (const Error &e) {
      // Re-anchor the schema column to the line.
      std::string where = location;
      if (e.location().rfind("column ", 0) == 0)
        where += ", column " + std::to_string(std::stoul(e.location().substr(7)) + column);
      throw Error(e.message(), sourceName, where);
    }
    if (!outTag.empty()) explicitOut.emplace_back(table.entries_.size(), outTag);
    if (!copyTag.empty()) explicitCopy.emplace_back(table.entries_.size(), copyTag);
    table.add(std::move(info), sourceName);
    if (end == text.size()) break;
  }
  table.link(sourceName, explicitOut, explicitCopy);
  return table;
}

const OpSchema *OperatorTable::findOutVariant(const OpSchema &schema) const {
  for (const auto &entry : entries_) {
    const OpSchema &candidate = entry->schema;
    if (candidate.ns != schema.ns || candidate.name != schema.name || !candidate.isOutVariant())
      continue;
    if (signatureMatchesOut(schema, candidate)) return &candidate;
  }
  return nullptr;
}

void OperatorTable::link(const std::string &sourceName,
                         const std::vector<std::pair<size_t, std::string>> &explicitOut,
                         const std::vector<std::pair<size_t, std::string>> &explicitCopy) {
  auto lineOf = [](const OperatorInfo &e) { return "line " + std::to_string(e.line); };
  for (const auto &[index, overload] : explicitOut) {
    OperatorInfo &e = *entries_[index];
    std::string target = e.schema.ns + "::" + e.schema.name + "." + overload;
    const OperatorInfo *out = info(target);
    if (!out || !out->schema.isOutVariant())
      throw Error("@out names '" + target + "', which is not an out variant in the table",
                  sourceName, lineOf(e));
    e.outVariant = &out->schema;
  }
  for (const auto &[index, target] : explicitCopy) {
    OperatorInfo &e = *entries_[index];
    const OperatorInfo *copy = info(target);
    if (!copy) throw Error("@copy names unknown operator '" + target + "'", sourceName, lineOf(e));
    e.viewCopy = &copy->schema;
  }
  for (auto &entry : entries_) {
    const OpSchema &s = entry->schema;
    if (!entry->outVariant && !s.isOutVariant() && !s.isInplace()) entry->outVariant = findOutVariant(s);
    if (!entry->viewCopy && s.isView()) {
      std::string copyName = s.ns + "::" + s.name + "_copy";
      if (!s.overload.empty()) copyName += "." + s.overload;
      if (const OperatorInfo *copy = info(copyName)) entry->viewCopy = &copy->schema;
    }
  }
  // Reverse links.
  auto entryOf = [&](const OpSchema &s) -> OperatorInfo & {
    return *entries_[byName_.at(s.qualifiedName())];
  };
  for (auto &entry : entries_) {
    if (entry->outVariant) {
      OperatorInfo &out = entryOf(*entry->outVariant);
      if (!out.functional) out.functional = &entry->schema;
    }
    if (entry->viewCopy) entryOf(*entry->viewCopy).isViewCopy = true;
  }
}

//===----------------------------------------------------------------------===//
// Compact form
//===----------------------------------------------------------------------===//

namespace {

// The magic word of the compact form; bump it when the layout changes.
constexpr std::string_view kCompiledMagic = "exir-operator-table-1";

void writeStrings(compiled::Writer &w, const std::vector<std::string> &strings) {
  w.u(strings.size());
  for (const auto &s : strings) w.str(s);
}

void readStrings(compiled::Reader &r, std::vector<std::string> &strings) {
  strings.resize(r.count());
  for (auto &s : strings) s = r.str();
}

void writeArguments(compiled::Writer &w, const std::vector<SchemaArgument> &args) {
  w.u(args.size());
  for (const auto &a : args) {
    w.str(a.name);
    const SchemaType &t = a.type;
    w.u(uint8_t(t.base));
    w.u(unsigned(t.isList) | unsigned(t.optional) << 1 | unsigned(t.elementOptional) << 2 |
        unsigned(t.fixedSize.has_value()) << 3 | unsigned(a.alias.isWrite) << 4 | unsigned(a.kwargOnly) << 5 |
        unsigned(a.isOut) << 6 | unsigned(a.defaultValue.has_value()) << 7);
    if (t.fixedSize) w.i(*t.fixedSize);
    writeStrings(w, a.alias.beforeSet);
    writeStrings(w, a.alias.afterSet);
    if (const auto &d = a.defaultValue) {
      w.u(uint8_t(d->kind));
      w.i(d->intValue);
      w.f(d->floatValue);
      w.str(d->text);
      w.u(d->ints.size());
      for (int64_t v : d->ints) w.i(v);
      w.u(d->floats.size());
      for (double v : d->floats) w.f(v);
    }
  }
}

void readArguments(compiled::Reader &r, std::vector<SchemaArgument> &args) {
  args.resize(r.count());
  for (auto &a : args) {
    a.name = r.str();
    SchemaType &t = a.type;
    t.base = SchemaBaseType(r.u());
    uint64_t flags = r.u();
    t.isList = flags & 1;
    t.optional = flags & 2;
    t.elementOptional = flags & 4;
    a.alias.isWrite = flags & 16;
    a.kwargOnly = flags & 32;
    a.isOut = flags & 64;
    if (flags & 8) t.fixedSize = r.i();
    readStrings(r, a.alias.beforeSet);
    readStrings(r, a.alias.afterSet);
    if (flags & 128) {
      SchemaDefault &d = a.defaultValue.emplace();
      d.kind = SchemaDefault::Kind(r.u());
      d.intValue = r.i();
      d.floatValue = r.f();
      d.text = r.str();
      d.ints.resize(r.count());
      for (int64_t &v : d.ints) v = r.i();
      d.floats.resize(r.count());
      for (double &v : d.floats) v = r.f();
    }
  }
}

} // namespace

std::string OperatorTable::toCompiled() const {
  compiled::Writer w;
  w.str(kCompiledMagic);
  w.u(entries_.size());
  // A link is 1 + the index of the entry it points to, or 0.
  auto link = [&](const OpSchema *s) -> uint64_t { return s ? byName_.at(s->qualifiedName()) + 1 : 0; };
  for (const auto &e : entries_) {
    const OpSchema &s = e->schema;
    w.str(s.ns);
    w.str(s.name);
    w.str(s.overload);
    w.str(s.text);
    writeArguments(w, s.arguments);
    writeArguments(w, s.returns);
    w.u(unsigned(e->isCore) | unsigned(e->isViewCopy) << 1);
    w.u(link(e->outVariant));
    w.u(link(e->viewCopy));
    w.u(link(e->functional));
    w.u(uint64_t(e->line));
  }
  return w.take();
}

OperatorTable OperatorTable::fromCompiled(std::string_view data) {
  compiled::Reader r(data);
  if (r.str() != kCompiledMagic) compiled::Reader::corrupt();
  OperatorTable table;
  size_t n = r.count();
  table.entries_.reserve(n);
  table.byName_.reserve(n);
  for (size_t i = 0; i < n; ++i) table.entries_.push_back(std::make_unique<OperatorInfo>());
  auto link = [&](uint64_t index) -> const OpSchema * {
    if (index > n) compiled::Reader::corrupt();
    return index ? &table.entries_[index - 1]->schema : nullptr;
  };
  for (size_t i = 0; i < n; ++i) {
    OperatorInfo &e = *table.entries_[i];
    OpSchema &s = e.schema;
    s.ns = r.str();
    s.name = r.str();
    s.overload = r.str();
    s.text = r.str();
    readArguments(r, s.arguments);
    readArguments(r, s.returns);
    uint64_t flags = r.u();
    e.isCore = flags & 1;
    e.isViewCopy = flags & 2;
    e.outVariant = link(r.u());
    e.viewCopy = link(r.u());
    e.functional = link(r.u());
    e.line = int(r.u());
    if (!table.byName_.emplace(s.qualifiedName(), i).second) compiled::Reader::corrupt();
  }
  if (!r.atEnd()) compiled::Reader::corrupt();
  return table;
}

const OperatorInfo *OperatorTable::info(std::string_view qualifiedName) const {
  auto it = byName_.find(normalizeName(qualifiedName));
  return it == byName_.end() ? nullptr : entries_[it->second].get();
}

const OperatorInfo *OperatorTable::info(const OpSchema &schema) const {
  auto it = byName_.find(schema.qualifiedName());
  return it == byName_.end() ? nullptr : entries_[it->second].get();
}

const OpSchema *OperatorTable::lookup(std::string_view qualifiedName) const {
  const OperatorInfo *i = info(qualifiedName);
  return i ? &i->schema : nullptr;
}

bool OperatorTable::isCore(const OpSchema &schema) const {
  const OperatorInfo *i = info(schema);
  return i && i->isCore;
}

const OpSchema *OperatorTable::outVariant(const OpSchema &schema) const {
  const OperatorInfo *i = info(schema);
  if (!i) return nullptr;
  if (i->schema.isOutVariant()) return &i->schema;
  return i->outVariant;
}

const OpSchema *OperatorTable::viewCopyOf(const OpSchema &schema) const {
  const OperatorInfo *i = info(schema);
  return i ? i->viewCopy : nullptr;
}

const OpSchema *OperatorTable::functionalOf(const OpSchema &schema) const {
  const OperatorInfo *i = info(schema);
  return i ? i->functional : nullptr;
}

std::vector<const OpSchema *> OperatorTable::all() const {
  std::vector<const OpSchema *> out;
  out.reserve(entries_.size());
  for (const auto &e : entries_) out.push_back(&e->schema);
  return out;
}

} // namespace exir
