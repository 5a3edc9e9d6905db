//===- IR/GraphPrinter.cpp - Human-readable dumps -------------------------===//
//
// Prints programs the way torch prints an ExportedProgram, so a user can hold
// our output next to the Python pipeline's: `name: "f32[2, 2]" = target(args)`
// lines grouped under their stack-trace comment, FX's `;  x = None` last-use
// notes, the graph signature and range constraints. Planned programs add a
// `# mem=<id>+<offset>` note per planned value; delegates are listed after the
// methods.
//
//===----------------------------------------------------------------------===//
#include "IR/GraphPrinter.h"
#include "Support/Error.h"
#include "Support/Hash.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <map>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace exir {

namespace {

/// Python repr of a float: shortest round-trip form, always with a '.' or exponent.
std::string pyFloat(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

std::string pyString(const std::string &s) {
  std::string out = "'";
  static const char *digits = "0123456789abcdef";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\'' || c == '\\') out += '\\';
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (u < 0x20 || u == 0x7f) out += std::string("\\x") + digits[u >> 4] + digits[u & 15];
    else out += c;
  }
  return out + "'";
}

/// Python repr of a bytes object: b'...'.
std::string pyBytes(const std::string &bytes) {
  static const char *digits = "0123456789abcdef";
  std::string out = "b'";
  for (char ch : bytes) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '\'') out += std::string("\\") + char(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c >= 0x20 && c < 0x7f) out += char(c);
    else out += std::string("\\x") + digits[c >> 4] + digits[c & 15];
  }
  return out + "'";
}

/// A sympy srepr (Mul(Integer(4), Symbol('s0', integer=True, positive=True)))
/// printed the way sympy's str() prints it and torch shows it ("4*s0").
/// Unknown functions keep their name: Max(s0, 2). Returns false on text that
/// is not an srepr (plain str() spellings are shown as they are).
class SreprPrinter {
public:
  explicit SreprPrinter(const std::string &text) : text_(text) {}
  bool print(std::string &out) {
    bool ok = expr(out) && pos_ == text_.size();
    return ok;
  }

private:
  bool expr(std::string &out) {
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    std::string name = text_.substr(start, pos_ - start);
    if (name.empty() || pos_ >= text_.size() || text_[pos_] != '(') return false;
    ++pos_;
    if (name == "Symbol") {
      if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
      char quote = text_[pos_++];
      size_t end = text_.find(quote, pos_);
      size_t close = end == std::string::npos ? end : text_.find(')', end);
      if (close == std::string::npos) return false;
      out = text_.substr(pos_, end - pos_);
      pos_ = close + 1;
      return true;
    }
    if (name == "Integer") {
      size_t close = text_.find(')', pos_);
      if (close == std::string::npos) return false;
      out = text_.substr(pos_, close - pos_);
      pos_ = close + 1;
      return true;
    }
    std::vector<std::string> args, kinds;
    for (;;) {
      while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
      std::string arg;
      size_t argStart = pos_;
      if (!expr(arg)) return false;
      args.push_back(arg);
      kinds.push_back(text_.substr(argStart, text_.find('(', argStart) - argStart));
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ >= text_.size() || text_[pos_] != ')') return false;
      ++pos_;
      break;
    }
    auto join = [&](const std::string &sep, bool parenthesizeSums) {
      std::string r;
      for (size_t i = 0; i < args.size(); ++i) {
        if (i) r += sep;
        r += parenthesizeSums && kinds[i] == "Add" ? "(" + args[i] + ")" : args[i];
      }
      return r;
    };
    static const std::map<std::string, std::string> kRelations = {
        {"GreaterThan", " >= "}, {"LessThan", " <= "}, {"StrictGreaterThan", " > "},
        {"StrictLessThan", " < "}, {"Equality", " == "}, {"Unequality", " != "}};
    if (name == "Mul") out = join("*", true);
    else if (name == "Add") {
      // sympy prints the constant term last: s0 + 1.
      std::stable_partition(args.begin(), args.end(), [](const std::string &a) {
        return a.find_first_not_of("-0123456789") != std::string::npos;
      });
      out = join(" + ", false);
    } else if (name == "FloorDiv" && args.size() == 2) out = "(" + args[0] + "//" + args[1] + ")";
    else if (kRelations.count(name) && args.size() == 2) out = args[0] + kRelations.at(name) + args[1];
    else out = name + "(" + join(", ", false) + ")";
    return true;
  }

  const std::string &text_;
  size_t pos_ = 0;
};

