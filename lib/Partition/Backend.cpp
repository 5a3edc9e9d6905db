//===- Partition/Backend.cpp - Backend registry, compile specs, demo backends ===//
//
// The registry, the KEY=VALUE compile-spec syntax, and the two built-in
// backends:
//  - BackendWithCompilerDemo, whose blob must be byte-identical to upstream's
//    (pte-format.md §7.5): "<records>version:0#" then one
//    "op:demo::<op>, numel:<n>, dtype:<torch dtype><debug_handle><h>#" per node;
//  - ExirSubgraphJson, which stores the subgraph as torch.export JSON, so a
//    backend described only by a spec file still produces a meaningful blob.
//
//===----------------------------------------------------------------------===//
#include "Partition/Backend.h"
#include "Serde/ExportJson.h"
#include "Support/Error.h"
#include "Support/Hash.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace exir::partition {

Backend::~Backend() = default;

//===----------------------------------------------------------------------===//
// Registry
//===----------------------------------------------------------------------===//

BackendRegistry &BackendRegistry::builtin() {
  static BackendRegistry registry = [] {
    BackendRegistry r;
    r.add(makeBackendWithCompilerDemo());
    r.add(makeSubgraphJsonBackend());
    return r;
  }();
  return registry;
}

void BackendRegistry::add(std::shared_ptr<const Backend> backend) {
  if (find(backend->id())) throw Error("backend '" + backend->id() + "' is registered twice");
  backends_.push_back(std::move(backend));
}

const Backend *BackendRegistry::find(const std::string &id) const {
  for (const auto &b : backends_)
    if (b->id() == id) return b.get();
  return nullptr;
}

const Backend &BackendRegistry::require(const std::string &id) const {
  if (const Backend *b = find(id)) return *b;
  std::string known;
  for (const auto &name : ids()) known += (known.empty() ? "" : ", ") + name;
  throw Error("unknown backend id '" + id + "' (registered backends: " + known + ")");
}

std::vector<std::string> BackendRegistry::ids() const {
  std::vector<std::string> out;
  for (const auto &b : backends_) out.push_back(b->id());
  return out;
}

//===----------------------------------------------------------------------===//
// Compile specs
//===----------------------------------------------------------------------===//

