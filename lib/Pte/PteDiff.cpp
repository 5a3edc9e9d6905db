//===- Pte/PteDiff.cpp - Structural comparison of two programs ----------===//
//
// Values and instructions are compared through their text-dump rendering, which
// shows every field, so a difference reads the way the dump does. Lists of
// different length report the lengths and then compare the common prefix.
//
//===----------------------------------------------------------------------===//
#include "Pte/PteDiff.h"

#include "Pte/PteDump.h"

#include <functional>

namespace exir::pte {
namespace {

class Differ {
public:
  explicit Differ(std::ostream &out) : out_(out) {}
  bool equal() const { return differences_ == 0; }

  void report(const std::string &path, const std::string &a, const std::string &b) {
    ++differences_;
    out_ << path << ": " << a << " != " << b << "\n";
  }
  void check(const std::string &path, const std::string &a, const std::string &b) {
    if (a != b) report(path, a, b);
  }
  template <typename T> void checkNumber(const std::string &path, T a, T b) {
    if (a != b) report(path, std::to_string(a), std::to_string(b));
  }

  /// Compares two lists element by element through `compare(path, x, y)`.
  template <typename T>
  void list(const std::string &path, const std::vector<T> &a, const std::vector<T> &b,
            const std::function<void(const std::string &, const T &, const T &)> &compare) {
    if (a.size() != b.size())
      report(path, std::to_string(a.size()) + " entries", std::to_string(b.size()) + " entries");
    for (size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      compare(path + "[" + std::to_string(i) + "]", a[i], b[i]);
  }
  /// Compares two lists of numbers as whole lists ("[0, 1] != [0, 2]").
  template <typename T> void numbers(const std::string &path, const std::vector<T> &a, const std::vector<T> &b) {
    if (a != b) report(path, render(a), render(b));
  }

  void blob(const std::string &path, const BlobSource &a, const BlobSource &b) {
    if (!a.sameBytes(b))
      report(path, std::to_string(a.size()) + " bytes sha256 " + a.sha256Hex(),
             std::to_string(b.size()) + " bytes sha256 " + b.sha256Hex());
  }

private:
  template <typename T> static std::string render(const std::vector<T> &items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
    return out + "]";
  }

  std::ostream &out_;
  size_t differences_ = 0;
};

std::string metaText(const std::optional<ContainerMetadata> &meta) {
  if (!meta) return "<absent>";
  std::string text = "(";
  text += formatBytes(meta->encodedInpStr);
  text += ", ";
  text += formatBytes(meta->encodedOutStr);
  return text + ")";
}

std::string deviceText(const NonConstBufferDevice &d) {
  return "buffer " + std::to_string(d.bufferIdx) + " on " + std::to_string(int(d.deviceType)) + ":" +
         std::to_string(int(d.deviceIndex));
}

void diffChain(Differ &d, const std::string &path, const Chain &a, const Chain &b, const ExecutionPlan &planA,
               const ExecutionPlan &planB) {
  d.numbers(path + ".inputs", a.inputs, b.inputs);
  d.numbers(path + ".outputs", a.outputs, b.outputs);
  d.list<Instruction>(path + ".instructions", a.instructions, b.instructions,
                      [&](const std::string &p, const Instruction &x, const Instruction &y) {
                        // Operator tables are compared separately; here compare
                        // what each instruction calls.
                        d.check(p, formatInstruction(x, planA), formatInstruction(y, planB));
                      });
  if (a.stacktrace.has_value() != b.stacktrace.has_value()) {
    d.report(path + ".stacktrace", a.stacktrace ? "present" : "absent", b.stacktrace ? "present" : "absent");
  } else if (a.stacktrace && *a.stacktrace != *b.stacktrace) {
    d.report(path + ".stacktrace", std::to_string(a.stacktrace->size()) + " frame lists",
             std::to_string(b.stacktrace->size()) + " frame lists (contents differ)");
  }
}

void diffPlan(Differ &d, const std::string &path, const ExecutionPlan &a, const ExecutionPlan &b) {
  d.check(path + ".name", formatBytes(a.name), formatBytes(b.name));
  d.check(path + ".container_meta_type", metaText(a.containerMetaType), metaText(b.containerMetaType));
  d.list<EValue>(path + ".values", a.values, b.values, [&](const std::string &p, const EValue &x, const EValue &y) {
    d.check(p, formatValue(x), formatValue(y));
  });
  d.numbers(path + ".inputs", a.inputs, b.inputs);
  d.numbers(path + ".outputs", a.outputs, b.outputs);
  d.list<Chain>(path + ".chains", a.chains, b.chains, [&](const std::string &p, const Chain &x, const Chain &y) {
    diffChain(d, p, x, y, a, b);
  });
  d.list<Operator>(path + ".operators", a.operators, b.operators,
                   [&](const std::string &p, const Operator &x, const Operator &y) {
                     d.check(p, formatBytes(x.qualifiedName()), formatBytes(y.qualifiedName()));
                   });
  d.list<BackendDelegate>(path + ".delegates", a.delegates, b.delegates,
                          [&](const std::string &p, const BackendDelegate &x, const BackendDelegate &y) {
                            d.check(p + ".id", formatBytes(x.id), formatBytes(y.id));
                            d.blob(p + ".processed", x.processedData, y.processedData);
                            d.list<CompileSpec>(p + ".compile_specs", x.compileSpecs, y.compileSpecs,
                                                [&](const std::string &q, const CompileSpec &s, const CompileSpec &t) {
                                                  d.check(q, formatBytes(s.key) + " = " + formatBytes(s.value),
                                                          formatBytes(t.key) + " = " + formatBytes(t.value));
                                                });
                          });
  d.numbers(path + ".non_const_buffer_sizes", a.nonConstBufferSizes, b.nonConstBufferSizes);
  if (a.nonConstBufferDevice.has_value() != b.nonConstBufferDevice.has_value())
    d.report(path + ".non_const_buffer_device", a.nonConstBufferDevice ? "present" : "absent",
             b.nonConstBufferDevice ? "present" : "absent");
  else if (a.nonConstBufferDevice)
    d.list<NonConstBufferDevice>(path + ".non_const_buffer_device", *a.nonConstBufferDevice, *b.nonConstBufferDevice,
                                 [&](const std::string &p, const NonConstBufferDevice &x,
                                     const NonConstBufferDevice &y) { d.check(p, deviceText(x), deviceText(y)); });
}

/// A placeholder-only list and an empty list mean the same thing.
std::vector<BlobSource> withPlaceholder(const std::vector<BlobSource> &list) {
  if (list.empty()) return {BlobSource()};
  return list;
}

} // namespace

bool diffPte(const Program &a, const Program &b, std::ostream &out) {
  ScopedFileCache files; // payload comparisons: one open per file
  Differ d(out);
  d.checkNumber("version", a.version, b.version);
  d.list<ExecutionPlan>("execution_plan", a.executionPlan, b.executionPlan,
                        [&](const std::string &p, const ExecutionPlan &x, const ExecutionPlan &y) {
                          diffPlan(d, p, x, y);
                        });
  auto blobs = [&](const std::string &p, const BlobSource &x, const BlobSource &y) { d.blob(p, x, y); };
  d.list<BlobSource>("constants", withPlaceholder(a.constants), withPlaceholder(b.constants), blobs);
  d.list<BlobSource>("mutable_data", withPlaceholder(a.mutableData), withPlaceholder(b.mutableData), blobs);
  if (a.namedData.has_value() != b.namedData.has_value()) {
    d.report("named_data", a.namedData ? "present" : "absent", b.namedData ? "present" : "absent");
  } else if (a.namedData) {
    d.list<NamedData>("named_data", *a.namedData, *b.namedData,
                      [&](const std::string &p, const NamedData &x, const NamedData &y) {
                        d.check(p + ".key", formatBytes(x.key), formatBytes(y.key));
                        d.blob(p + ".data", x.data, y.data);
                      });
  }
  return d.equal();
}

} // namespace exir::pte