std::string exprText(const std::string &expr) {
  std::string out;
  if (SreprPrinter(expr).print(out)) return out;
  return expr;
}

std::string symIntText(const SymInt &s) { return s.isExpr ? exprText(s.expr()) : std::to_string(s.value); }

std::string tensorAnnotation(const TensorMeta &meta) {
  std::string out = std::string(shortName(meta.dtype)) + "[";
  for (size_t i = 0; i < meta.sizes.size(); ++i) {
    if (i) out += ", ";
    out += symIntText(meta.sizes[i]);
  }
  return out + "]";
}

const char *memoryFormatName(int64_t v) {
  switch (v) {
  case kMemoryFormatContiguous: return "torch.contiguous_format";
  case kMemoryFormatChannelsLast: return "torch.channels_last";
  case kMemoryFormatChannelsLast3d: return "torch.channels_last_3d";
  case kMemoryFormatPreserve: return "torch.preserve_format";
  default: return "torch.unknown_format";
  }
}

std::string symArgText(const SymArg &s, ArgKind kind) {
  if (s.isName) return s.name;
  if (kind == ArgKind::SymBool || kind == ArgKind::SymBools) return s.intValue ? "True" : "False";
  if (kind == ArgKind::SymFloat || kind == ArgKind::SymFloats) return pyFloat(s.floatValue);
  return std::to_string(s.intValue);
}

template <typename List, typename F> std::string listText(const List &items, F f) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += f(items[i]);
  }
  return out + "]";
}

std::string argumentText(const Argument &a) {
  switch (a.kind) {
  case ArgKind::None: return "None";
  // Value names come from the input file: one node stays one line.
  case ArgKind::Tensor: return escapeControlCharacters(a.name);
  case ArgKind::OptionalTensor: return a.name.empty() ? "None" : escapeControlCharacters(a.name);
  case ArgKind::Tensors: return listText(a.names, [](const std::string &n) { return escapeControlCharacters(n); });
  case ArgKind::OptionalTensors:
    return listText(a.names,
                    [](const std::string &n) { return n.empty() ? std::string("None") : escapeControlCharacters(n); });
  case ArgKind::Int: return std::to_string(a.intValue);
  case ArgKind::Ints: return listText(a.ints, [](int64_t v) { return std::to_string(v); });
  case ArgKind::Float: return pyFloat(a.floatValue);
  case ArgKind::Floats: return listText(a.floats(), pyFloat);
  case ArgKind::String: return pyString(a.name);
  case ArgKind::Strings: return listText(a.names, pyString);
  case ArgKind::Bool: return a.intValue ? "True" : "False";
  case ArgKind::Bools: return listText(a.ints, [](int64_t v) { return std::string(v ? "True" : "False"); });
  case ArgKind::SymInt: case ArgKind::SymBool: case ArgKind::SymFloat:
    return a.syms.empty() ? "?" : symArgText(a.syms[0], a.kind);
  case ArgKind::SymInts: case ArgKind::SymBools: case ArgKind::SymFloats:
    return listText(a.syms, [&](const SymArg &s) { return symArgText(s, a.kind); });
  case ArgKind::ScalarType: return torchName(ScalarType(a.intValue));
  case ArgKind::MemoryFormat: return memoryFormatName(a.intValue);
  case ArgKind::Layout: return a.intValue == kLayoutStrided ? "torch.strided" : "torch.layout(" + std::to_string(a.intValue) + ")";
  case ArgKind::Device:
    return "device(type=" + pyString(a.name) + (a.deviceIndex() ? ", index=" + std::to_string(*a.deviceIndex()) : "") + ")";
  case ArgKind::Graph: return a.graphName();
  case ArgKind::CustomObj: return a.name;
  case ArgKind::Operator: return a.name;
  case ArgKind::Complex: return "(" + pyFloat(a.floatValue) + "+" + pyFloat(a.imagValue()) + "j)";
  case ArgKind::IntLists:
    return listText(a.intLists(), [](const std::vector<int64_t> &l) {
      return listText(l, [](int64_t v) { return std::to_string(v); });
    });
  case ArgKind::NestedTensors:
    return listText(a.nestedTensors(), [](const std::vector<std::string> &l) {
      return listText(l, [](const std::string &n) { return n; });
    });
  case ArgKind::StringToArgument: {
    std::string out = "{";
    for (size_t i = 0; i < a.mapping().size(); ++i) {
      if (i) out += ", ";
      out += pyString(a.mapping()[i].first) + ": " + argumentText(a.mapping()[i].second);
    }
    return out + "}";
  }
  }
  return "?";
}