namespace {

[[noreturn]] void malformed(const std::string &text, const std::string &why) {
  throw Error("malformed compile spec '" + text + "': " + why +
              " (expected KEY=VALUE; VALUE is an integer 0-255 stored as one byte, or u8:N, i32:N, i64:N, "
              "str:TEXT, hex:HEX, b64:BASE64)");
}

std::optional<int64_t> parseInteger(const std::string &s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  const char *begin = s.data() + (s[0] == '+' ? 1 : 0);
  auto [ptr, ec] = std::from_chars(begin, s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string littleEndian(int64_t v, size_t bytes) {
  std::string out;
  for (size_t i = 0; i < bytes; ++i) out += char(uint8_t(uint64_t(v) >> (8 * i)));
  return out;
}

} // namespace

CompileSpec parseCompileSpec(const std::string &text) {
  auto eq = text.find('=');
  if (eq == std::string::npos) malformed(text, "no '='");
  CompileSpec spec;
  spec.key = text.substr(0, eq);
  std::string value = text.substr(eq + 1);
  if (spec.key.empty()) malformed(text, "empty key");
  if (value.empty()) malformed(text, "empty value");

  auto colon = value.find(':');
  std::string kind = colon == std::string::npos ? "" : value.substr(0, colon);
  std::string body = colon == std::string::npos ? value : value.substr(colon + 1);
  auto integerIn = [&](int64_t lo, int64_t hi) {
    auto v = parseInteger(body);
    if (!v) malformed(text, "'" + body + "' is not an integer");
    if (*v < lo || *v > hi)
      malformed(text, std::to_string(*v) + " is out of range " + std::to_string(lo) + ".." + std::to_string(hi));
    return *v;
  };
  if (colon == std::string::npos) {
    if (!parseInteger(body)) malformed(text, "'" + body + "' is not an integer 0-255 and has no type prefix");
    spec.value = littleEndian(integerIn(0, 255), 1);
  } else if (kind == "u8") {
    spec.value = littleEndian(integerIn(0, 255), 1);
  } else if (kind == "i32") {
    spec.value = littleEndian(integerIn(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()), 4);
  } else if (kind == "i64") {
    spec.value = littleEndian(integerIn(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()), 8);
  } else if (kind == "str") {
    spec.value = body;
  } else if (kind == "hex") {
    if (body.empty() || body.size() % 2) malformed(text, "hex needs an even, non-zero number of digits");
    for (size_t i = 0; i < body.size(); i += 2) {
      unsigned byte = 0;
      auto [ptr, ec] = std::from_chars(body.data() + i, body.data() + i + 2, byte, 16);
      if (ec != std::errc() || ptr != body.data() + i + 2) malformed(text, "'" + body.substr(i, 2) + "' is not hex");
      spec.value += char(byte);
    }
  } else if (kind == "b64") {
    try {
      spec.value = base64Decode(body);
    } catch (const Error &e) {
      malformed(text, "invalid base64: " + e.message());
    }
  } else {
    malformed(text, "unknown value type '" + kind + ":'");
  }
  return spec;
}

std::string describeCompileSpecValue(const std::string &bytes) {
  if (bytes.size() == 1) return std::to_string(uint8_t(bytes[0]));
  bool printable = !bytes.empty() &&
                   std::all_of(bytes.begin(), bytes.end(), [](char c) { return std::isprint(uint8_t(c)); });
  if (printable) return "str:" + bytes;
  static const char *digits = "0123456789abcdef";
  std::string out = "hex:";
  for (char c : bytes) {
    out += digits[uint8_t(c) >> 4];
    out += digits[uint8_t(c) & 15];
  }
  return out;
}

//===----------------------------------------------------------------------===//
// BackendWithCompilerDemo
//===----------------------------------------------------------------------===//

namespace {

// The edge ops the upstream demo accepts (backend_with_compiler_demo.py).
bool demoSupports(const OpTarget &t) {
  if (t.dialect == TargetDialect::Aten) return t.ns == "aten" && t.name == "sin" && t.overload == "default";
  if (t.dialect != TargetDialect::Edge || t.ns != "aten") return false;
  static const std::pair<const char *, const char *> kOps[] = {
      {"sin", "default"}, {"mm", "default"}, {"add", "Tensor"}, {"linear", "default"},
      {"scaled_dot_product_attention", "default"}, {"upsample_nearest2d", "vec"}};
  for (const auto &[name, overload] : kOps)
    if (t.name == name && t.overload == overload) return true;
  return false;
}

class BackendWithCompilerDemo final : public Backend {
public:
  std::string id() const override { return "BackendWithCompilerDemo"; }
  std::string summary() const override {
    return "upstream's test backend: a text blob, one record per sin/mm/add/linear/sdpa/upsample node";
  }
  PreprocessResult preprocess(const ExportedProgram &subgraph,
                              const std::vector<CompileSpec> &compileSpecs) const override {
    PreprocessResult result;
    std::string records;
    size_t count = 0;
    for (const Node &node : subgraph.graph.nodes) {
      records += demoBackendRecord(subgraph.graph, node);
      ++count;
    }
    result.processedBytes = std::to_string(count) + "version:0#" + records;
    if (compileSpecs.empty())
      result.warnings.push_back(
          "BackendWithCompilerDemo: no compile specs; the runtime demo backend reads compile_specs[0] "
          "unconditionally and aborts without one (pass e.g. --compile-spec max_value=4)");
    return result;
  }
};

} // namespace

std::string demoBackendRecord(const Graph &graph, const Node &node) {
  OpTarget t = parseTarget(node.target);
  std::string where = node.displayName();
  if (!demoSupports(t))
    throw Error("BackendWithCompilerDemo cannot lower " +
                    (t.dialect == TargetDialect::Other ? node.target : t.qualifiedName()) +
                    " (it supports aten.sin.default, aten.mm.default, aten.add.Tensor, aten.linear.default, "
                    "aten.scaled_dot_product_attention.default, aten.upsample_nearest2d.vec)",
                {}, "node " + where);
  std::string out;
  for (const auto &o : node.outputs)
    if (o.kind == ArgKind::Tensor) {
      out = o.name;
      break;
    }
  const TensorMeta *meta = out.empty() ? nullptr : graph.tensorValues.find(out);
  if (!meta) throw Error("BackendWithCompilerDemo needs the output tensor metadata of the node", {}, "node " + where);
  auto numel = meta->numel();
  if (!numel) throw Error("BackendWithCompilerDemo needs a static output shape", {}, "node " + where);
  std::string handle = "-1";
  if (const SharedString *h = node.metadata.find("debug_handle")) handle = h->str();
  // torch's OpOverload.__name__ of an edge op: "<ns>.<op>.<overload>".
  return "op:demo::" + t.ns + "." + t.name + "." + t.overload + ", numel:" + std::to_string(*numel) +
         ", dtype:" + torchName(meta->dtype) + "<debug_handle>" + handle + "#";
}

std::shared_ptr<const Backend> makeBackendWithCompilerDemo() { return std::make_shared<BackendWithCompilerDemo>(); }

//===----------------------------------------------------------------------===//
// ExirSubgraphJson
//===----------------------------------------------------------------------===//

namespace {

class SubgraphJsonBackend final : public Backend {
public:
  std::string id() const override { return "ExirSubgraphJson"; }
  std::string summary() const override {
    return "generic: the blob is the subgraph as torch.export JSON (for backends described by a spec file)";
  }
  PreprocessResult preprocess(const ExportedProgram &subgraph, const std::vector<CompileSpec> &) const override {
    return {writeExportedProgramJson(subgraph), {}};
  }
};

} // namespace

std::shared_ptr<const Backend> makeSubgraphJsonBackend() { return std::make_shared<SubgraphJsonBackend>(); }

} // namespace exir::partition
