//===- Edge/OptionalTensorLists.cpp - Tensor?[] arguments as optional lists ===//
//
// torch.export may write a `Tensor?[]` argument whose elements are all present
// (index.Tensor's indices) as a plain tensor list. The runtime's kernels read
// such an argument as an OptionalTensorList and refuse a TensorList, so the
// argument takes the type its schema gives it.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Ops/OperatorTable.h"

namespace exir::edge {

void optionalTensorLists(Program &program) {
  const OperatorTable &table = OperatorTable::builtin();
  TargetCache targets;
  for (auto &[name, method] : program.methods)
    for (Node &node : method.program.graph.nodes) {
      bool lists = false; // most nodes have no tensor list: no target to look at
      for (const auto &in : node.inputs) lists |= in.arg.kind == ArgKind::Tensors;
      if (!lists) continue;
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten) continue;
      const OpSchema *schema = nullptr;
      for (auto &in : node.inputs) {
        if (in.arg.kind != ArgKind::Tensors) continue;
        if (!schema) schema = table.lookup(t.qualifiedName());
        if (!schema) break;
        const SchemaArgument *a = schema->argument(in.name);
        if (a && a->type.base == SchemaBaseType::Tensor && a->type.isList && a->type.elementOptional)
          in.arg.kind = ArgKind::OptionalTensors;
      }
    }
}

} // namespace exir::edge