/// torch prints edge ops by their Python module path with dots turned into '_'.
std::string targetText(const std::string &target) {
  OpTarget t = parseTarget(target);
  switch (t.dialect) {
  case TargetDialect::Edge:
    return "executorch_exir_dialects_edge__ops_" + t.ns + "_" + t.name + "_" + t.overload;
  case TargetDialect::Backend:
    return "executorch_exir_dialects_backend__ops_" + t.ns + "_" + t.name + "_" + t.overload;
  case TargetDialect::MemoryAlloc: return "executorch_exir_memory_alloc";
  case TargetDialect::MemoryView: return "executorch_exir_memory_view";
  case TargetDialect::MemoryFree: return "executorch_exir_memory_free";
  default: return escapeControlCharacters(target); // one node, one line
  }
}

/// "File: <path>:<line> in <func>, code: <code>" from the last frame of a Python traceback.
std::string stackTraceComment(const std::string &trace) {
  // torch shows the innermost frame of user code: skip frames inside torch itself.
  size_t pos = std::string::npos;
  for (size_t p = trace.find("File \""); p != std::string::npos; p = trace.find("File \"", p + 1)) {
    auto end = trace.find('"', p + 6);
    std::string file = trace.substr(p + 6, end == std::string::npos ? std::string::npos : end - p - 6);
    bool library = file.find("/site-packages/torch/") != std::string::npos ||
                   file.find("/site-packages/executorch/") != std::string::npos;
    if (!library || pos == std::string::npos) pos = p;
  }
  if (pos == std::string::npos) return "";
  auto fileEnd = trace.find('"', pos + 6);
  if (fileEnd == std::string::npos) return "";
  std::string file = trace.substr(pos + 6, fileEnd - pos - 6);
  std::string line, func, code;
  auto linePos = trace.find("line ", fileEnd);
  if (linePos != std::string::npos) {
    auto comma = trace.find(',', linePos);
    line = trace.substr(linePos + 5, comma - linePos - 5);
    auto inPos = trace.find("in ", comma);
    auto nl = trace.find('\n', inPos);
    func = trace.substr(inPos + 3, nl == std::string::npos ? std::string::npos : nl - inPos - 3);
    if (nl != std::string::npos) {
      code = trace.substr(nl + 1);
      auto first = code.find_first_not_of(' ');
      code = first == std::string::npos ? "" : code.substr(first);
      auto end = code.find('\n');
      if (end != std::string::npos) code = code.substr(0, end);
    }
  }
  return "File: " + file + ":" + line + " in " + func + ", code: " + code;
}

