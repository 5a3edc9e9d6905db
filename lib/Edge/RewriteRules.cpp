//===- Edge/RewriteRules.cpp - user op-replacement rules (--rewrite) ------===//
//
// Passes as data instead of Python (format: lib/Edge/REWRITE_RULES.md):
//   - replace: aten::relu          # swap the op, keep the arguments
//     with: aten::sigmoid
//   - match: aten::add.Tensor      # a condition and a small graph, in the
//     when: $alpha == 2             # decompositions.yaml language
//     steps: [...]
// A swap must leave arguments the new op has (else the error says which one).
// Verification, including the dtype rules, runs again afterwards.
//
//===----------------------------------------------------------------------===//
#include "Edge/DecompositionRules.h"
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace exir::edge {

namespace {
struct Rule {
  OpTarget from, to;
  int line;
};

OpTarget parseQualified(const std::string &text, const std::string &file, int line) {
  // "aten::relu" or "aten::add.Tensor"
  auto sep = text.find("::");
  if (sep == std::string::npos)
    throw Error("expected an operator like 'aten::relu' or 'aten::add.Tensor', got '" + text + "'", file,
                "line " + std::to_string(line));
  OpTarget t;
  t.dialect = TargetDialect::Edge;
  t.ns = text.substr(0, sep);
  std::string rest = text.substr(sep + 2);
  auto dot = rest.find('.');
  t.name = rest.substr(0, dot);
  t.overload = dot == std::string::npos ? "default" : rest.substr(dot + 1);
  return t;
}

std::string lineOf(const YAML::Node &node) { return "line " + std::to_string(node.Mark().line + 1); }

/// The `replace:` entries of a rule file; `match:` entries are graph rules
/// (DecompositionRules::parseRewriteRules). Every shape error names the line.
std::vector<Rule> loadRules(const std::string &text, const std::string &path) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException &e) {
    throw Error("YAML syntax error: " + e.msg, path, "line " + std::to_string(e.mark.line + 1));
  }
  if (!root.IsSequence())
    throw Error("expected a list of rules (- replace: OP, with: OP, or - match: OP, steps: [...])", path,
                root.IsDefined() && !root.IsNull() ? lineOf(root) : "line 1");
  std::vector<Rule> rules;
  for (const auto &entry : root) {
    int line = entry.Mark().line + 1;
    std::string where = "line " + std::to_string(line);
    if (!entry.IsMap()) throw Error("a rule is a mapping (- replace: OP, with: OP, or - match: OP, ...)", path, where);
    if (entry["match"]) {
      if (entry["replace"] || entry["with"])
        throw Error("a rule has either 'replace'/'with' (swap the op) or 'match'/'steps' (a small graph), not both",
                    path, where);
      continue;
    }
    for (const auto &kv : entry) {
      std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
      if (key != "replace" && key != "with" && key != "doc")
        throw Error("unknown key '" + key + "' in a replace rule (replace, with, doc; conditions and several nodes: "
                    "match, when, steps)",
                    path, lineOf(kv.first));
    }
    if (!entry["replace"] || !entry["with"])
      throw Error("each rule needs 'replace' and 'with' keys (or 'match' and 'steps')", path, where);
    for (const char *key : {"replace", "with"})
      if (!entry[key].IsScalar())
        throw Error(std::string("'") + key + "' must be an operator name like aten::relu or aten::add.Tensor", path,
                    lineOf(entry[key]));
    Rule r{parseQualified(entry["replace"].Scalar(), path, line), parseQualified(entry["with"].Scalar(), path, line),
           line};
    if (!isKnownOp(r.to.qualifiedName()))
      throw Error("rule replaces with unknown operator " + r.to.qualifiedName(), path, where);
    rules.push_back(r);
  }
  return rules;
}

/// Graph rules are written in ATen spelling, as decompositions are: the edge
/// program's ops are spelled that way while they run, then renamed back.
void applyGraphRules(Program &program, const DecompositionRules &graphRules, const std::string &rulesPath) {
  auto toAten = [](Graph &graph, const std::string &) {
    for (Node &node : graph.nodes) {
      OpTarget t = targetOf(node);
      if (t.dialect == TargetDialect::Edge) node.target = atenTarget(t.ns, t.name, t.overload);
    }
  };
  for (auto &[name, method] : program.methods) {
    toAten(method.program.graph, "");
    forEachSubgraph(method.program.graph, toAten);
  }
  try {
    decomposeWithRules(program, graphRules);
  } catch (Error &e) {
    e.withFile(rulesPath); // the message names the rule's line and the node
    throw;
  }
  // What to_edge does to the ops the steps call: scalars in Tensor positions
  // become constant tensors, views become _copy ops, then the edge namespace.
  replaceViewOps(program);
  scalarToTensor(program);
  toEdgeOps(program);
  generateDebugHandles(program);
}
} // namespace

void applyRewriteRules(Program &program, const std::string &rulesPath) {
  std::string text;
  try {
    text = readFileOrStdin(rulesPath);
  } catch (Error &e) {
    throw Error("cannot read the rewrite rules: " + e.message(), rulesPath);
  }
  std::vector<Rule> rules = loadRules(text, rulesPath);
  DecompositionRules graphRules;
  try {
    graphRules = DecompositionRules::parseRewriteRules(text, rulesPath);
  } catch (Error &e) {
    e.withFile(rulesPath); // expression errors know the line, not the file
    throw;
  }
  for (auto &[methodName, method] : program.methods)
    for (size_t i = 0; i < method.program.graph.nodes.size(); ++i) {
      Node &node = method.program.graph.nodes[i];
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Edge) continue;
      for (const Rule &r : rules) {
        if (t.ns != r.from.ns || t.name != r.from.name || t.overload != r.from.overload) continue;
        std::vector<std::string> params = argumentNames(r.to.qualifiedName());
        for (const auto &in : node.inputs)
          if (std::find(params.begin(), params.end(), in.name) == params.end())
            throw Error("rewrite rule (line " + std::to_string(r.line) + ") produced an invalid graph: " +
                            r.to.qualifiedName() + " has no argument '" + in.name + "'",
                        rulesPath,
                        "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                            node.displayName() + ")");
        for (const auto &required : requiredArgumentNames(r.to.qualifiedName()))
          if (!node.input(required))
            throw Error("rewrite rule (line " + std::to_string(r.line) + ") produced an invalid graph: " +
                            r.to.qualifiedName() + " needs argument '" + required + "'",
                        rulesPath,
                        "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                            node.displayName() + ")");
        node.target = edgeTarget(r.to.ns, r.to.name, r.to.overload);
        break;
      }
    }
  if (graphRules.size() > 0) applyGraphRules(program, graphRules, rulesPath);
  // Node names follow the new op, as the Python pass's re-trace names them.
  renameEdgeNodes(program);
}

} // namespace exir::edge
