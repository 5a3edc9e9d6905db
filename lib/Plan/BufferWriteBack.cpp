//===- Plan/BufferWriteBack.cpp - copy mutated buffers back in place ------===//
//
// A functional graph returns a buffer's new value as a BUFFER_MUTATION output;
// the runtime has no notion of that, so (as upstream's
// insert_write_back_for_buffers_pass) we add `aten::copy_(buffer, new_value)`
// before the output. copy_ is in place: its result is the buffer's own storage,
// which the planner keeps alive for the whole program, and the emitter drops the
// mutation from the method's outputs.
//
//===----------------------------------------------------------------------===//
#include "Plan/PlanPasses.h"
#include "Support/Error.h"

#include <string_view>
#include <unordered_map>

namespace exir::plan {

void insertBufferWriteBack(Program &program) {
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    Graph &g = ep.graph;
    // Buffer FQN -> its placeholder (the last one, if several name it). A map, as
    // a model with thousands of buffers (a KV cache per layer) mutates most of them.
    std::unordered_map<std::string_view, std::string_view> bufferOf;
    size_t mutations = 0;
    for (const auto &in : ep.signature.inputSpecs)
      if (in.kind == InputKind::Buffer) bufferOf[in.target] = in.arg.name;
    for (const auto &spec : ep.signature.outputSpecs) mutations += spec.kind == OutputKind::BufferMutation;
    g.tensorValues.reserve(g.tensorValues.size() + mutations);
    for (size_t i = 0; i < ep.signature.outputSpecs.size(); ++i) {
      OutputSpec &spec = ep.signature.outputSpecs[i];
      if (spec.kind != OutputKind::BufferMutation) continue;
      auto found = bufferOf.find(spec.target);
      std::string buffer = found == bufferOf.end() ? std::string() : std::string(found->second);
      std::string where = "/methods/" + methodName + "/graph_module/signature/output_specs/" + std::to_string(i);
      if (buffer.empty()) throw Error("buffer_mutation of '" + spec.target + "', which is not a buffer input", {}, where);
      if (spec.arg.kind != ArgKind::Tensor) throw Error("buffer_mutation output is not a tensor", {}, where);
      if (spec.arg.name == buffer) continue; // already written in place
      const TensorMeta *meta = g.tensorValues.find(buffer);
      if (!meta) throw Error("buffer '" + buffer + "' has no tensor metadata", {}, where);
      std::string result = g.freshName("copy_");
      g.tensorValues.set(result, *meta);
      Node copy;
      copy.target = atenTarget("aten", "copy_", "default");
      copy.inputs.push_back(NamedArgument{"self", Argument::tensor(buffer), ArgumentPassing::Positional});
      copy.inputs.push_back(NamedArgument{"src", Argument::tensor(spec.arg.name), ArgumentPassing::Positional});
      copy.outputs.push_back(Argument::tensor(result));
      g.nodes.push_back(std::move(copy));
      if (i < g.outputs.size()) g.outputs[i] = Argument::tensor(result);
      spec.arg = Argument::tensor(result);
    }
  }
}

} // namespace exir::plan
