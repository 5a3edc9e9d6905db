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

namespace exir::edge {

void checkAtenDialect(Program &program, const std::vector<std::string> &allowNonCore) {
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    std::vector<std::string> allowedUsed;
    for (size_t i = 0; i < ep.graph.nodes.size(); ++i) {
      const Node &node = ep.graph.nodes[i];
      OpTarget t = targetOf(node);
      std::string where = "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                          node.displayName() + ")";
      if (t.dialect == TargetDialect::Other)
        throw Error("unknown call target '" + node.target + "'", {}, where);
      if (t.dialect != TargetDialect::Aten || t.ns == "higher_order") continue;
      // Sym ops and runtime asserts are exempt, as upstream's EXIRATenDialectVerifier exempts them.
      if (staysAtenInEdge(t)) continue;
      std::string qname = t.qualifiedName();
      if (!irValidityChecks() && t.ns == "aten" && !(isKnownOp(qname) && isCoreOp(qname))) {
        allowedUsed.push_back(qname); // --no-verify: kept, as if --allow-non-core named it
        continue;
      }
      if (t.ns != "aten") {
        // Custom namespaces (quantized_decomposed, dim_order_ops, user libraries) are allowed as
        // registered custom ops; the ones our table knows are checked later for dtypes.
        continue;
      }
      if (!isKnownOp(qname)) {
        if (std::find(allowNonCore.begin(), allowNonCore.end(), qname) != allowNonCore.end()) {
          allowedUsed.push_back(qname);
          continue;
        }
        std::string frame = userFrame(node);
        throw Error("operator " + qname + " is unknown to the operator table" +
                        (frame.empty() ? "" : " (at " + frame + ")") +
                        "; hint: pass --allow-non-core " + qname + " to keep it as it is",
                    {}, where);
      }
      if (isCoreOp(qname)) continue;
      if (std::find(allowNonCore.begin(), allowNonCore.end(), qname) != allowNonCore.end()) {
        allowedUsed.push_back(qname);
        continue;
      }
      std::string frame = userFrame(node);
      throw Error("operator " + qname + " is not core ATen and has no decomposition" +
                      (frame.empty() ? "" : " (at " + frame + ")") +
                      "; hint: decompose it before export, or pass --allow-non-core " + qname +
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
