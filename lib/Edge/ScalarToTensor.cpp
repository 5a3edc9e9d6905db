//===- Edge/ScalarToTensor.cpp - scalar operands -> lifted constant tensors ===//
//
// Edge ops take tensors where the schema says Tensor: a Python number passed
// there (x + 1.0 exports as add.Tensor(x, 1.0)) becomes a 0-dim constant
// tensor, lifted into a placeholder with a tensor_constant input spec, as
// upstream's ScalarToTensorPass + lift_constant_tensor_pass produce (the arduino
// AddModel golden: a 0-dim float 1.0 constant). Floats become float32, ints
// int64, bools bool (torch.tensor's defaults).
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"

#include <cstring>

namespace exir::edge {

namespace {
std::string scalarBytes(const Argument &a, ScalarType &dtype) {
  std::string bytes;
  if (a.kind == ArgKind::Float) {
    dtype = ScalarType::Float;
    float v = static_cast<float>(a.floatValue);
    bytes.assign(reinterpret_cast<const char *>(&v), sizeof v);
  } else if (a.kind == ArgKind::Int) {
    dtype = ScalarType::Long;
    int64_t v = a.intValue;
    bytes.assign(reinterpret_cast<const char *>(&v), sizeof v);
  } else {
    dtype = ScalarType::Bool;
    bytes.assign(1, a.intValue ? '\1' : '\0');
  }
  return bytes;
}

/// The first "_lifted_tensor_constant<N>" not yet used in the program.
std::string freshConstantName(const Program &program, const ExportedProgram &ep, int &counter) {
  for (;; ++counter) {
    std::string name = "_lifted_tensor_constant" + std::to_string(counter);
    if (!program.constants.contains(name) && !ep.graph.tensorValues.contains(name)) return name;
  }
}
} // namespace

void scalarToTensor(Program &program) {
  int counter = 0;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    std::vector<std::pair<std::string, TensorMeta>> lifted;
    for (Node &node : ep.graph.nodes) {
      OpTarget t = targetOf(node);
      if (t.dialect != TargetDialect::Aten) continue;
      std::string qname = t.qualifiedName();
      for (NamedArgument &in : node.inputs) {
        ArgKind k = in.arg.kind;
        if (k != ArgKind::Float && k != ArgKind::Int && k != ArgKind::Bool) continue;
        if (!isPlainTensorParam(qname, in.name)) continue;
        ScalarType dtype;
        std::string bytes = scalarBytes(in.arg, dtype);
        std::string name = freshConstantName(program, ep, counter);
        ConstantTensor c;
        c.dtype = dtype;
        c.data.length = bytes.size();
        c.data.inlineBytes = bytes;
        program.constants.set(name, c);
        TensorMeta meta = makeMeta(dtype, {});
        ep.graph.tensorValues.set(name, meta);
        lifted.emplace_back(name, meta);
        in.arg = Argument::tensor(name);
      }
    }
    // Lifted constants go before the user inputs, after parameters and buffers,
    // matching torch's placeholder order (parameters, buffers, constants, inputs).
    size_t insertAt = 0;
    while (insertAt < ep.signature.inputSpecs.size() &&
           ep.signature.inputSpecs[insertAt].kind != InputKind::UserInput &&
           ep.signature.inputSpecs[insertAt].kind != InputKind::ConstantInput &&
           ep.signature.inputSpecs[insertAt].kind != InputKind::Token)
      ++insertAt;
    if (lifted.empty()) continue;
    // One splice for all of them (not one vector insert per constant).
    std::vector<InputSpec> specs(ep.signature.inputSpecs.begin(), ep.signature.inputSpecs.begin() + std::ptrdiff_t(insertAt));
    std::vector<Argument> inputs(ep.graph.inputs.begin(), ep.graph.inputs.begin() + std::ptrdiff_t(insertAt));
    for (const auto &[name, meta] : lifted) {
      InputSpec spec;
      spec.kind = InputKind::TensorConstant;
      spec.arg = Argument::tensor(name);
      spec.target = name;
      specs.push_back(spec);
      inputs.push_back(Argument::tensor(name));
    }
    specs.insert(specs.end(), ep.signature.inputSpecs.begin() + std::ptrdiff_t(insertAt), ep.signature.inputSpecs.end());
    inputs.insert(inputs.end(), ep.graph.inputs.begin() + std::ptrdiff_t(insertAt), ep.graph.inputs.end());
    ep.signature.inputSpecs = std::move(specs);
    ep.graph.inputs = std::move(inputs);
  }
}

} // namespace exir::edge
