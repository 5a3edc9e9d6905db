//===- Partition/PartitionerRegistry.cpp - Partitioners by name -----------===//
#include "Partition/PartitionerRegistry.h"
#include "Partition/SpecPartitioner.h"
#include "Support/Error.h"

#include <filesystem>

namespace exir::partition {

PartitionerRegistry &PartitionerRegistry::builtin() {
  static PartitionerRegistry registry = [] {
    PartitionerRegistry r;
    r.add("AddMulPartitionerDemo",
          "upstream demo: edge add.Tensor + mm.default -> BackendWithCompilerDemo (max_value=4)",
          makeAddMulPartitionerDemo);
    return r;
  }();
  return registry;
}

void PartitionerRegistry::add(std::string name, std::string summary, Factory factory) {
  for (const auto &e : entries_)
    if (e.name == name) throw Error("partitioner '" + name + "' is registered twice");
  entries_.push_back({std::move(name), std::move(summary), std::move(factory)});
}

std::unique_ptr<Partitioner> PartitionerRegistry::create(const std::string &spec,
                                                         const std::string &fallbackBackend) const {
  if (spec.rfind("nodes:", 0) == 0) {
    if (fallbackBackend.empty()) throw Error("partitioner 'nodes:...' needs --backend ID to name the backend");
    return makeNodeListPartitioner(spec.substr(6), DelegationSpec{fallbackBackend, {}, {}});
  }
  for (const auto &e : entries_)
    if (e.name == spec) return e.factory();
  auto endsWith = [&](const char *suffix) {
    std::string s(suffix);
    return spec.size() > s.size() && spec.compare(spec.size() - s.size(), s.size(), s) == 0;
  };
  std::error_code ec;
  if (endsWith(".yaml") || endsWith(".yml") || std::filesystem::is_regular_file(spec, ec))
    return loadSpecPartitioner(spec);
  std::string known;
  for (const auto &e : entries_) known += (known.empty() ? "" : ", ") + e.name;
  throw Error("unknown partitioner '" + spec + "' (registered: " + known +
              "; or a spec file FILE.yaml, or nodes:NAME,NAME;NAME)");
}

std::vector<std::pair<std::string, std::string>> PartitionerRegistry::list() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &e : entries_) out.emplace_back(e.name, e.summary);
  out.emplace_back("FILE.yaml", "a backend described by a spec file (backend_id, ops in edge.yaml DSL, sizes)");
  out.emplace_back("nodes:A,B;C", "explicit node groups, one delegate per group (with --backend)");
  return out;
}

} // namespace exir::partition
