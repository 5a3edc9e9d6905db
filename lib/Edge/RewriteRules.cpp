//===- Edge/RewriteRules.cpp - user op-replacement rules (--rewrite) ------===//
//
// The seed's ConvertReluToSigmoid pass as data instead of Python:
//   - replace: aten::relu
//     with: aten::sigmoid
// Each rule swaps the target of every matching edge node and keeps its
// arguments, which must all exist in the new op's schema (else the rule made an
// invalid graph and the error says which argument). Verification, including
// the dtype rules, runs again afterwards.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

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

std::vector<Rule> loadRules(const std::string &path) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::BadFile &) {
    throw Error("cannot open rewrite rules file", path);
  } catch (const YAML::ParserException &e) {
    throw Error("YAML syntax error: " + e.msg, path, "line " + std::to_string(e.mark.line + 1));
  }
  if (!root.IsSequence()) throw Error("expected a list of rules (- replace: ..., with: ...)", path, "line 1");
  std::vector<Rule> rules;
  for (const auto &entry : root) {
    int line = entry.Mark().line + 1;
    if (!entry.IsMap() || !entry["replace"] || !entry["with"])
      throw Error("each rule needs 'replace' and 'with' keys", path, "line " + std::to_string(line));
    if (!entry["replace"].IsScalar() || !entry["with"].IsScalar())
      throw Error("'replace' and 'with' take an operator name like 'aten::relu'", path,
                  "line " + std::to_string(line));
    Rule r{parseQualified(entry["replace"].as<std::string>(), path, line),
           parseQualified(entry["with"].as<std::string>(), path, line), line};
    if (!isKnownOp(r.to.qualifiedName()))
      throw Error("rule replaces with unknown operator " + r.to.qualifiedName(), path, "line " + std::to_string(line));
    rules.push_back(r);
  }
  return rules;
}
} // namespace

void applyRewriteRules(Program &program, const std::string &rulesPath) {
  std::vector<Rule> rules = loadRules(rulesPath);
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
  // Node names follow the new op, as the Python pass's re-trace names them.
  renameEdgeNodes(program);
}

} // namespace exir::edge
