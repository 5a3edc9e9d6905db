//===- Ops/Schema.cpp - PyTorch operator signature parser -----------------===//
//
// A small recursive-descent parser over the schema text. It keeps the column
// of every token so errors can point at the exact place in a schema line.
//
//===----------------------------------------------------------------------===//
#include "Ops/Schema.h"

#include "Support/Error.h"

#include <cctype>
#include <cstdlib>
#include <limits>
#include <utility>

namespace exir {

namespace {

struct BaseTypeSpelling {
  const char *spelling;
  SchemaBaseType type;
};

// Every base type name the grammar accepts. Canonical names come first so
// schemaBaseTypeName() returns them.
const BaseTypeSpelling kBaseTypes[] = {
    {"Tensor", SchemaBaseType::Tensor},     {"int", SchemaBaseType::Int},
    {"SymInt", SchemaBaseType::SymInt},     {"float", SchemaBaseType::Float},
    {"SymFloat", SchemaBaseType::SymFloat}, {"bool", SchemaBaseType::Bool},
    {"SymBool", SchemaBaseType::SymBool},   {"Scalar", SchemaBaseType::Scalar},
    {"ScalarType", SchemaBaseType::ScalarType}, {"Layout", SchemaBaseType::Layout},
    {"Device", SchemaBaseType::Device},     {"MemoryFormat", SchemaBaseType::MemoryFormat},
    {"str", SchemaBaseType::Str},           {"Generator", SchemaBaseType::Generator},
    {"Dimname", SchemaBaseType::Dimname},   {"Storage", SchemaBaseType::Storage},
    {"Stream", SchemaBaseType::Stream},     {"QScheme", SchemaBaseType::QScheme},
    {"complex", SchemaBaseType::Complex},   {"Any", SchemaBaseType::Any},
};

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class SchemaParser {
public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  OpSchema parseSchema(std::string_view defaultNamespace) {
    OpSchema schema;
    schema.text = std::string(text_);
    skipSpace();
    std::string first = expectIdentifier("operator name");
    if (consumeIf("::")) {
      schema.ns = first;
      schema.name = expectIdentifier("operator name");
    } else {
      schema.ns = std::string(defaultNamespace);
      schema.name = first;
    }
    if (peek() == '.') {
      ++pos_;
      schema.overload = expectIdentifier("overload name");
    }
    skipSpace();
    expect('(');
    parseArguments(schema.arguments);
    expect(')');
    skipSpace();
    expectString("->");
    skipSpace();
    parseReturns(schema.returns);
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected '" + std::string(1, text_[pos_]) + "' after the returns");
    return schema;
  }

  SchemaType parseTypeOnly() {
    skipSpace();
    SchemaAlias alias;
    SchemaType type = parseType(alias);
    skipSpace();
    if (pos_ != text_.size()) fail("unexpected text after the type");
    return type;
  }

private:
  [[noreturn]] void fail(const std::string &message) const { failAt(pos_, message); }
  [[noreturn]] void failAt(size_t pos, const std::string &message) const {
    throw Error(message + " in schema '" + std::string(text_) + "'", "",
                "column " + std::to_string(pos + 1));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consumeIf(std::string_view s) {
    if (text_.substr(pos_, s.size()) == s) {
      pos_ += s.size();
      return true;
    }
    return false;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void expectString(std::string_view s) {
    if (!consumeIf(s)) fail("expected '" + std::string(s) + "'");
  }
  std::string expectIdentifier(const char *what) {
    skipSpace();
    if (!isIdentStart(peek())) fail(std::string("expected ") + what);
    size_t start = pos_;
    while (isIdentChar(peek())) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  // `(a)`, `(a!)`, `(a -> *)`, `(a|b)`: the '(' has not been consumed yet.
  SchemaAlias parseAlias() {
    SchemaAlias alias;
    expect('(');
    auto parseSet = [&](std::vector<std::string> &set) {
      do {
        skipSpace();
        if (peek() == '*') {
          ++pos_;
          set.push_back("*");
        } else {
          set.push_back(expectIdentifier("alias set name"));
        }
        skipSpace();
      } while (consumeIf("|"));
    };
    parseSet(alias.beforeSet);
    if (consumeIf("!")) alias.isWrite = true;
    skipSpace();
    if (consumeIf("->")) {
      parseSet(alias.afterSet);
      if (consumeIf("!")) alias.isWrite = true;
    }
    expect(')');
    return alias;
  }

  SchemaType parseType(SchemaAlias &alias) {
    skipSpace();
    size_t start = pos_;
    std::string baseName = expectIdentifier("a type");
    SchemaType type;
    bool known = false;
    for (const auto &b : kBaseTypes) {
      if (baseName == b.spelling) {
        type.base = b.type;
        known = true;
        break;
      }
    }
    if (!known) failAt(start, "unknown type '" + baseName + "'");
    // Alias annotation right after the base type: `Tensor(a!)`.
    if (peek() == '(') alias = parseAlias();
    // Suffixes: `[N]`, `?`, in the order written.
    for (;;) {
      if (peek() == '[') {
        if (type.isList) fail("nested list types are not supported");
        ++pos_;
        skipSpace();
        if (std::isdigit(static_cast<unsigned char>(peek()))) {
          size_t numStart = pos_;
          while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
          type.fixedSize = std::stoll(std::string(text_.substr(numStart, pos_ - numStart)));
        }
        expect(']');
        type.isList = true;
        // `?` seen before `[]` made the elements optional.
        if (type.optional) {
          type.optional = false;
          type.elementOptional = true;
        }
        if (peek() == '(') {
          if (!alias.empty()) fail("a second alias annotation");
          alias = parseAlias();
        }
      } else if (peek() == '?') {
        if (type.optional) fail("'?' given twice");
        ++pos_;
        type.optional = true;
      } else {
        break;
      }
    }
    return type;
  }

  double parseNumberText(size_t start, size_t end, bool &isFloat) {
    std::string s(text_.substr(start, end - start));
    isFloat = s.find_first_of(".eE") != std::string::npos;
    return std::strtod(s.c_str(), nullptr);
  }

  // One scalar item of a default: number, True/False, None, string, identifier.
  SchemaDefault parseDefaultScalar() {
    skipSpace();
    SchemaDefault d;
    size_t start = pos_;
    char c = peek();
    if (c == '"' || c == '\'') {
      ++pos_;
      std::string s;
      while (pos_ < text_.size() && text_[pos_] != c) {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        s += text_[pos_++];
      }
      if (pos_ >= text_.size()) failAt(start, "unterminated string");
      ++pos_;
      d.kind = SchemaDefault::Kind::String;
      d.text = s;
      return d;
    }
    bool negative = false;
    if (c == '-' || c == '+') {
      negative = c == '-';
      ++pos_;
    }
    if (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.') {
      while (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '.') ++pos_;
      if (peek() == 'e' || peek() == 'E') {
        ++pos_;
        if (peek() == '-' || peek() == '+') ++pos_;
        if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("malformed number");
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      }
      bool isFloat = false;
      double v = parseNumberText(start, pos_, isFloat);
      d.text = std::string(text_.substr(start, pos_ - start));
      if (isFloat) {
        d.kind = SchemaDefault::Kind::Float;
        d.floatValue = v;
      } else {
        d.kind = SchemaDefault::Kind::Int;
        d.intValue = std::stoll(d.text);
      }
      return d;
    }
    if (isIdentStart(peek())) {
      std::string ident = expectIdentifier("a default value");
      d.text = std::string(text_.substr(start, pos_ - start));
      if (ident == "inf" || ident == "nan") {
        d.kind = SchemaDefault::Kind::Float;
        d.floatValue = ident == "inf" ? std::numeric_limits<double>::infinity()
                                      : std::numeric_limits<double>::quiet_NaN();
        if (negative) d.floatValue = -d.floatValue;
        return d;
      }
      if (negative) failAt(start, "a sign before '" + ident + "'");
      if (ident == "None") {
        d.kind = SchemaDefault::Kind::None;
      } else if (ident == "True" || ident == "False") {
        d.kind = SchemaDefault::Kind::Bool;
        d.intValue = ident == "True";
      } else {
        d.kind = SchemaDefault::Kind::Identifier;
        d.text = ident;
      }
      return d;
    }
    fail("expected a default value");
  }

  SchemaDefault parseDefault() {
    skipSpace();
    size_t start = pos_;
    if (peek() != '[') return parseDefaultScalar();
    ++pos_;
    SchemaDefault list;
    list.kind = SchemaDefault::Kind::IntList;
    std::vector<SchemaDefault> items;
    skipSpace();
    if (peek() != ']') {
      for (;;) {
        items.push_back(parseDefaultScalar());
        skipSpace();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        break;
      }
    }
    expect(']');
    bool anyFloat = false, allBool = !items.empty();
    for (const auto &item : items) {
      if (item.kind == SchemaDefault::Kind::Float) anyFloat = true;
      else if (item.kind != SchemaDefault::Kind::Int && item.kind != SchemaDefault::Kind::Bool)
        failAt(start, "list defaults may only hold numbers and booleans");
      if (item.kind != SchemaDefault::Kind::Bool) allBool = false;
    }
    if (allBool) {
      list.kind = SchemaDefault::Kind::BoolList;
      for (const auto &item : items) list.ints.push_back(item.intValue);
    } else if (anyFloat) {
      list.kind = SchemaDefault::Kind::FloatList;
      for (const auto &item : items)
        list.floats.push_back(item.kind == SchemaDefault::Kind::Float ? item.floatValue
                                                                     : double(item.intValue));
    } else {
      for (const auto &item : items) {
        if (item.kind == SchemaDefault::Kind::Bool) failAt(start, "mixed list default");
        list.ints.push_back(item.intValue);
      }
    }
    list.text = std::string(text_.substr(start, pos_ - start));
    return list;
  }

  void parseArguments(std::vector<SchemaArgument> &args) {
    skipSpace();
    if (peek() == ')') return;
    bool kwargOnly = false;
    for (;;) {
      skipSpace();
      if (peek() == '*') {
        if (kwargOnly) fail("'*' given twice");
        ++pos_;
        kwargOnly = true;
      } else {
        SchemaArgument arg;
        arg.type = parseType(arg.alias);
        arg.name = expectIdentifier("an argument name");
        for (const auto &other : args)
          if (other.name == arg.name) fail("duplicate argument name '" + arg.name + "'");
        skipSpace();
        if (peek() == '=') {
          ++pos_;
          arg.defaultValue = parseDefault();
        }
        arg.kwargOnly = kwargOnly;
        arg.isOut = kwargOnly && arg.alias.isWrite;
        args.push_back(std::move(arg));
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      break;
    }
  }

  SchemaArgument parseReturn() {
    SchemaArgument ret;
    ret.type = parseType(ret.alias);
    skipSpace();
    if (isIdentStart(peek())) ret.name = expectIdentifier("a return name");
    return ret;
  }

  void parseReturns(std::vector<SchemaArgument> &rets) {
    skipSpace();
    if (peek() != '(') {
      rets.push_back(parseReturn());
      return;
    }
    ++pos_;
    skipSpace();
    if (peek() == ')') {
      ++pos_;
      return;
    }
    for (;;) {
      rets.push_back(parseReturn());
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      break;
    }
    expect(')');
  }

  std::string_view text_;
  size_t pos_ = 0;
};

std::optional<ScalarType> scalarTypeFromDefaultName(const std::string &n) {
  static const std::pair<const char *, ScalarType> kNames[] = {
      {"uint8", ScalarType::Byte},   {"Byte", ScalarType::Byte},
      {"int8", ScalarType::Char},    {"Char", ScalarType::Char},
      {"short", ScalarType::Short},  {"int16", ScalarType::Short},  {"Short", ScalarType::Short},
      {"int", ScalarType::Int},      {"int32", ScalarType::Int},    {"Int", ScalarType::Int},
      {"long", ScalarType::Long},    {"int64", ScalarType::Long},   {"Long", ScalarType::Long},
      {"half", ScalarType::Half},    {"float16", ScalarType::Half}, {"Half", ScalarType::Half},
      {"float", ScalarType::Float},  {"float32", ScalarType::Float}, {"Float", ScalarType::Float},
      {"double", ScalarType::Double}, {"float64", ScalarType::Double}, {"Double", ScalarType::Double},
      {"bool", ScalarType::Bool},    {"Bool", ScalarType::Bool},
      {"bfloat16", ScalarType::BFloat16}, {"BFloat16", ScalarType::BFloat16},
      {"cfloat", ScalarType::ComplexFloat}, {"complex64", ScalarType::ComplexFloat},
      {"cdouble", ScalarType::ComplexDouble}, {"complex128", ScalarType::ComplexDouble},
  };
  for (const auto &[name, type] : kNames)
    if (n == name) return type;
  return std::nullopt;
}

} // namespace

const char *schemaBaseTypeName(SchemaBaseType t) {
  for (const auto &b : kBaseTypes)
    if (b.type == t) return b.spelling;
  return "?";
}

std::string SchemaType::str() const {
  std::string s = schemaBaseTypeName(base);
  if (elementOptional) s += "?";
  if (isList) {
    s += '[';
    if (fixedSize) s += std::to_string(*fixedSize);
    s += ']';
  }
  if (optional) s += "?";
  return s;
}

std::string SchemaAlias::str() const {
  if (beforeSet.empty()) return "";
  auto join = [](const std::vector<std::string> &set) {
    std::string s;
    for (size_t i = 0; i < set.size(); ++i) s += (i ? "|" : "") + set[i];
    return s;
  };
  std::string s = "(";
  s += join(beforeSet);
  if (!afterSet.empty()) s += " -> " + join(afterSet);
  if (isWrite) s += "!";
  return s + ")";
}

std::string SchemaArgument::str() const {
  // The alias annotation goes after the base type, before list/optional suffixes,
  // except for lists where torch prints it after "[]" (`Tensor(a!)[]` is also valid).
  std::string s = schemaBaseTypeName(type.base) + alias.str();
  if (type.elementOptional) s += "?";
  if (type.isList) {
    s += '[';
    if (type.fixedSize) s += std::to_string(*type.fixedSize);
    s += ']';
  }
  if (type.optional) s += "?";
  if (!name.empty()) s += " " + name;
  if (defaultValue) s += "=" + (defaultValue->kind == SchemaDefault::Kind::String
                                    ? "\"" + defaultValue->text + "\""
                                    : defaultValue->text);
  return s;
}

std::string OpSchema::qualifiedName() const {
  std::string s = (ns.empty() ? std::string("aten") : ns) + "::" + name;
  if (!overload.empty() && overload != "default") s += "." + overload;
  return s;
}

std::string OpSchema::nameWithOverload() const {
  return overload.empty() || overload == "default" ? name : name + "." + overload;
}

std::string OpSchema::str() const {
  std::string s = ns + "::" + nameWithOverload() + "(";
  bool starPrinted = false;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i) s += ", ";
    if (arguments[i].kwargOnly && !starPrinted) {
      s += "*, ";
      starPrinted = true;
    }
    s += arguments[i].str();
  }
  s += ") -> ";
  if (returns.size() == 1 && returns[0].name.empty()) return s + returns[0].str();
  s += "(";
  for (size_t i = 0; i < returns.size(); ++i) s += (i ? ", " : "") + returns[i].str();
  return s + ")";
}

int OpSchema::argumentIndex(std::string_view argName) const {
  for (size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i].name == argName) return static_cast<int>(i);
  return -1;
}

const SchemaArgument *OpSchema::argument(std::string_view argName) const {
  int i = argumentIndex(argName);
  return i < 0 ? nullptr : &arguments[static_cast<size_t>(i)];
}

bool OpSchema::isOutVariant() const {
  for (const auto &a : arguments)
    if (a.isOut) return true;
  return false;
}

std::vector<const SchemaArgument *> OpSchema::outArguments() const {
  std::vector<const SchemaArgument *> out;
  for (const auto &a : arguments)
    if (a.isOut) out.push_back(&a);
  return out;
}

bool OpSchema::isInplace() const {
  // torchgen's definition: the base name ends with '_' (add_, copy_, resize_).
  // Mutable functional ops such as _native_batch_norm_legit are not in-place.
  return !name.empty() && name.back() == '_' && !(name.size() > 1 && name[name.size() - 2] == '_');
}

bool OpSchema::isMutable() const {
  for (const auto &a : arguments)
    if (a.alias.isWrite) return true;
  return false;
}

bool OpSchema::isView() const {
  return !arguments.empty() && !arguments[0].alias.empty() && !arguments[0].alias.isWrite;
}

size_t OpSchema::numTensorReturns() const {
  size_t n = 0;
  for (const auto &r : returns)
    if (r.type.base == SchemaBaseType::Tensor) ++n;
  return n;
}

OpSchema parseSchema(std::string_view text, std::string_view defaultNamespace) {
  return SchemaParser(text).parseSchema(defaultNamespace);
}

SchemaType parseSchemaType(std::string_view text) { return SchemaParser(text).parseTypeOnly(); }

Argument defaultToArgument(const SchemaArgument &arg) {
  if (!arg.defaultValue) throw Error("argument '" + arg.name + "' has no default value");
  const SchemaDefault &d = *arg.defaultValue;
  const SchemaType &t = arg.type;
  auto bad = [&]() -> Error {
    return Error("default '" + d.text + "' of argument '" + arg.name + "' does not fit its type " +
                 t.str());
  };
  auto isFloatBase = [&] {
    return t.base == SchemaBaseType::Float || t.base == SchemaBaseType::SymFloat;
  };
  auto listLength = [&]() -> size_t { return t.fixedSize ? size_t(*t.fixedSize) : 1; };

  switch (d.kind) {
  case SchemaDefault::Kind::None:
    if (!t.optional && t.base != SchemaBaseType::Tensor) throw bad();
    return Argument::none();
  case SchemaDefault::Kind::Bool:
    if (t.base == SchemaBaseType::Bool && t.isList) {
      Argument a;
      a.kind = ArgKind::Bools;
      a.ints.assign(listLength(), d.intValue);
      return a;
    }
    if (t.base != SchemaBaseType::Bool && t.base != SchemaBaseType::SymBool &&
        t.base != SchemaBaseType::Scalar)
      throw bad();
    return Argument::boolean(d.intValue != 0);
  case SchemaDefault::Kind::Int:
    if (t.isList) {
      // `int[2] padding=0` broadcasts the scalar to the fixed length.
      if (isFloatBase()) {
        Argument a;
        a.kind = ArgKind::Floats;
        a.mutableFloats().assign(listLength(), double(d.intValue));
        return a;
      }
      if (t.base != SchemaBaseType::Int && t.base != SchemaBaseType::SymInt) throw bad();
      return Argument::ints_(std::vector<int64_t>(listLength(), d.intValue));
    }
    if (isFloatBase()) return Argument::real(double(d.intValue));
    if (t.base == SchemaBaseType::Bool) return Argument::boolean(d.intValue != 0);
    if (t.base == SchemaBaseType::Int || t.base == SchemaBaseType::SymInt ||
        t.base == SchemaBaseType::Scalar)
      return Argument::integer(d.intValue);
    if (t.base == SchemaBaseType::ScalarType) return Argument::scalarType(ScalarType(d.intValue));
    throw bad();
  case SchemaDefault::Kind::Float:
    if (t.isList && isFloatBase()) {
      Argument a;
      a.kind = ArgKind::Floats;
      a.mutableFloats().assign(listLength(), d.floatValue);
      return a;
    }
    if (t.isList || !(isFloatBase() || t.base == SchemaBaseType::Scalar)) throw bad();
    return Argument::real(d.floatValue);
  case SchemaDefault::Kind::String:
    if (t.base != SchemaBaseType::Str) throw bad();
    return Argument::string(d.text);
  case SchemaDefault::Kind::IntList:
    if (!t.isList) throw bad();
    if (isFloatBase()) {
      Argument a;
      a.kind = ArgKind::Floats;
      for (int64_t v : d.ints) a.mutableFloats().push_back(double(v));
      return a;
    }
    if (t.base == SchemaBaseType::Bool) {
      if (!d.ints.empty()) throw bad();
      Argument a;
      a.kind = ArgKind::Bools;
      return a;
    }
    if (t.base == SchemaBaseType::Tensor) {
      if (!d.ints.empty()) throw bad();
      return Argument::tensors({});
    }
    if (t.base != SchemaBaseType::Int && t.base != SchemaBaseType::SymInt) throw bad();
    return Argument::ints_(d.ints);
  case SchemaDefault::Kind::FloatList: {
    if (!t.isList || !isFloatBase()) throw bad();
    Argument a;
    a.kind = ArgKind::Floats;
    a.mutableFloats() = d.floats;
    return a;
  }
  case SchemaDefault::Kind::BoolList: {
    if (!t.isList || t.base != SchemaBaseType::Bool) throw bad();
    Argument a;
    a.kind = ArgKind::Bools;
    a.ints = d.ints;
    return a;
  }
  case SchemaDefault::Kind::Identifier:
    switch (t.base) {
    case SchemaBaseType::ScalarType:
      if (auto st = scalarTypeFromDefaultName(d.text)) return Argument::scalarType(*st);
      throw bad();
    case SchemaBaseType::MemoryFormat: {
      Argument a;
      a.kind = ArgKind::MemoryFormat;
      if (d.text == "contiguous_format") a.intValue = kMemoryFormatContiguous;
      else if (d.text == "channels_last") a.intValue = kMemoryFormatChannelsLast;
      else if (d.text == "channels_last_3d") a.intValue = kMemoryFormatChannelsLast3d;
      else if (d.text == "preserve_format") a.intValue = kMemoryFormatPreserve;
      else throw bad();
      return a;
    }
    case SchemaBaseType::Layout: {
      if (d.text != "strided") throw bad();
      Argument a;
      a.kind = ArgKind::Layout;
      a.intValue = kLayoutStrided;
      return a;
    }
    case SchemaBaseType::Int:
      // at::Reduction, spelled by name in loss schemas (`int reduction=Mean`).
      if (d.text == "Mean") return Argument::integer(1);
      if (d.text == "Sum") return Argument::integer(2);
      throw bad();
    default:
      throw bad();
    }
  }
  throw bad();
}

} // namespace exir
