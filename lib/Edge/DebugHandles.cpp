//===- Edge/DebugHandles.cpp - number nodes for profiling maps ------------===//
//
// Upstream's DebugHandleGeneratorPass gives every node a `debug_handle`; the
// BackendWithCompilerDemo blob embeds it (`<debug_handle>2` for the sin node of
// the seed, whose placeholder x is node 1). We count graph inputs first, then
// call nodes, starting at 1. Existing handles are kept.
//
//===----------------------------------------------------------------------===//
#include "Edge/Passes.h"

namespace exir::edge {

void generateDebugHandles(Program &program) {
  static const SharedString kKey("debug_handle"); // one record for every node's key
  for (auto &[methodName, method] : program.methods) {
    Graph &g = method.program.graph;
    int64_t next = int64_t(g.inputs.size()) + 1;
    for (Node &node : g.nodes) {
      if (!node.metadata.contains("debug_handle")) node.metadata.set(kKey, std::to_string(next));
      ++next;
    }
  }
}

} // namespace exir::edge