int inputKindNumber(InputKind k) {
  switch (k) {
  case InputKind::UserInput: return 1;
  case InputKind::Parameter: return 2;
  case InputKind::Buffer: return 3;
  case InputKind::TensorConstant: return 4;
  case InputKind::CustomObj: return 5;
  case InputKind::Token: return 6;
  case InputKind::ConstantInput: return 7;
  }
  return 0;
}
const char *inputKindUpper(InputKind k) {
  switch (k) {
  case InputKind::UserInput: return "USER_INPUT";
  case InputKind::Parameter: return "PARAMETER";
  case InputKind::Buffer: return "BUFFER";
  case InputKind::TensorConstant: return "CONSTANT_TENSOR";
  case InputKind::CustomObj: return "CUSTOM_OBJ";
  case InputKind::Token: return "TOKEN";
  case InputKind::ConstantInput: return "CONSTANT_INPUT";
  }
  return "?";
}
int outputKindNumber(OutputKind k) {
  switch (k) {
  case OutputKind::UserOutput: return 1;
  case OutputKind::LossOutput: return 2;
  case OutputKind::BufferMutation: return 3;
  case OutputKind::GradientToParameter: return 4;
  case OutputKind::GradientToUserInput: return 5;
  case OutputKind::UserInputMutation: return 6;
  case OutputKind::Token: return 7;
  case OutputKind::ParameterMutation: return 8;
  }
  return 0;
}
const char *outputKindUpper(OutputKind k) {
  switch (k) {
  case OutputKind::UserOutput: return "USER_OUTPUT";
  case OutputKind::LossOutput: return "LOSS_OUTPUT";
  case OutputKind::BufferMutation: return "BUFFER_MUTATION";
  case OutputKind::GradientToParameter: return "GRADIENT_TO_PARAMETER";
  case OutputKind::GradientToUserInput: return "GRADIENT_TO_USER_INPUT";
  case OutputKind::UserInputMutation: return "USER_INPUT_MUTATION";
  case OutputKind::Token: return "TOKEN";
  case OutputKind::ParameterMutation: return "PARAMETER_MUTATION";
  }
  return "?";
}

std::string specArgText(const Argument &a) {
  switch (a.kind) {
  case ArgKind::Tensor: return "TensorArgument(name=" + pyString(a.name) + ")";
  case ArgKind::SymInt: return "SymIntArgument(name=" + pyString(a.syms.empty() ? "" : a.syms[0].name) + ")";
  case ArgKind::CustomObj: return "CustomObjArgument(name=" + pyString(a.name) + ", class_fqn=" + pyString(a.classFqn()) + ")";
  default: return "ConstantArgument(name='', value=" + argumentText(a) + ")";
  }
}

void printSignature(std::ostream &os, const GraphSignature &sig) {
  os << "Graph signature: ExportGraphSignature(input_specs=[";
  for (size_t i = 0; i < sig.inputSpecs.size(); ++i) {
    const auto &s = sig.inputSpecs[i];
    if (i) os << ", ";
    os << "InputSpec(kind=<InputKind." << inputKindUpper(s.kind) << ": " << inputKindNumber(s.kind)
       << ">, arg=" << specArgText(s.arg) << ", target="
       << (s.target.empty() ? "None" : pyString(s.target)) << ", persistent="
       << (s.kind == InputKind::Buffer ? (s.persistent ? "True" : "False") : "None") << ")";
  }
  os << "], output_specs=[";
  for (size_t i = 0; i < sig.outputSpecs.size(); ++i) {
    const auto &s = sig.outputSpecs[i];
    if (i) os << ", ";
    os << "OutputSpec(kind=<OutputKind." << outputKindUpper(s.kind) << ": " << outputKindNumber(s.kind)
       << ">, arg=" << specArgText(s.arg) << ", target=" << (s.target.empty() ? "None" : pyString(s.target))
       << ")";
  }
  os << "])\n";
}

