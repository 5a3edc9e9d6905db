//===- Serde/ExportJsonSignature.cpp - signature and module call graph ----===//
//
// GraphSignature: the InputSpec and OutputSpec unions, ConstantValue, the
// torch 2.1 dict form; ModuleCallEntry and ModuleCallSignature: reader and writer.
//
//===----------------------------------------------------------------------===//
#include "IR/TreeSpec.h"
#include "Serde/ExportJsonImpl.h"

#include <unordered_map>

namespace exir::exportjson {

ConstantValue ExportReader::constantValue(Element e) {
  UnionMember m = unionMember(e, "ConstantValue");
  KeyScope scope(r_, m.tag);
  ConstantValue c;
  if (m.tag == "as_none") c.kind = ConstantValue::Kind::None;
  else if (m.tag == "as_int") {
    c.kind = ConstantValue::Kind::Int;
    c.intValue = r_.integer(m.value);
  } else if (m.tag == "as_float") {
    c.kind = ConstantValue::Kind::Float;
    c.floatValue = r_.real(m.value);
  } else if (m.tag == "as_string") {
    c.kind = ConstantValue::Kind::String;
    c.stringValue = str(m.value);
  } else if (m.tag == "as_bool") {
    c.kind = ConstantValue::Kind::Bool;
    c.intValue = r_.boolean(m.value);
  } else {
    unknownTag("ConstantValue", m.tag);
  }
  return c;
}

InputSpec ExportReader::inputSpec(Element e) {
  UnionMember m = unionMember(e, "InputSpec");
  KeyScope scope(r_, m.tag);
  InputSpec spec;
  const char *targetField = nullptr;
  const char *structName = nullptr;
  bool tensorArg = true;
  if (m.tag == "user_input") {
    spec.kind = InputKind::UserInput;
    structName = "UserInputSpec";
    tensorArg = false;
  } else if (m.tag == "parameter") {
    spec.kind = InputKind::Parameter;
    targetField = "parameter_name";
    structName = "InputToParameterSpec";
  } else if (m.tag == "buffer") {
    spec.kind = InputKind::Buffer;
    targetField = "buffer_name";
    structName = "InputToBufferSpec";
    spec.persistent = true; // files older than the field held only persistent buffers
  } else if (m.tag == "tensor_constant") {
    spec.kind = InputKind::TensorConstant;
    targetField = "tensor_constant_name";
    structName = "InputToTensorConstantSpec";
  } else if (m.tag == "custom_obj") {
    spec.kind = InputKind::CustomObj;
    targetField = "custom_obj_name";
    structName = "InputToCustomObjSpec";
    tensorArg = false;
  } else if (m.tag == "token") {
    spec.kind = InputKind::Token;
    structName = "InputTokenSpec";
  } else if (m.tag == "constant_input") {
    spec.kind = InputKind::ConstantInput;
    Object o = r_.object(m.value);
    Required req("InputToConstantInputSpec", {"name", "value"});
    forEachField(o, [&](std::string_view k, Element v) {
      if (k == "name") {
        spec.target = str(v);
        req.see(0);
      } else if (k == "value") {
        spec.constant.mutate() = constantValue(v);
        req.see(1);
      }
    });
    req.check(r_);
    return spec;
  } else {
    unknownTag("InputSpec", m.tag);
  }
  Object o = r_.object(m.value);
  Required req(structName, {"arg", targetField ? targetField : "arg"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "arg") {
      if (spec.kind == InputKind::CustomObj) {
        CustomObjValue c = customObj(v);
        spec.arg.kind = ArgKind::CustomObj;
        spec.arg.name = c.name;
        spec.arg.mutableClassFqn() = c.classFqn;
      } else {
        spec.arg = tensorArg ? Argument::tensor(tensorArgumentName(v)) : argument(v);
      }
      req.see(0);
      if (!targetField) req.see(1);
    } else if (targetField && k == targetField) {
      spec.target = str(v);
      req.see(1);
    } else if (k == "persistent" && spec.kind == InputKind::Buffer) {
      if (!r_.isNull(v)) spec.persistent = r_.boolean(v);
    }
  });
  req.check(r_);
  return spec;
}

