//===- Edge/ToEdgeOps.cpp - rename targets into the edge namespace --------===//
//
// Every ATen or custom-namespace op becomes its edge op
// (torch.ops.aten.add.Tensor -> executorch.exir.dialects.edge.ops.aten.add.Tensor),
// except the ops upstream keeps as they are (sym ops such as sym_size.int and
// the _assert_* / scalar_tensor disallow list) and higher-order ops.
// Single-output nodes are renamed the way torch.fx names edge nodes
// (aten_add_tensor, aten_add_tensor_1, ...), so our graphs print like the
// Python pipeline's.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"

#include <cctype>
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace exir::edge {

namespace {
bool keptAsAten(const OpTarget &t) {
  static const std::set<std::string> kKept = {
      "aten::sym_size.int", "aten::sym_stride.int", "aten::sym_numel", "aten::sym_storage_offset",
      "aten::_local_scalar_dense", "aten::sym_constrain_range", "aten::sym_constrain_range_for_size",
      "aten::_assert_scalar", "aten::_assert_async.msg", "aten::scalar_tensor",
  };
  return t.ns == "higher_order" || kKept.count(t.qualifiedName()) != 0;
}

std::string lower(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
} // namespace

void renameEdgeNodes(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    std::unordered_map<std::string, std::string> renames;
    std::unordered_map<std::string, int> nextSuffix; // per base: every smaller suffix is taken
    std::unordered_set<std::string> taken;
    for (const auto &[name, meta] : ep.graph.tensorValues) taken.insert(name);
    for (Node &node : ep.graph.nodes) {
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Edge) continue;
      if (node.outputs.size() != 1 || node.outputs[0].kind != ArgKind::Tensor) continue;
      std::string base = lower(t.ns + "_" + t.name + "_" + (t.overload.empty() ? "default" : t.overload));
      const std::string &current = node.outputs[0].name;
      if (current == base) continue;
      if (current.rfind(base + "_", 0) == 0 &&
          current.find_first_not_of("0123456789", base.size() + 1) == std::string::npos)
        continue; // already an edge-style name with a numeric suffix
      std::string fresh = base;
      int &suffix = nextSuffix[base];
      if (suffix > 0 || taken.count(fresh))
        for (suffix = std::max(suffix, 1); taken.count(fresh = base + "_" + std::to_string(suffix));) ++suffix;
      taken.insert(fresh);
      // Fresh names are never existing names, so all renames apply at once.
      renames.emplace(current, fresh);
    }
    renameValues(ep, renames);
  }
}

void toEdgeOps(Program &program) {
  for (auto &[methodName, method] : program.methods)
    for (Node &node : method.program.graph.nodes) {
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Aten || keptAsAten(t)) continue;
      node.target = edgeTarget(t.ns, t.name, t.overload);
    }
  renameEdgeNodes(program);
}

} // namespace exir::edge