/// executorch_call_delegate as torch prints it: the lowered module is a get_attr
/// (printed bare), a single-tensor result is the call itself, and several
/// results come out through `getitem = call[k]` lines.
void printDelegateCall(std::ostream &os, const Graph &graph, const Node &node, const std::string &indent,
                       std::unordered_map<std::string, size_t> &lastUse, size_t index,
                       const std::unordered_set<std::string> &outputNames, const MemoryPlan *plan) {
  std::vector<std::string> results;
  for (const auto &out : node.outputs) out.collectTensorNames(results);
  auto annotated = [&](const std::string &n) {
    const TensorMeta *meta = graph.tensorValues.find(n);
    return meta ? n + ": \"" + tensorAnnotation(*meta) + "\"" : n;
  };
  auto planNote = [&](const std::string &n) {
    const Allocation *a = plan ? plan->allocations.find(n) : nullptr;
    return a ? "  # " + n + "@mem=" + std::to_string(a->memId) + "+" + std::to_string(a->offset) : std::string();
  };
  bool single = node.isHopSingleTensorReturn.value_or(false) && results.size() == 1;
  std::string callName = single ? results[0] : node.name.value_or("executorch_call_delegate");
  const std::string &module = node.inputs[0].arg.name;
  os << indent << (single ? annotated(callName) : callName) << " = " << escapeControlCharacters(node.target) << "("
     << module;
  std::vector<std::string> dead{module};
  for (size_t k = 1; k < node.inputs.size(); ++k) {
    os << ", " << argumentText(node.inputs[k].arg);
    std::vector<std::string> names;
    node.inputs[k].arg.collectTensorNames(names);
    for (const auto &n : names)
      if (lastUse[n] == index && !outputNames.count(n) && std::find(dead.begin(), dead.end(), n) == dead.end())
        dead.push_back(n);
  }
  os << ");  ";
  for (const auto &n : dead) os << n << " = ";
  os << "None" << (single ? planNote(callName) : "") << "\n";
  if (single) return;
  for (size_t k = 0; k < results.size(); ++k) {
    os << indent << annotated(results[k]) << " = " << callName << "[" << k << "]";
    if (k + 1 == results.size()) os << ";  " << callName << " = None";
    os << planNote(results[k]) << "\n";
  }
}

