//===- Run/Delegates.cpp - Running delegate calls -------------------------===//
#include "Run/Delegates.h"
#include "Run/TensorData.h"
#include "Serde/ExportJson.h"
#include "Support/Error.h"

#include <cstring>

namespace exir::run {

void copyTensorInto(Tensor &dst, const Tensor &src, const std::string &what) {
  if (dst.dtype != src.dtype)
    throw Error(what + " has dtype " + shortName(src.dtype) + "; its destination holds " + shortName(dst.dtype));
  if (dst.sizes != src.sizes) dst.resize(src.sizes);
  copyElements(dst, src);
}

namespace {

constexpr const char *kDemoBackend = "BackendWithCompilerDemo";
constexpr const char *kSubgraphJsonBackend = "ExirSubgraphJson";

struct DemoRecord {
  std::string op, dtype;
  int64_t numel = 0;
};

/// The field after `key` up to the first of `stops`.
std::string demoField(const std::string &record, const std::string &key, const char *stops) {
  size_t at = record.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  size_t end = record.find_first_of(stops, at);
  std::string v = record.substr(at, end == std::string::npos ? std::string::npos : end - at);
  return v;
}

float *floatData(Value *v, const std::string &what) {
  Tensor &t = v->toTensor();
  if (t.dtype != ScalarType::Float) throw Error(std::string(kDemoBackend) + ": " + what + " must be float32");
  return t.ptr<float>();
}

/// upstream runtime/executor/test/test_backend_compiler_lib.cpp: init then execute.
void runDemoBackend(const std::string &blob, const std::vector<CompileSpec> &specs, std::span<Value *> args) {
  const std::string who = kDemoBackend;
  // init: compile_specs[0] is read unconditionally as a 4-byte int (<= 4).
  if (specs.empty())
    throw Error(who + " needs a compile spec (its init reads compile_specs[0]; the runtime aborts without one)");
  uint32_t maxValue = 0;
  for (size_t i = 0; i < 4 && i < specs[0].value.size(); ++i) maxValue |= uint32_t(uint8_t(specs[0].value[i])) << (8 * i);
  if (maxValue > 4) throw Error(who + ": compile spec '" + specs[0].key + "' is " + std::to_string(maxValue) + "; init requires <= 4");
  size_t v = blob.find("version:");
  if (v == std::string::npos || std::strtol(blob.c_str() + v + 8, nullptr, 10) != 0)
    throw Error(who + ": the blob's version is not 0 (DelegateInvalidCompatibility)");
  if (std::strtol(blob.c_str(), nullptr, 10) < 0) throw Error(who + ": negative instruction count in the blob");
  std::vector<DemoRecord> records;
  size_t hash = blob.find('#');
  for (size_t pos = hash == std::string::npos ? blob.size() : hash + 1; pos < blob.size();) {
    size_t end = blob.find('#', pos);
    std::string rec = blob.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? blob.size() : end + 1;
    if (rec.empty()) continue;
    DemoRecord r;
    r.op = demoField(rec, "op:", ",");
    r.numel = std::strtoll(demoField(rec, "numel:", ",").c_str(), nullptr, 10);
    r.dtype = demoField(rec, "dtype:", "<");
    records.push_back(std::move(r));
  }
  // execute: the ops are wired to fixed argument positions, as upstream's test backend does.
  auto need = [&](size_t n, const std::string &op) {
    if (args.size() < n)
      throw Error(who + ": " + op + " uses delegate argument " + std::to_string(n - 1) + ", but the call has " +
                  std::to_string(args.size()) + " arguments (upstream's test backend reads past them)");
  };
  for (const auto &r : records) {
    if (r.dtype.rfind("torch.float32", 0) != 0)
      throw Error(who + ": " + r.op + " on " + r.dtype + " is not supported (float32 only)");
    if (r.op == "demo::aten.add.Tensor") {
      need(4, r.op);
      const float *in = floatData(args[2], "add's input");
      float *out = floatData(args[3], "add's output");
      for (int64_t j = 0; j < args[3]->toTensor().numel(); ++j) out[j] = in[j] + out[j];
    } else if (r.op == "demo::aten.mm.default") {
      need(4, r.op);
      if (r.numel != 4) throw Error(who + ": mm supports 2x2 matrices only (numel 4), got numel " + std::to_string(r.numel));
      const float *a = floatData(args[0], "mm's input"), *b = floatData(args[1], "mm's input");
      float *out = floatData(args[3], "mm's output");
      float c[4];
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 2; ++j) c[i * 2 + j] = a[i * 2] * b[j] + a[i * 2 + 1] * b[2 + j];
      std::memcpy(out, c, sizeof c);
    } else if (r.op == "demo::aten.sin.default") {
      need(2, r.op);
      const float *x = floatData(args[0], "sin's input");
      float *out = floatData(args[1], "sin's output");
      for (int64_t j = 0; j < args[1]->toTensor().numel(); ++j) out[j] = x[j] - x[j] * x[j] * x[j] / 6.0f;
    } else {
      throw Error(who + ": op " + r.op + " is not executed by upstream's test backend (add, mm and sin are)");
    }
  }
}

void runSubgraphJsonBackend(const std::string &blob, std::span<Value *> args, const RunOptions &options) {
  Program owner;
  owner.stage = Stage::Edge;
  ExportedProgram ep = readExportedProgramJson(blob, "<ExirSubgraphJson blob>");
  size_t numInputs = 0;
  for (const auto &spec : ep.signature.inputSpecs) {
    if (spec.kind == InputKind::UserInput) ++numInputs;
    else if (spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer || spec.kind == InputKind::TensorConstant)
      throw Error(std::string(kSubgraphJsonBackend) + ": the blob's subgraph owns constant '" + spec.target +
                  "', whose bytes the blob does not carry");
  }
  if (numInputs > args.size()) throw Error(std::string(kSubgraphJsonBackend) + ": the call passes fewer arguments than the subgraph's inputs");
  std::vector<Value> inputs;
  for (size_t i = 0; i < numInputs; ++i) inputs.push_back(*args[i]);
  std::vector<Value> results = runExportedProgram(owner, ep, inputs, options, "<ExirSubgraphJson blob>/graph_module/graph");
  if (results.size() != args.size() - numInputs)
    throw Error(std::string(kSubgraphJsonBackend) + ": the subgraph returns " + std::to_string(results.size()) +
                " values; the call has " + std::to_string(args.size() - numInputs) + " outputs");
  for (size_t k = 0; k < results.size(); ++k)
    copyTensorInto(args[numInputs + k]->toTensor(), results[k].toTensor(), "delegate output " + std::to_string(k));
}

} // namespace

bool isKnownBackend(const std::string &backendId) {
  return backendId == kDemoBackend || backendId == kSubgraphJsonBackend;
}

void runBackendBlob(const std::string &backendId, const std::string &blob, const std::vector<CompileSpec> &compileSpecs,
                    std::span<Value *> args, const RunOptions &options) {
  if (backendId == kDemoBackend) return runDemoBackend(blob, compileSpecs, args);
  if (backendId == kSubgraphJsonBackend) return runSubgraphJsonBackend(blob, args, options);
  throw Error("backend '" + backendId + "' is not known to exir-run");
}

} // namespace exir::run