OutputSpec ExportReader::outputSpec(Element e) {
  UnionMember m = unionMember(e, "OutputSpec");
  KeyScope scope(r_, m.tag);
  OutputSpec spec;
  const char *targetField = nullptr;
  const char *structName = nullptr;
  if (m.tag == "user_output") {
    spec.kind = OutputKind::UserOutput;
    structName = "UserOutputSpec";
  } else if (m.tag == "loss_output" || m.tag == "loss_outout") { // 2.1 spelling
    spec.kind = OutputKind::LossOutput;
    structName = "LossOutputSpec";
  } else if (m.tag == "buffer_mutation") {
    spec.kind = OutputKind::BufferMutation;
    targetField = "buffer_name";
    structName = "BufferMutationSpec";
  } else if (m.tag == "parameter_mutation") {
    spec.kind = OutputKind::ParameterMutation;
    targetField = "parameter_name";
    structName = "ParameterMutationSpec";
  } else if (m.tag == "gradient_to_parameter") {
    spec.kind = OutputKind::GradientToParameter;
    targetField = "parameter_name";
    structName = "GradientToParameterSpec";
  } else if (m.tag == "gradient_to_user_input") {
    spec.kind = OutputKind::GradientToUserInput;
    targetField = "user_input_name";
    structName = "GradientToUserInputSpec";
  } else if (m.tag == "user_input_mutation") {
    spec.kind = OutputKind::UserInputMutation;
    targetField = "user_input_name";
    structName = "UserInputMutationSpec";
  } else if (m.tag == "token") {
    spec.kind = OutputKind::Token;
    structName = "OutputTokenSpec";
  } else {
    unknownTag("OutputSpec", m.tag);
  }
  Object o = r_.object(m.value);
  Required req(structName, {"arg", targetField ? targetField : "arg"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "arg") {
      spec.arg = spec.kind == OutputKind::UserOutput ? argument(v)
                                                     : Argument::tensor(tensorArgumentName(v));
      req.see(0);
      if (!targetField) req.see(1);
    } else if (targetField && k == targetField) {
      spec.target = str(v);
      req.see(1);
    }
  });
  req.check(r_);
  return spec;
}

GraphSignature ExportReader::legacySignature(Object o, const Graph &g) {
  // torch 2.1 dict form: derive specs from the graph's placeholders and outputs.
  std::unordered_map<std::string, std::string> toParameter, toBuffer, mutatedBuffers;
  std::string lossOutput;
  auto readMap = [&](Element v, std::unordered_map<std::string, std::string> &out) {
    if (r_.isNull(v)) return;
    forEachField(r_.object(v), [&](std::string_view k, Element target) {
      out.emplace(std::string(k), str(target));
    });
  };
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "inputs_to_parameters") readMap(v, toParameter);
    else if (k == "inputs_to_buffers") readMap(v, toBuffer);
    else if (k == "buffers_to_mutate") readMap(v, mutatedBuffers);
    else if (k == "backward_signature" && v.is_object()) {
      auto loss = v.get_object().value_unsafe().at_key("loss_output");
      if (!loss.error() && loss.value_unsafe().is_string()) lossOutput = str(loss.value_unsafe());
    }
  });
  GraphSignature sig;
  sig.inputSpecs.reserve(g.inputs.size());
  sig.outputSpecs.reserve(g.outputs.size());
  for (const auto &input : g.inputs) {
    InputSpec spec;
    spec.arg = input;
    if (input.kind == ArgKind::Tensor) {
      if (auto it = toParameter.find(input.name); it != toParameter.end()) {
        spec.kind = InputKind::Parameter;
        spec.target = it->second;
      } else if (auto it2 = toBuffer.find(input.name); it2 != toBuffer.end()) {
        spec.kind = InputKind::Buffer;
        spec.target = it2->second;
        spec.persistent = true;
      }
    }
    sig.inputSpecs.push_back(std::move(spec));
  }
  for (const auto &output : g.outputs) {
    OutputSpec spec;
    spec.arg = output;
    if (output.kind == ArgKind::Tensor) {
      if (auto it = mutatedBuffers.find(output.name); it != mutatedBuffers.end()) {
        spec.kind = OutputKind::BufferMutation;
        spec.target = it->second;
      } else if (output.name == lossOutput) {
        spec.kind = OutputKind::LossOutput;
      }
    }
    sig.outputSpecs.push_back(std::move(spec));
  }
  return sig;
}

GraphSignature ExportReader::signature(Element e, const Graph &g) {
  Object o = r_.object(e);
  GraphSignature sig;
  bool legacy = false;
  Required req("GraphSignature", {"input_specs", "output_specs"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "input_specs") {
      // Reserved: 100k parameters make 100k specs of an Argument each.
      convertArray(v, sig.inputSpecs,
                   [](ExportReader &reader, Element item) { return reader.inputSpec(item); });
      req.see(0);
    } else if (k == "output_specs") {
      Array a = r_.array(v);
      sig.outputSpecs.reserve(a.size());
      forEach(a, [&](Element item) { sig.outputSpecs.push_back(outputSpec(item)); });
      req.see(1);
    } else if (k == "user_inputs" || k == "inputs_to_parameters") {
      legacy = true;
    }
  });
  if (legacy && !req.has(0)) return legacySignature(o, g);
  req.check(r_);
  return sig;
}

std::string ExportReader::treeSpec(Element e) {
  std::string text = str(e);
  if (text.empty()) return text; // no spec recorded
  try {
    checkTreeSpec(text);
  } catch (const Error &error) {
    r_.fail(error.message());
  }
  return text;
}