void printGraphBody(std::ostream &os, const Graph &graph, const std::string &indent,
                    const MemoryPlan *plan, const PrintOptions &opts, const std::string &path = "") {
  // Last use of every value, for FX's "x = y = None" notes.
  std::unordered_map<std::string, size_t> lastUse;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto &in : graph.nodes[i].inputs) {
      std::vector<std::string> names;
      in.arg.collectTensorNames(names);
      for (const auto &n : names) lastUse[n] = i;
    }
  std::unordered_set<std::string> outputNames;
  for (const auto &o : graph.outputs) {
    std::vector<std::string> names;
    o.collectTensorNames(names);
    outputNames.insert(names.begin(), names.end());
  }

  std::string currentTrace = "\x01"; // no group printed yet
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &node = graph.nodes[i];
    if (opts.stackTraces) {
      const SharedString *trace = node.metadata.find("stack_trace");
      std::string comment = trace ? stackTraceComment(trace->str()) : "";
      if (comment != currentTrace) {
        if (currentTrace != "\x01") os << "\n";
        if (comment.empty()) os << indent << "# No stacktrace found for following nodes\n";
        else os << indent << " # " << comment << "\n";
        currentTrace = comment;
      }
    }
    if (node.target == kDelegateTarget && !node.inputs.empty() && node.inputs[0].arg.kind == ArgKind::String) {
      printDelegateCall(os, graph, node, indent, lastUse, i, outputNames, plan);
      continue;
    }
    // Left-hand side: every defined value with its annotation.
    std::vector<std::string> lhs;
    for (const auto &out : node.outputs) {
      std::vector<std::string> names;
      out.collectTensorNames(names);
      if (out.kind == ArgKind::SymInt || out.kind == ArgKind::SymBool || out.kind == ArgKind::SymFloat)
        for (const auto &s : out.syms) names.push_back(s.name);
      for (const auto &n : names) {
        std::string item = n;
        if (const TensorMeta *meta = graph.tensorValues.find(n)) item += ": \"" + tensorAnnotation(*meta) + "\"";
        else if (const SymInt *sym = graph.symIntValues.find(n)) item += ": \"Sym(" + symIntText(*sym) + ")\"";
        else if (const SymBool *b = graph.symBoolValues.find(n))
          item += ": \"Sym(" + (b->isExpr ? exprText(b->expr) : std::string(b->value ? "True" : "False")) + ")\"";
        lhs.push_back(item);
      }
    }
    os << indent;
    for (size_t k = 0; k < lhs.size(); ++k) os << (k ? ", " : "") << escapeControlCharacters(lhs[k]);
    if (lhs.empty()) os << "_";
    os << " = " << targetText(node.target) << "(";
    bool first = true;
    OpTarget parsed = parseTarget(node.target);
    if (parsed.dialect == TargetDialect::MemoryAlloc) {
      // ExecuTorch serde spells the spec "(2, 2);7"; torch prints ((2, 2), torch.float32).
      for (const auto &in : node.inputs) {
        if (!first) os << ", ";
        first = false;
        auto semi = in.arg.name.rfind(';');
        auto dtype = semi == std::string::npos ? std::nullopt
                                                : scalarTypeFromSerialized(std::atoll(in.arg.name.c_str() + semi + 1));
        if (in.arg.kind == ArgKind::String && dtype)
          os << "(" << in.arg.name.substr(0, semi) << ", " << torchName(*dtype) << ")";
        else
          os << argumentText(in.arg);
      }
      first = false;
    }
    for (const auto &in : node.inputs) {
      if (parsed.dialect == TargetDialect::MemoryAlloc) break;
      if (!first) os << ", ";
      first = false;
      bool keyword = in.kind ? *in.kind == ArgumentPassing::Keyword : false;
      if (keyword) os << in.name << " = ";
      os << argumentText(in.arg);
    }
    os << ")";
    // FX deletes values at their last use.
    std::vector<std::string> dead;
    for (const auto &in : node.inputs) {
      std::vector<std::string> names;
      in.arg.collectTensorNames(names);
      for (const auto &n : names)
        if (lastUse[n] == i && !outputNames.count(n) &&
            std::find(dead.begin(), dead.end(), n) == dead.end())
          dead.push_back(n);
    }
    if (!dead.empty()) {
      os << ";  ";
      for (const auto &n : dead) os << escapeControlCharacters(n) << " = ";
      os << "None";
    }
    if (plan) {
      std::vector<std::string> names;
      for (const auto &out : node.outputs) out.collectTensorNames(names);
      std::string notes;
      for (const auto &n : names)
        if (const Allocation *a = plan->allocations.find(scopedValueName(path, n)))
          notes += (notes.empty() ? "" : " ") + n + "@mem=" + std::to_string(a->memId) + "+" + std::to_string(a->offset);
      if (!notes.empty()) os << "  # " << notes;
    }
    os << "\n";
  }
  os << indent << "return (";
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    if (k) os << ", ";
    os << argumentText(graph.outputs[k]);
  }
  os << (graph.outputs.size() == 1 ? ",)" : ")") << "\n";
  // Subgraphs (cond branches) as torch prints submodules: nested classes.
  std::string classIndent = indent.size() >= 4 ? indent.substr(4) : indent;
  for (const Node &node : graph.nodes)
    for (const auto &in : node.inputs) {
      if (in.arg.kind != ArgKind::Graph || !in.arg.graph()) continue;
      const Graph &sub = *in.arg.graph();
      std::string subPath = scopedValueName(path, in.arg.graphName());
      os << "\n" << classIndent << "class " << in.arg.graphName() << "(torch.nn.Module):\n";
      os << classIndent << "    def forward(self";
      for (const auto &a : sub.inputs) {
        std::vector<std::string> names;
        a.collectTensorNames(names);
        for (const auto &n : names) {
          os << ", " << escapeControlCharacters(n);
          if (const TensorMeta *meta = sub.tensorValues.find(n)) os << ": \"" << tensorAnnotation(*meta) << "\"";
        }
      }
      os << "):\n";
      printGraphBody(os, sub, indent + "    ", plan, opts, subPath);
    }
}

} // namespace

