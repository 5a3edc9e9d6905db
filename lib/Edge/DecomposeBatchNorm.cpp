//===- Edge/DecomposeBatchNorm.cpp - inference batch_norm forms -----------===//
//
// batch_norm(training=False) and _native_batch_norm_legit_no_training are the
// inference spellings; core ATen keeps _native_batch_norm_legit_no_training,
// whose three outputs (out, save_mean, save_invstd) we name after the original
// result, with the two statistics as unused outputs of shape [0].
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/Passes.h"
#include "Support/Error.h"

namespace exir::edge {

void decomposeBatchNorm(Program &program) {
  TargetCache targets;
  for (auto &[methodName, method] : program.methods)
    rewriteNodes(method.program.graph, [&](Graph &g, Node &node) -> std::optional<std::vector<Node>> {
      const OpTarget &t = targets(node);
      if (t.dialect != TargetDialect::Aten || t.ns != "aten" || t.name != "batch_norm" || t.overload != "default")
        return std::nullopt;
      const Argument *training = findArg(node, "training");
      if (training && training->kind == ArgKind::Bool && training->intValue)
        throw Error("batch_norm with training=True is lowered only with weight, bias and running statistics; "
                    "export the model in eval() mode", {},
                    "node " + node.displayName());
      const std::string result = node.outputs.at(0).name;
      const TensorMeta &meta = metaOf(g, result);
      TensorMeta stat = makeMeta(meta.dtype, {SymInt::of(0)}, meta.device);
      std::string mean = addTensorValue(g, result + "_unused_1", stat);
      std::string invstd = addTensorValue(g, result + "_unused_2", stat);
      auto tensorOrNone = [&](const char *name) {
        Argument a = argOr(node, name, Argument::none());
        if (a.kind == ArgKind::OptionalTensor) return a.name.empty() ? Argument::none() : Argument::tensor(a.name);
        return a;
      };
      Node bn = makeCall(atenTarget("aten", "_native_batch_norm_legit_no_training", "default"),
                         {positional("input", requireArg(node, "input")), positional("weight", tensorOrNone("weight")),
                          positional("bias", tensorOrNone("bias")),
                          positional("running_mean", tensorOrNone("running_mean")),
                          positional("running_var", tensorOrNone("running_var")),
                          positional("momentum", argOr(node, "momentum", Argument::real(0.1))),
                          positional("eps", argOr(node, "eps", Argument::real(1e-5)))},
                         result, &node);
      bn.outputs.push_back(Argument::tensor(mean));
      bn.outputs.push_back(Argument::tensor(invstd));
      return std::vector<Node>{std::move(bn)};
    });
}

} // namespace exir::edge
