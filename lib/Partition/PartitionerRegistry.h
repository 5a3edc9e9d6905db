//===- Partition/PartitionerRegistry.h - Partitioners by name ---*- C++ -*-===//
//
// The names exir-partition's --partitioner takes: registered partitioners,
// spec files (SpecPartitioner.h) and explicit node lists. The registry sits
// above both Partitioner and SpecPartitioner, so neither includes the other's
// implementation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Partition/Partitioner.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace exir::partition {

class PartitionerRegistry {
public:
  using Factory = std::function<std::unique_ptr<Partitioner>()>;
  static PartitionerRegistry &builtin();

  void add(std::string name, std::string summary, Factory factory);
  /// A registered name, a spec file (FILE.yaml / FILE.yml or an existing
  /// file), or "nodes:..." (then `fallbackBackend` names the backend).
  /// Throws naming the registered partitioners when `spec` is none of these.
  std::unique_ptr<Partitioner> create(const std::string &spec, const std::string &fallbackBackend = {}) const;
  /// "name  summary" lines for --list-partitioners.
  std::vector<std::pair<std::string, std::string>> list() const;

private:
  struct Entry {
    std::string name, summary;
    Factory factory;
  };
  std::vector<Entry> entries_;
};

} // namespace exir::partition