static void printMethod(std::ostream &os, const ExportedProgram &ep, const MemoryPlan *plan,
                        const PrintOptions &opts) {
  os << "ExportedProgram:\n";
  os << "    class GraphModule(torch.nn.Module):\n";
  os << "        def forward(self";
  for (const auto &in : ep.graph.inputs) {
    std::vector<std::string> names;
    in.collectTensorNames(names);
    if (in.kind == ArgKind::SymInt && !in.syms.empty()) names.push_back(in.syms[0].name);
    for (const auto &n : names) {
      os << ", " << escapeControlCharacters(n);
      if (const TensorMeta *meta = ep.graph.tensorValues.find(n)) os << ": \"" << tensorAnnotation(*meta) << "\"";
      if (plan)
        if (const Allocation *a = plan->allocations.find(n))
          os << " /* mem=" << a->memId << "+" << a->offset << " */";
    }
  }
  os << "):\n";
  printGraphBody(os, ep.graph, "            ", plan, opts);
  os << "\n";
  printSignature(os, ep.signature);
  os << "Range constraints: {";
  bool first = true;
  for (const auto &[sym, range] : ep.rangeConstraints) {
    if (!first) os << ", ";
    first = false;
    os << exprText(sym) << ": VR[" << (range.minVal ? std::to_string(*range.minVal) : "-int_oo") << ", "
       << (range.maxVal ? std::to_string(*range.maxVal) : "int_oo") << "]";
  }
  os << "}\n";
}

void printExportedProgram(std::ostream &os, const ExportedProgram &ep, const PrintOptions &opts) {
  printMethod(os, ep, nullptr, opts);
}

void printProgram(std::ostream &os, const Program &program, const PrintOptions &opts) {
  os << "Program (stage: " << stageName(program.stage) << ", methods: " << program.methods.size() << ")\n";
  for (const auto &[name, method] : program.methods) {
    os << "\nMethod " << name << ":\n";
    printMethod(os, method.program, method.plan ? &*method.plan : nullptr, opts);
    if (method.plan) {
      const MemoryPlan &plan = *method.plan;
      os << "Memory plan: algorithm=" << plan.algorithm << " alignment=" << plan.alignment;
      for (size_t k = 1; k < plan.bufferSizes.size(); ++k) {
        os << " arena" << k << "=" << plan.bufferSizes[k];
        if (k < plan.lowerBounds.size()) os << " (lower bound " << plan.lowerBounds[k] << ")";
      }
      os << "\n";
    }
  }
  if (!program.constantMethods.empty()) {
    // Upstream's constant_methods: each returns its values, as Python prints them.
    os << "\nConstant methods:\n";
    for (const auto &[name, values] : program.constantMethods) {
      os << "  " << name << "() -> (";
      for (size_t i = 0; i < values.size(); ++i) {
        const ConstantValue &v = values[i];
        os << (i ? ", " : "");
        switch (v.kind) {
        case ConstantValue::Kind::None: os << "None"; break;
        case ConstantValue::Kind::Int: os << v.intValue; break;
        case ConstantValue::Kind::Float: os << pyFloat(v.floatValue); break;
        case ConstantValue::Kind::String: os << pyString(v.stringValue); break;
        case ConstantValue::Kind::Bool: os << (v.intValue ? "True" : "False"); break;
        }
      }
      os << (values.size() == 1 ? ",)" : ")") << "\n";
    }
  }
  if (!program.constants.empty()) {
    os << "\nConstants:\n";
    for (const auto &[fqn, c] : program.constants) {
      TensorMeta meta;
      meta.dtype = c.dtype;
      for (auto s : c.sizes) meta.sizes.push_back(SymInt::of(s));
      os << "  " << fqn << ": " << tensorAnnotation(meta) << " " << c.data.length << " bytes";
      if (c.data.inlineBytes) os << " inline";
      else os << " @ " << c.data.file << "+" << c.data.offset;
      os << "\n";
    }
  }
  if (!program.delegates.empty()) {
    os << "\nDelegates:\n";
    for (const auto &[name, d] : program.delegates) {
      os << "  " << name << ": backend=" << d.backendId << " blob=" << d.processed.length << " bytes";
      if (!d.processed.sha256.empty()) os << " sha256=" << d.processed.sha256;
      else if (d.processed.inlineBytes) os << " sha256=" << sha256Hex(*d.processed.inlineBytes);
      os << " compile_specs=[";
      for (size_t i = 0; i < d.compileSpecs.size(); ++i)
        os << (i ? ", " : "") << d.compileSpecs[i].key << "=" << base64Encode(d.compileSpecs[i].value);
      os << "]\n";
      if (d.processed.inlineBytes && d.processed.inlineBytes->size() <= 1024)
        os << "  processed_bytes: " << pyBytes(*d.processed.inlineBytes) << "\n";
      if (d.original) {
        os << "  original module of " << name << ":\n";
        printMethod(os, *d.original, nullptr, opts);
      }
    }
  }
}

