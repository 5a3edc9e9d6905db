//===- Plan/ViewsToAliases.cpp - static view_copy -> free memory.view -----===//
//
// A view_copy whose input and result are not graph
// inputs or outputs needs no copy and no memory: it becomes
// executorch.exir.memory.view, which aliases its base (the planner gives it
// the base's storage and the emitter emits no instruction for it), as
// upstream's ReplaceViewCopyWithViewPass does. A view with symbolic sizes
// becomes a memory.view too; the emitter turns it into an et_view KernelCall
// that sets the view's sizes at run time.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"

#include <unordered_set>

namespace exir::plan {

namespace {
void aliasViews(Graph &g) {
  std::unordered_set<std::string> boundary;
  for (const auto &list : {&g.inputs, &g.outputs})
    for (const auto &a : *list) {
      std::vector<std::string> names;
      a.collectTensorNames(names);
      boundary.insert(names.begin(), names.end());
    }
  for (Node &node : g.nodes) {
    // Only a view_copy qualifies: the text says so without parsing (which builds strings).
    if (node.target.find("view_copy") == std::string::npos) continue;
    OpTarget t = parseTarget(node.target);
    if (t.dialect != TargetDialect::Edge || t.ns != "aten" || t.name != "view_copy" || t.overload != "default")
      continue;
    if (node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::Tensor || node.outputs.size() != 1) continue;
    const std::string &base = node.inputs[0].arg.name;
    const std::string &result = node.outputs[0].name;
    const TensorMeta *baseMeta = g.tensorValues.find(base);
    const TensorMeta *meta = g.tensorValues.find(result);
    if (!baseMeta || !meta) continue;
    if (boundary.count(base) || boundary.count(result)) continue;
    node.target = kViewTarget;
  }
}

} // namespace

void viewsToAliases(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    aliasViews(method.program.graph);
    forEachSubgraph(method.program.graph, [](Graph &g, const std::string &) { aliasViews(g); });
  }
}

} // namespace exir::plan