ModuleCallSignature ExportReader::moduleCallSignature(Element e) {
  Object o = r_.object(e);
  ModuleCallSignature s;
  Required req("ModuleCallSignature", {"inputs", "outputs", "in_spec", "out_spec"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "inputs" || k == "outputs") {
      auto &list = k == "inputs" ? s.inputs : s.outputs;
      forEach(r_.array(v), [&](Element item) { list.push_back(argument(item)); });
      req.see(k == "inputs" ? 0 : 1);
    } else if (k == "in_spec") {
      s.inSpec = treeSpec(v);
      req.see(2);
    } else if (k == "out_spec") {
      s.outSpec = treeSpec(v);
      req.see(3);
    } else if (k == "forward_arg_names") {
      if (!r_.isNull(v)) s.forwardArgNames = strings(v);
    }
  });
  req.check(r_);
  return s;
}

ModuleCallEntry ExportReader::moduleCallEntry(Element e) {
  Object o = r_.object(e);
  ModuleCallEntry entry;
  Required req("ModuleCallEntry", {"fqn"});
  forEachField(o, [&](std::string_view k, Element v) {
    if (k == "fqn") {
      entry.fqn = str(v);
      req.see(0);
    } else if (k == "signature") {
      if (!r_.isNull(v)) entry.signature = moduleCallSignature(v);
    }
  });
  req.check(r_);
  return entry;
}

void ExportWriter::inputSpec(const InputSpec &s) {
  w_.beginObject();
  w_.key(inputKindTag(s.kind));
  w_.beginObject();
  switch (s.kind) {
  case InputKind::UserInput:
    w_.key("arg");
    argument(s.arg);
    break;
  case InputKind::Parameter:
  case InputKind::Buffer:
  case InputKind::TensorConstant:
    w_.key("arg");
    tensorArgument(s.arg.name);
    w_.field(s.kind == InputKind::Parameter ? "parameter_name"
             : s.kind == InputKind::Buffer  ? "buffer_name"
                                            : "tensor_constant_name",
             s.target);
    if (s.kind == InputKind::Buffer) w_.fieldBool("persistent", s.persistent);
    break;
  case InputKind::CustomObj:
    w_.key("arg");
    customObj(s.arg.name, s.arg.classFqn());
    w_.field("custom_obj_name", s.target);
    break;
  case InputKind::Token:
    w_.key("arg");
    tensorArgument(s.arg.name);
    break;
  case InputKind::ConstantInput: {
    w_.field("name", s.target);
    w_.key("value");
    w_.beginObject();
    const ConstantValue &c = s.constant.get();
    switch (c.kind) {
    case ConstantValue::Kind::None: w_.fieldBool("as_none", true); break;
    case ConstantValue::Kind::Int: w_.fieldInt("as_int", c.intValue); break;
    case ConstantValue::Kind::Float:
      w_.key("as_float");
      w_.real(c.floatValue);
      break;
    case ConstantValue::Kind::String: w_.field("as_string", c.stringValue); break;
    case ConstantValue::Kind::Bool: w_.fieldBool("as_bool", c.intValue != 0); break;
    }
    w_.endObject();
    break;
  }
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::outputSpec(const OutputSpec &s) {
  w_.beginObject();
  w_.key(outputKindTag(s.kind));
  w_.beginObject();
  w_.key("arg");
  if (s.kind == OutputKind::UserOutput) argument(s.arg);
  else tensorArgument(s.arg.name);
  switch (s.kind) {
  case OutputKind::BufferMutation: w_.field("buffer_name", s.target); break;
  case OutputKind::ParameterMutation:
  case OutputKind::GradientToParameter: w_.field("parameter_name", s.target); break;
  case OutputKind::GradientToUserInput:
  case OutputKind::UserInputMutation: w_.field("user_input_name", s.target); break;
  default: break;
  }
  w_.endObject();
  w_.endObject();
}

void ExportWriter::moduleCallEntry(const ModuleCallEntry &entry) {
  w_.beginObject();
  w_.field("fqn", entry.fqn);
  w_.key("signature");
  if (!entry.signature) {
    w_.null();
  } else {
    const auto &s = *entry.signature;
    w_.beginObject();
    w_.key("inputs");
    w_.beginArray();
    for (const auto &a : s.inputs) argument(a);
    w_.endArray();
    w_.key("outputs");
    w_.beginArray();
    for (const auto &a : s.outputs) argument(a);
    w_.endArray();
    w_.field("in_spec", s.inSpec);
    w_.field("out_spec", s.outSpec);
    w_.key("forward_arg_names");
    if (s.forwardArgNames) strings(*s.forwardArgNames);
    else w_.null();
    w_.endObject();
  }
  w_.endObject();
}

} // namespace exir::exportjson