void printDot(std::ostream &os, const Program &program) {
  // A DOT string: quotes and backslashes escaped, each '\n' a centred line break.
  auto quote = [](const std::string &s) {
    std::string out = "\"";
    for (char c : s) {
      if (c == '\n') {
        out += "\\n";
        continue;
      }
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    return out + "\"";
  };
  os << "digraph program {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\"];\n";
  for (const auto &[method, m] : program.methods) {
    const Graph &g = m.program.graph;
    os << "  subgraph " << quote("cluster_" + method) << " {\n    label=" << quote(method) << ";\n";
    std::unordered_map<std::string, std::string> producer;
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      std::vector<std::string> names;
      g.inputs[i].collectTensorNames(names);
      for (const auto &n : names) {
        std::string id = method + "/in/" + n;
        std::string label = n;
        if (const TensorMeta *meta = g.tensorValues.find(n)) label += "\n" + tensorAnnotation(*meta);
        os << "    " << quote(id) << " [shape=ellipse, label=" << quote(label) << "];\n";
        producer[n] = id;
      }
    }
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node &node = g.nodes[i];
      std::string id = method + "/node/" + std::to_string(i);
      OpTarget t = parseTarget(node.target);
      std::string op = t.dialect == TargetDialect::Other ? node.target : t.qualifiedName();
      std::string label = node.displayName() + " = " + op;
      // A delegate call names its lowered module (first argument) and backend.
      if (node.target == kDelegateTarget && !node.inputs.empty()) {
        const std::string &module = node.inputs[0].arg.name;
        label += "\n" + module;
        if (const Delegate *d = program.delegates.find(module)) label += " (" + d->backendId + ")";
      }
      std::vector<std::string> outs;
      for (const auto &o : node.outputs) o.collectTensorNames(outs);
      for (const auto &n : outs) {
        if (const TensorMeta *meta = g.tensorValues.find(n)) label += "\n" + tensorAnnotation(*meta);
        producer[n] = id;
      }
      os << "    " << quote(id) << " [label=" << quote(label) << "];\n";
      for (const auto &in : node.inputs) {
        std::vector<std::string> names;
        in.arg.collectTensorNames(names);
        for (const auto &n : names)
          if (producer.count(n)) os << "    " << quote(producer[n]) << " -> " << quote(id) << ";\n";
      }
    }
    std::string outId = method + "/output";
    os << "    " << quote(outId) << " [shape=ellipse, label=\"output\"];\n";
    for (const auto &o : g.outputs) {
      std::vector<std::string> names;
      o.collectTensorNames(names);
      for (const auto &n : names)
        if (producer.count(n)) os << "    " << quote(producer[n]) << " -> " << quote(outId) << ";\n";
    }
    os << "  }\n";
  }
  os << "}\n";
}

} // namespace exir
