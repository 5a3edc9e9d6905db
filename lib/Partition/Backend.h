//===- Partition/Backend.h - Backends: preprocess a subgraph into a blob -*- C++ -*-===//
//
// A backend turns an edge-dialect subgraph into the opaque bytes its runtime
// reads (upstream's BackendDetails.preprocess, pte-format.md §7.1). Backends
// live in a registry keyed by id; the id is also what the runtime looks up, so
// it is written into the delegate. Compile specs travel as raw bytes; the
// command line spells them KEY=VALUE (parseCompileSpec documents the forms).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <memory>
#include <string>
#include <vector>

namespace exir::partition {

/// What preprocess returns: the blob and any warnings for the user (library
/// code never prints; the tool shows them on stderr).
struct PreprocessResult {
  std::string processedBytes;
  std::vector<std::string> warnings;
};

class Backend {
public:
  virtual ~Backend();
  /// The id the registry and the runtime know the backend by.
  virtual std::string id() const = 0;
  /// One line for --list-backends.
  virtual std::string summary() const = 0;
  /// Compiles `subgraph` (an edge-dialect ExportedProgram that owns its
  /// constants). Throws exir::Error naming the node it cannot handle.
  virtual PreprocessResult preprocess(const ExportedProgram &subgraph,
                                      const std::vector<CompileSpec> &compileSpecs) const = 0;
};

class BackendRegistry {
public:
  /// The registry with the built-in backends (BackendWithCompilerDemo,
  /// ExirSubgraphJson).
  static BackendRegistry &builtin();

  /// Adds a backend; a second backend with the same id is refused.
  void add(std::shared_ptr<const Backend> backend);
  /// The backend with `id`, or null.
  const Backend *find(const std::string &id) const;
  /// Like find, but throws "unknown backend id 'X' (known: ...)".
  const Backend &require(const std::string &id) const;
  std::vector<std::string> ids() const;

private:
  std::vector<std::shared_ptr<const Backend>> backends_;
};

/// Parses a compile spec written KEY=VALUE. VALUE is one of
///   N          a decimal integer 0..255, stored as one byte (upstream's bytes([N]))
///   u8:N       one byte;  i32:N / i64:N  little-endian 4 / 8 bytes
///   str:TEXT   the UTF-8 bytes of TEXT
///   hex:0A0B   bytes in hexadecimal
///   b64:...    base64 bytes
/// Throws exir::Error "malformed compile spec '...': reason" otherwise.
CompileSpec parseCompileSpec(const std::string &text);

/// Readable form of a compile spec value for listings: the integer for one
/// byte, str:TEXT for printable text, hex:... otherwise.
std::string describeCompileSpecValue(const std::string &bytes);

/// The built-in backends, for tests and for registering in other registries.
std::shared_ptr<const Backend> makeBackendWithCompilerDemo();
std::shared_ptr<const Backend> makeSubgraphJsonBackend();

/// The record BackendWithCompilerDemo writes for one node, exposed for tests:
/// "op:demo::aten.sin.default, numel:1, dtype:torch.float32<debug_handle>2#".
std::string demoBackendRecord(const Graph &graph, const Node &node);

} // namespace exir::partition
