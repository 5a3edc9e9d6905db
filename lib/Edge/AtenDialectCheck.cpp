//===- Edge/AtenDialectCheck.cpp - only core ATen after decomposition -----===//
//
// After the decompositions every aten op must be core ATen (or a view_copy op,
// a sym op, a higher-order op, or a registered custom namespace such as
// quantized_decomposed). An op that is left fails with the node, the user's
// source line from the stack trace, and a hint: a decomposition we lack, or the
// --allow-non-core escape hatch (which the output then records).
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

#include <algorithm>
#include <unordered_map>

namespace exir::edge {

namespace {
/// What the check decides for one target string: the same for every node calling it.
struct Verdict {
  enum Kind { Allowed, AllowedNonCore, UnknownTarget, UnknownOp, NotCore } kind = Allowed;
  std::string qname; // AllowedNonCore / UnknownOp / NotCore
};

Verdict judge(const std::string &target, const std::vector<std::string> &allowNonCore) {
  OpTarget t = parseTarget(target);
  if (t.dialect == TargetDialect::Other) return {Verdict::UnknownTarget, {}};
  if (t.dialect != TargetDialect::Aten || t.ns == "higher_order") return {};
  // Sym ops and runtime asserts are exempt, as upstream's EXIRATenDialectVerifier exempts them.
  if (staysAtenInEdge(t)) return {};
  std::string qname = t.qualifiedName();
  auto allowed = [&] { return std::find(allowNonCore.begin(), allowNonCore.end(), qname) != allowNonCore.end(); };
  if (!irValidityChecks() && t.ns == "aten" && !(isKnownOp(qname) && isCoreOp(qname)))
    return {Verdict::AllowedNonCore, qname}; // --no-verify: kept, as if --allow-non-core named it
  // Custom namespaces (quantized_decomposed, dim_order_ops, user libraries) are allowed as
  // registered custom ops; the ones our table knows are checked later for dtypes.
  if (t.ns != "aten") return {};
  if (!isKnownOp(qname)) return {allowed() ? Verdict::AllowedNonCore : Verdict::UnknownOp, qname};
  if (isCoreOp(qname)) return {};
  return {allowed() ? Verdict::AllowedNonCore : Verdict::NotCore, qname};
}
} // namespace

bool needsAtenDialectCheck(const std::string &target, const OpTarget &) {
  // Allowed is the one verdict that neither throws nor records metadata; it
  // does not depend on --allow-non-core.
  return judge(target, {}).kind != Verdict::Allowed;
}

void checkAtenDialect(Program &program, const std::vector<std::string> &allowNonCore) {
  // Judged once per distinct target string: a graph has many nodes and few targets.
  StringMap<Verdict> verdicts;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    std::vector<std::string> allowedUsed;
    for (size_t i = 0; i < ep.graph.nodes.size(); ++i) {
      const Node &node = ep.graph.nodes[i];
      auto [slot, unseen] = verdicts.try_emplace(node.target);
      if (unseen) slot->second = judge(node.target, allowNonCore);
      const Verdict &v = slot->second;
      if (v.kind == Verdict::Allowed) continue;
      if (v.kind == Verdict::AllowedNonCore) {
        allowedUsed.push_back(v.qname);
        continue;
      }
      std::string where = "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                          node.displayName() + ")";
      if (v.kind == Verdict::UnknownTarget) throw Error("unknown call target '" + node.target + "'", {}, where);
      std::string frame = userFrame(node);
      if (v.kind == Verdict::UnknownOp)
        throw Error("operator " + v.qname + " is unknown to the operator table" +
                        (frame.empty() ? "" : " (at " + frame + ")") +
                        "; hint: pass --allow-non-core " + v.qname + " to keep it as it is",
                    {}, where);
      throw Error("operator " + v.qname + " is not core ATen and has no decomposition" +
                      (frame.empty() ? "" : " (at " + frame + ")") +
                      "; hint: decompose it before export, or pass --allow-non-core " + v.qname +
                      " if your runtime has a kernel for it",
                  {}, where);
    }
    if (!allowedUsed.empty()) {
      std::sort(allowedUsed.begin(), allowedUsed.end());
      allowedUsed.erase(std::unique(allowedUsed.begin(), allowedUsed.end()), allowedUsed.end());
      std::string list;
      for (const auto &q : allowedUsed) list += (list.empty() ? "" : ",") + q;
      ep.metadata.set("exir_allowed_non_core", list);
    }
  }
}

} // namespace exir::edge
