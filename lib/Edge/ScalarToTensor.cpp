//===- Edge/ScalarToTensor.cpp - scalar operands -> lifted constant tensors ===//
//
// Edge ops take tensors where the schema says Tensor: a Python number passed
// there (x + 1.0 exports as add.Tensor(x, 1.0)) becomes a 0-dim constant
// tensor, lifted into a placeholder with a tensor_constant input spec, as
// upstream's ScalarToTensorPass + lift_constant_tensor_pass produce (the arduino
// AddModel golden: a 0-dim float 1.0 constant). The constant takes the dtype
// PyTorch computes the op in (a wrapped number does not promote a tensor of its
// own category: int32 * 2 stays int32, f16 + 0.5 stays f16); otherwise floats
// become float32, ints int64, bools bool (torch.tensor's defaults).
// Inside a control-flow branch nothing can be lifted (a branch sees only its
// operands), so there an op with a `.Scalar` overload (mul.Tensor -> mul.Scalar)
// takes the number as it is.
//
//===----------------------------------------------------------------------===//
#include "Edge/EdgeUtil.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"

#include <cstring>
#include <unordered_map>

namespace exir::edge {

namespace {
// The dtype a wrapped number takes next to the node's first tensor operand
// (`operand` null when the node has none).
ScalarType liftedType(const Argument &a, const TensorMeta *operand) {
  ScalarType other = operand ? operand->dtype : ScalarType::Undefined;
  bool otherFloat = other != ScalarType::Undefined && isFloatingType(other);
  bool otherInt = other != ScalarType::Undefined && isIntegralType(other, /*includeBool=*/false);
  if (a.kind == ArgKind::Float) return otherFloat ? other : ScalarType::Float;
  if (a.kind == ArgKind::Int) return otherFloat || otherInt ? other : ScalarType::Long;
  return other != ScalarType::Undefined ? other : ScalarType::Bool;
}

template <typename T> std::string bytesOf(T v) { return std::string(reinterpret_cast<const char *>(&v), sizeof v); }

std::string scalarBytes(const Argument &a, ScalarType dtype) {
  double d = a.kind == ArgKind::Float ? a.floatValue : double(a.intValue);
  int64_t i = a.kind == ArgKind::Float ? int64_t(a.floatValue) : a.intValue;
  switch (dtype) {
  case ScalarType::Double: return bytesOf(d);
  case ScalarType::Float: return bytesOf(float(d));
  case ScalarType::Long: return bytesOf(i);
  case ScalarType::Int: return bytesOf(int32_t(i));
  case ScalarType::Short: return bytesOf(int16_t(i));
  case ScalarType::Char: return bytesOf(int8_t(i));
  case ScalarType::Byte: return bytesOf(uint8_t(i));
  case ScalarType::Bool: return bytesOf(uint8_t(i != 0));
  default: return {};
  }
}

// Inside branches: add.Tensor(x, 2) -> add.Scalar(x, 2) where the table has it.
bool isScalarKind(ArgKind k) { return k == ArgKind::Float || k == ArgKind::Int || k == ArgKind::Bool; }

void useScalarOverloads(Graph &graph) {
  // Per distinct target: its .Scalar overload's target, or "" when it has none.
  StringMap<std::string> scalarTargets;
  for (Node &node : graph.nodes) {
    bool scalarOther = false; // checked first: most nodes have none
    for (const auto &in : node.inputs)
      if (in.name == "other" && isScalarKind(in.arg.kind)) scalarOther = true;
    if (!scalarOther) continue;
    auto [slot, unseen] = scalarTargets.try_emplace(node.target);
    if (unseen) {
      OpTarget t = parseTarget(node.target);
      if (t.dialect == TargetDialect::Aten && t.overload == "Tensor" && isKnownOp(t.ns + "::" + t.name + ".Scalar"))
        slot->second = atenTarget(t.ns, t.name, "Scalar");
    }
    if (!slot->second.empty()) node.target = slot->second;
  }
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
  // Per distinct target: the qualified name of an ATen op, "" for any other.
  StringMap<std::string> qualified;
  for (auto &[methodName, method] : program.methods) {
    ExportedProgram &ep = method.program;
    forEachSubgraph(ep.graph, [](Graph &g, const std::string &) { useScalarOverloads(g); });
    std::vector<std::pair<std::string, TensorMeta>> lifted;
    for (Node &node : ep.graph.nodes) {
      bool scalars = false; // checked first: most nodes have no scalar operand
      for (const NamedArgument &in : node.inputs) scalars |= isScalarKind(in.arg.kind);
      if (!scalars) continue;
      auto [slot, unseen] = qualified.try_emplace(node.target);
      if (unseen) {
        OpTarget t = parseTarget(node.target);
        if (t.dialect == TargetDialect::Aten) slot->second = t.qualifiedName();
      }
      if (slot->second.empty()) continue;
      const std::string &qname = slot->second;
      for (NamedArgument &in : node.inputs) {
        ArgKind k = in.arg.kind;
        if (k != ArgKind::Float && k != ArgKind::Int && k != ArgKind::Bool) continue;
        if (!isPlainTensorParam(qname, in.name)) continue;
        ScalarType dtype = liftedType(in.arg, firstTensorInputMeta(ep.graph, node));
        std::string bytes = scalarBytes(in.arg, dtype);
        if (bytes.empty()) { // a dtype without a plain C++ type (f16, complex): float32 as before
          dtype = ScalarType::Float;
          bytes = scalarBytes(in.arg, dtype);
        }
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
