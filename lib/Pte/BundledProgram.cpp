//===- Pte/BundledProgram.cpp - BundledProgram files (.bpte) --------------===//
#include "Pte/BundledProgram.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"
#include "Support/Error.h"

#include "bundled_program_generated.h"

namespace exir::bpte {

namespace fb = bundled_program_flatbuffer;

bool looksLikeBundledProgram(std::string_view head) {
  return head.size() >= 8 && head.substr(4, 4) == fb::BundledProgramIdentifier();
}

namespace {

template <typename T> std::vector<T> toVector(const flatbuffers::Vector<T> *v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

Value readValue(const fb::Value *v) {
  Value out;
  if (!v) return out;
  if (const fb::Tensor *t = v->val_as_Tensor()) {
    out.kind = Value::Kind::Tensor;
    out.scalarType = ScalarType(int8_t(t->scalar_type()));
    out.sizes = toVector(t->sizes());
    out.dimOrder = toVector(t->dim_order());
    if (t->data()) out.data.assign(reinterpret_cast<const char *>(t->data()->data()), t->data()->size());
  } else if (const fb::Int *i = v->val_as_Int()) {
    out.kind = Value::Kind::Int;
    out.intValue = i->int_val();
  } else if (const fb::Bool *b = v->val_as_Bool()) {
    out.kind = Value::Kind::Bool;
    out.boolValue = b->bool_val();
  } else if (const fb::Double *d = v->val_as_Double()) {
    out.kind = Value::Kind::Double;
    out.doubleValue = d->double_val();
  }
  return out;
}

std::vector<Value> readValues(const flatbuffers::Vector<flatbuffers::Offset<fb::Value>> *values) {
  std::vector<Value> out;
  if (values)
    for (const fb::Value *v : *values) out.push_back(readValue(v));
  return out;
}

flatbuffers::Offset<fb::Value> writeValue(flatbuffers::FlatBufferBuilder &b, const Value &v) {
  switch (v.kind) {
  case Value::Kind::Tensor: {
    std::vector<uint8_t> data(v.data.begin(), v.data.end());
    auto t = fb::CreateTensorDirect(b, executorch_flatbuffer::ScalarType(int8_t(v.scalarType)), &v.sizes, &data,
                                    &v.dimOrder);
    return fb::CreateValue(b, fb::ValueUnion::Tensor, t.Union());
  }
  case Value::Kind::Int: return fb::CreateValue(b, fb::ValueUnion::Int, fb::CreateInt(b, v.intValue).Union());
  case Value::Kind::Bool: return fb::CreateValue(b, fb::ValueUnion::Bool, fb::CreateBool(b, v.boolValue).Union());
  case Value::Kind::Double:
    return fb::CreateValue(b, fb::ValueUnion::Double, fb::CreateDouble(b, v.doubleValue).Union());
  case Value::Kind::None: break;
  }
  return fb::CreateValue(b);
}

std::string formatValue(const Value &v) {
  switch (v.kind) {
  case Value::Kind::Tensor: {
    std::string out = std::string("Tensor ") + shortName(v.scalarType) + "[";
    for (size_t i = 0; i < v.sizes.size(); ++i) out += (i ? ", " : "") + std::to_string(v.sizes[i]);
    out += "]";
    if (!v.dimOrder.empty()) {
      out += " dim_order=[";
      for (size_t i = 0; i < v.dimOrder.size(); ++i) out += (i ? "," : "") + std::to_string(int(v.dimOrder[i]));
      out += "]";
    }
    return out + " " + std::to_string(v.data.size()) + " bytes";
  }
  case Value::Kind::Int: return "Int " + std::to_string(v.intValue);
  case Value::Kind::Bool: return std::string("Bool ") + (v.boolValue ? "true" : "false");
  case Value::Kind::Double: return "Double " + pte::formatDouble(v.doubleValue);
  case Value::Kind::None: break;
  }
  return "None";
}

} // namespace

BundledProgram readBundledProgram(const std::string &bytes, const std::string &fileName) {
  if (bytes.size() < 8 || !looksLikeBundledProgram(bytes))
    throw Error("not a BundledProgram: no 'BP08' identifier at byte 4", fileName, "byte 4");
  if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
    throw Error("file of " + std::to_string(bytes.size()) + " bytes exceeds the flatbuffer limit of 2 GiB", fileName);
  flatbuffers::Verifier::Options options;
  options.max_depth = 64;
  options.max_tables = 100'000'000;
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size(), options);
  if (!fb::VerifyBundledProgramBuffer(verifier))
    throw Error("flatbuffer verification failed: the BundledProgram is corrupted or truncated", fileName, "byte 0");
  const fb::BundledProgram *root = fb::GetBundledProgram(bytes.data());
  BundledProgram out;
  out.version = root->version();
  if (const auto *suites = root->method_test_suites())
    for (const fb::BundledMethodTestSuite *s : *suites) {
      MethodTestSuite suite;
      if (s->method_name()) suite.methodName = s->method_name()->str();
      if (const auto *cases = s->test_cases())
        for (const fb::BundledMethodTestCase *c : *cases)
          suite.testCases.push_back({readValues(c->inputs()), readValues(c->expected_outputs())});
      out.methodTestSuites.push_back(std::move(suite));
    }
  if (!root->program() || root->program()->size() == 0)
    throw Error("the BundledProgram holds no program", fileName, "/program");
  out.programBytes = std::make_shared<const std::string>(reinterpret_cast<const char *>(root->program()->data()),
                                                         root->program()->size());
  try {
    out.program = pte::readPte(out.programBytes, fileName);
  } catch (const Error &e) {
    throw Error("embedded program: " + e.message(), fileName,
                "/program" + (e.location().empty() ? "" : " " + e.location()));
  }
  return out;
}

std::string writeBundledProgram(const std::string &pteBytes, const std::vector<MethodTestSuite> &suites,
                                uint32_t version) {
  flatbuffers::FlatBufferBuilder b(pteBytes.size() + 1024);
  std::vector<flatbuffers::Offset<fb::BundledMethodTestSuite>> suiteOffsets;
  for (const MethodTestSuite &suite : suites) {
    std::vector<flatbuffers::Offset<fb::BundledMethodTestCase>> caseOffsets;
    for (const TestCase &c : suite.testCases) {
      std::vector<flatbuffers::Offset<fb::Value>> inputs, outputs;
      for (const Value &v : c.inputs) inputs.push_back(writeValue(b, v));
      for (const Value &v : c.expectedOutputs) outputs.push_back(writeValue(b, v));
      caseOffsets.push_back(fb::CreateBundledMethodTestCaseDirect(b, &inputs, &outputs));
    }
    suiteOffsets.push_back(fb::CreateBundledMethodTestSuiteDirect(b, suite.methodName.c_str(), &caseOffsets));
  }
  std::vector<uint8_t> program(pteBytes.begin(), pteBytes.end());
  b.Finish(fb::CreateBundledProgramDirect(b, version, &suiteOffsets, &program), fb::BundledProgramIdentifier());
  return std::string(reinterpret_cast<const char *>(b.GetBufferPointer()), b.GetSize());
}

void dumpBundledProgramText(const BundledProgram &bundled, std::ostream &os, const pte::TextDumpOptions &options) {
  os << "BundledProgram (.bpte) version " << bundled.version << ", program " << bundled.programBytes->size()
     << " bytes\n";
  os << "method_test_suites (" << bundled.methodTestSuites.size() << "):\n";
  for (const MethodTestSuite &suite : bundled.methodTestSuites) {
    os << "  " << suite.methodName << ": " << suite.testCases.size() << " test case"
       << (suite.testCases.size() == 1 ? "" : "s")
       << (bundled.program.findPlan(suite.methodName) ? "" : " (the program has no such method)") << "\n";
    for (size_t i = 0; i < suite.testCases.size(); ++i) {
      const TestCase &c = suite.testCases[i];
      os << "    [" << i << "]\n";
      for (size_t k = 0; k < c.inputs.size(); ++k)
        os << "      input " << k << ": " << formatValue(c.inputs[k]) << "\n";
      for (size_t k = 0; k < c.expectedOutputs.size(); ++k)
        os << "      expected output " << k << ": " << formatValue(c.expectedOutputs[k]) << "\n";
    }
  }
  os << "\nprogram:\n";
  pte::dumpPteText(bundled.program, os, options);
}

} // namespace exir::bpte
