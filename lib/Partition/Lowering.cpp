//===- Partition/Lowering.cpp - to_backend: flows 1 and 2, shared pieces --===//
//
// Flow 1 (a method lowered whole) and flow 2 (a lowered module bound to the
// calls that name it), the helpers flow 3 shares with them (LoweringDetail.h:
// extracting a subgraph, the call node, the delegate), the delegated-program
// verifier and blob storage. Flow 3 is in PartitionFlow.cpp.
//
//===----------------------------------------------------------------------===//
#include "Partition/Lowering.h"
#include "Partition/LoweringDetail.h"
#include "Edge/EdgeUtil.h"
#include "IR/ValueNames.h"
#include "Edge/OpInfo.h"
#include "Edge/Passes.h"
#include "IR/Verifier.h"
#include "Support/Error.h"
#include "Support/FileIO.h"
#include "Support/Hash.h"

#include <functional>
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace exir::partition {

std::pair<std::string, std::string> splitDelegateReference(const std::string &reference) {
  auto dash = reference.find('-');
  if (dash == std::string::npos) return {reference, ""};
  return {reference.substr(0, dash), reference.substr(dash + 1)};
}

// Declared in LoweringDetail.h; the helpers only this file uses are in
// anonymous namespaces among them.
namespace detail {

bool isDelegateCall(const Node &node) { return node.target == kDelegateTarget; }

bool selected(const LoweringOptions &options, const std::string &method) {
  return options.methods.empty() ||
         std::find(options.methods.begin(), options.methods.end(), method) != options.methods.end();
}

void checkSelectedMethodsExist(const Program &program, const LoweringOptions &options) {
  for (const auto &m : options.methods)
    if (!program.methods.contains(m)) throw Error("--method '" + m + "': the program has no such method");
}

std::string nextDelegateName(const Program &program) {
  for (size_t i = 0;; ++i) {
    std::string name = "lowered_module_" + std::to_string(i);
    if (!program.delegates.contains(name)) return name;
  }
}

int64_t maxDebugHandle(const Graph &graph) {
  int64_t best = 0;
  for (const Node &n : graph.nodes)
    if (const SharedString *h = n.metadata.find("debug_handle")) {
      // from_chars takes the usual all-digits handle without stoll's locale
      // and exception machinery (this loop: 35M -> 18M instructions on
      // llama-100k); anything else goes through stoll as it always did.
      int64_t v = 0;
      auto [end, error] = std::from_chars(h->data(), h->data() + h->size(), v);
      if (error == std::errc() && end == h->data() + h->size()) {
        best = std::max(best, v);
        continue;
      }
      try {
        best = std::max<int64_t>(best, std::stoll(h->str()));
      } catch (const std::exception &) {
        // A non-numeric handle is not ours to judge; it just does not count.
      }
    }
  return best;
}

namespace {
/// torch treespec JSON strings for the lowered subgraph's module call signature.
std::string treespecLeaves(size_t n) {
  static constexpr std::string_view kLeaf = "{\"type\": null, \"context\": null, \"children_spec\": []}";
  std::string out;
  out.reserve(n * (kLeaf.size() + 2));
  for (size_t i = 0; i < n; ++i) {
    if (i) out += ", ";
    out += kLeaf;
  }
  return out;
}
std::string inputTreespec(size_t n) {
  return "[1, {\"type\": \"builtins.tuple\", \"context\": \"null\", \"children_spec\": [{\"type\": "
         "\"builtins.tuple\", \"context\": \"null\", \"children_spec\": [" +
         treespecLeaves(n) +
         "]}, {\"type\": \"builtins.dict\", \"context\": \"[]\", \"children_spec\": []}]}]";
}
std::string outputListTreespec(size_t n) {
  return "[1, {\"type\": \"builtins.list\", \"context\": \"null\", \"children_spec\": [" + treespecLeaves(n) + "]}]";
}

} // namespace

/// Copies the metadata tables of `name` from `from` into `to`.
void copyValueMeta(const Graph &from, Graph &to, const std::string &name) {
  // The verifier keeps a name in one table, so the first that holds it is the only one.
  if (const TensorMeta *m = from.tensorValues.find(name)) to.tensorValues.set(name, *m);
  else if (const SymInt *s = from.symIntValues.find(name)) to.symIntValues.set(name, *s);
  else if (const SymBool *s = from.symBoolValues.find(name)) to.symBoolValues.set(name, *s);
  else if (const SymFloat *s = from.symFloatValues.find(name)) to.symFloatValues.set(name, *s);
}

namespace {
/// An ExportedProgram shell carrying the parent's versions and metadata.
ExportedProgram emptyLike(const ExportedProgram &parent) {
  ExportedProgram ep;
  ep.metadata = parent.metadata;
  ep.treespecNamedtupleFields = parent.treespecNamedtupleFields;
  ep.opsetVersion = parent.opsetVersion;
  ep.rangeConstraints = parent.rangeConstraints;
  ep.schemaVersion = parent.schemaVersion;
  ep.verifiers = parent.verifiers;
  ep.torchVersion = parent.torchVersion;
  return ep;
}

/// Appends tensor `name` to one side of a subgraph's boundary: the subgraph's
/// list of names, its graph's inputs or outputs, and its signature's specs.
template <class Spec, class Kind>
void appendBoundaryTensor(std::vector<std::string> &names, std::vector<Argument> &args, std::vector<Spec> &specs,
                          Kind kind, const std::string &name) {
  names.push_back(name);
  args.push_back(Argument::tensor(name));
  Spec spec;
  spec.kind = kind;
  spec.arg = Argument::tensor(name);
  specs.push_back(std::move(spec));
}

/// The names of one partition's boundary bookkeeping: a handful in the usual
/// partition (one mm and its add), where hashing and a node allocation per
/// name cost more than comparing them all; indexed once it grows. The names
/// are views of the parent graph's strings, which outlive the extraction.
class PartitionNameSet {
public:
  bool contains(std::string_view name) const {
    if (!index_.empty()) return index_.count(name) != 0;
    return std::find(names_.begin(), names_.end(), name) != names_.end();
  }
  /// False when `name` was in already.
  bool insert(std::string_view name) {
    if (!index_.empty()) return index_.insert(name).second;
    if (std::find(names_.begin(), names_.end(), name) != names_.end()) return false;
    names_.push_back(name);
    if (names_.size() > kLinearLimit) index_.insert(names_.begin(), names_.end());
    return true;
  }

private:
  static constexpr size_t kLinearLimit = 16;
  std::vector<std::string_view> names_;
  std::unordered_set<std::string_view> index_;
};

void setRootCallSignature(ExportedProgram &ep, std::vector<std::string> userInputNames, size_t outputs) {
  ModuleCallSignature sig;
  sig.inSpec = inputTreespec(userInputNames.size());
  sig.outSpec = outputListTreespec(outputs);
  sig.forwardArgNames = std::move(userInputNames);
  ep.moduleCallGraph.clear();
  ep.moduleCallGraph.push_back(ModuleCallEntry{"", std::move(sig)});
}

} // namespace

Subgraph extractSubgraph(const ExportedProgram &parent, const std::vector<const Node *> &nodes,
                         const std::vector<size_t> &ownedInputs,
                         const std::function<bool(const std::string &)> &usedOutside) {
  Subgraph sub = extractSubgraphWithoutNodes(parent, nodes, ownedInputs, usedOutside);
  for (const Node *node : nodes) sub.program.graph.nodes.push_back(*node);
  return sub;
}

Subgraph extractSubgraphWithoutNodes(const ExportedProgram &parent, const std::vector<const Node *> &nodes,
                                     const std::vector<size_t> &ownedInputs,
                                     const std::function<bool(const std::string &)> &usedOutside) {
  const Graph &g = parent.graph;
  Subgraph sub;
  sub.program = emptyLike(parent);
  Graph &sg = sub.program.graph;

  PartitionNameSet definedInside;
  for (const Node *node : nodes)
    for (const auto &o : node->outputs) forEachTensorName(o, [&](const std::string &n) { definedInside.insert(n); });
  PartitionNameSet owned;
  for (size_t k : ownedInputs) {
    const std::string &name = g.inputs[k].name;
    owned.insert(name);
    sg.inputs.push_back(g.inputs[k]);
    sub.program.signature.inputSpecs.push_back(parent.signature.inputSpecs[k]);
    copyValueMeta(g, sg, name);
  }
  // Outside values in order of first use.
  PartitionNameSet seen;
  for (const Node *np : nodes) {
    const Node &node = *np;
    for (const auto &in : node.inputs) {
      forEachTensorName(in.arg, [&](const std::string &u) {
        if (definedInside.contains(u) || owned.contains(u) || !seen.insert(u)) return;
        appendBoundaryTensor(sub.userInputs, sg.inputs, sub.program.signature.inputSpecs, InputKind::UserInput, u);
        copyValueMeta(g, sg, u);
      });
      for (const auto &s : in.arg.syms)
        if (s.isName && !definedInside.contains(s.name))
          throw Error("a partition node uses the symbolic value '" + s.name +
                          "' computed outside the partition; delegates take tensor inputs only",
                      {}, "node " + node.displayName());
    }
    for (const auto &o : node.outputs) {
      forEachTensorName(o, [&](const std::string &n) { copyValueMeta(g, sg, n); });
      for (const auto &s : o.syms)
        if (s.isName) copyValueMeta(g, sg, s.name);
    }
  }
  // Values used after the partition, in node order.
  for (const Node *node : nodes)
    for (const auto &o : node->outputs) {
      forEachTensorName(o, [&](const std::string &n) {
        if (usedOutside(n))
          appendBoundaryTensor(sub.outputs, sg.outputs, sub.program.signature.outputSpecs, OutputKind::UserOutput, n);
      });
    }
  setRootCallSignature(sub.program, sub.userInputs, sub.outputs.size());
  sg.nodes.reserve(nodes.size());
  return sub;
}

/// FX's name for a new node: `base`, base_1, ... unused by nodes and values.
std::string freshNodeName(const Graph &graph, const std::string &base) {
  std::unordered_set<std::string> taken;
  for (const Node &n : graph.nodes)
    if (n.name) taken.insert(*n.name);
  for (int k = 0;; ++k) {
    std::string name = k ? base + "_" + std::to_string(k) : base;
    if (!taken.count(name) && graph.freshName(name) == name) return name;
  }
}

/// The executorch_call_delegate node: (module name, *inputs) -> outputs. Its
/// FX name (Node.name) is kept so printouts read like torch's.
Node makeDelegateCall(std::string nodeName, const std::string &delegateName, const std::vector<std::string> &inputs,
                      const std::vector<std::string> &outputs, int64_t debugHandle) {
  Node call;
  call.name = std::move(nodeName);
  call.target = kDelegateTarget;
  call.inputs.push_back({"", Argument::string(delegateName), ArgumentPassing::Positional});
  for (const auto &in : inputs) call.inputs.push_back({"", Argument::tensor(in), ArgumentPassing::Positional});
  for (const auto &out : outputs) call.outputs.push_back(Argument::tensor(out));
  call.isHopSingleTensorReturn = false;
  static const SharedString kKey("debug_handle"); // one record for every call's key
  call.metadata.set(kKey, std::to_string(debugHandle));
  return call;
}

namespace {
// The constants the delegate owns (its subgraph's parameters, buffers and
// tensor constants) leave the method, so their bytes travel with the delegate
// and exir-emit writes them as named data keyed by FQN (upstream's
// NamedDataStore); the built-in and spec-file backends keep their blobs free
// of weights.
OrderedMap<ConstantTensor> ownedConstantData(const Program &program, const ExportedProgram &original) {
  OrderedMap<ConstantTensor> out;
  for (const auto &spec : original.signature.inputSpecs) {
    if (spec.kind != InputKind::Parameter && spec.kind != InputKind::Buffer && spec.kind != InputKind::TensorConstant)
      continue;
    const ConstantTensor *c = program.constants.find(spec.target);
    if (!c)
      throw Error("constant '" + spec.target + "', which the delegate owns, has no data (a torch.export JSON without "
                  "its weights? pass the .pt2, or exir-edge --weights FILE)");
    out.set(spec.target, *c);
  }
  return out;
}

} // namespace

Delegate makeDelegate(const Program &program, const std::string &backendId, const std::vector<CompileSpec> &specs,
                      std::string blob, ExportedProgram original) {
  Delegate d;
  d.namedData = ownedConstantData(program, original);
  d.backendId = backendId;
  d.compileSpecs = specs;
  d.processed.length = blob.size();
  // No digest yet: only a blob that goes to the sidecar needs one
  // (storeDelegateBlobs). One per partition here and again there was 15% of
  // the partition step's instructions on llama-10k.
  d.processed.inlineBytes = std::move(blob);
  d.original = std::make_shared<ExportedProgram>(std::move(original));
  return d;
}

std::string describeDelegate(const std::string &name, const std::string &method, const Delegate &d,
                             size_t nodeCount) {
  return name + " (" + method + "): " + d.backendId + ", " + std::to_string(nodeCount) + " node" +
         (nodeCount == 1 ? "" : "s") + ", " + std::to_string(d.processed.length) + " bytes";
}

/// Runs a backend's preprocess, attributing its errors to the partition.
PreprocessResult runPreprocess(const Backend &backend, const ExportedProgram &sub, const std::vector<CompileSpec> &specs,
                               const std::string &where, LoweringReport &report) {
  PreprocessResult result;
  try {
    result = backend.preprocess(sub, specs);
  } catch (Error &e) {
    std::string location = e.location().empty() ? where : where + ", " + e.location();
    throw Error(e.message(), e.file(), location);
  }
  for (auto &w : result.warnings) report.warnings.push_back(std::move(w));
  return result;
}

namespace {
std::string metaText(const TensorMeta &m) {
  std::string out = std::string(shortName(m.dtype)) + "[";
  for (size_t i = 0; i < m.sizes.size(); ++i)
    out += (i ? ", " : "") + (m.sizes[i].isExpr ? m.sizes[i].expr() : std::to_string(m.sizes[i].value));
  return out + "]";
}

bool sameShape(const TensorMeta &a, const TensorMeta &b) { return a.dtype == b.dtype && a.sizes == b.sizes; }

/// The user inputs and outputs of a delegate's original subgraph.
std::pair<std::vector<std::string>, std::vector<std::string>> originalInterface(const ExportedProgram &original) {
  std::vector<std::string> ins, outs;
  for (size_t i = 0; i < original.graph.inputs.size(); ++i) {
    bool user = i >= original.signature.inputSpecs.size() ||
                original.signature.inputSpecs[i].kind == InputKind::UserInput;
    if (user) ins.push_back(original.graph.inputs[i].name);
  }
  for (size_t i = 0; i < original.graph.outputs.size(); ++i) {
    bool user = i >= original.signature.outputSpecs.size() ||
                original.signature.outputSpecs[i].kind == OutputKind::UserOutput;
    if (user) outs.push_back(original.graph.outputs[i].name);
  }
  return {ins, outs};
}

/// Checks one call against its delegate's original subgraph; throws at `where`.
void checkCallSignature(const Graph &g, const Node &call, const std::string &delegateName, const Delegate &d,
                        const std::string &where) {
  if (!d.original) return;
  auto [ins, outs] = originalInterface(*d.original);
  const Graph &og = d.original->graph;
  size_t given = call.inputs.size() - 1;
  if (given != ins.size())
    throw Error("the call passes " + std::to_string(given) + " inputs but " + delegateName + " takes " +
                    std::to_string(ins.size()),
                {}, where);
  for (size_t k = 0; k < ins.size(); ++k) {
    const Argument &a = call.inputs[k + 1].arg;
    if (a.kind != ArgKind::Tensor) throw Error("delegate input " + std::to_string(k) + " is not a tensor", {}, where);
    const TensorMeta *have = g.tensorValues.find(a.name);
    const TensorMeta *want = og.tensorValues.find(ins[k]);
    if (have && want && !sameShape(*have, *want))
      throw Error("delegate input " + std::to_string(k) + " '" + a.name + "' is " + metaText(*have) + " but " +
                      delegateName + " expects " + metaText(*want) + " ('" + ins[k] + "')",
                  {}, where);
  }
  std::vector<std::string> produced;
  for (const auto &o : call.outputs) o.collectTensorNames(produced);
  if (produced.size() != outs.size())
    throw Error("the call has " + std::to_string(produced.size()) + " outputs but " + delegateName + " returns " +
                    std::to_string(outs.size()),
                {}, where);
  for (size_t k = 0; k < outs.size(); ++k) {
    const TensorMeta *have = g.tensorValues.find(produced[k]);
    const TensorMeta *want = og.tensorValues.find(outs[k]);
    if (have && want && !sameShape(*have, *want))
      throw Error("delegate output " + std::to_string(k) + " '" + produced[k] + "' is " + metaText(*have) + " but " +
                      delegateName + " returns " + metaText(*want) + " ('" + outs[k] + "')",
                  {}, where);
  }
}

/// Calls fn(graph, node, JSON location) for every executorch_call_delegate node.
void forEachDelegateCall(const Program &program,
                         const std::function<void(const Graph &, const Node &, const std::string &)> &fn) {
  for (const auto &[methodName, method] : program.methods) {
    const Graph &g = method.program.graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node &node = g.nodes[i];
      if (!isDelegateCall(node)) continue;
      fn(g, node,
         "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" + node.displayName() + ")");
    }
  }
}

} // namespace

} // namespace detail

using namespace detail;

void requireResolvedCalls(const Program &program) {
  forEachDelegateCall(program, [&](const Graph &, const Node &node, const std::string &where) {
    if (node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::String)
      throw Error("executorch_call_delegate's first argument must name the lowered module", {}, where);
    const std::string &ref = node.inputs[0].arg.name;
    if (!program.delegates.contains(ref)) {
      auto [module, backend] = splitDelegateReference(ref);
      throw Error("executorch_call_delegate calls lowered module '" + module + "'" +
                      (backend.empty() ? "" : " (backend " + backend + ")") +
                      ", which the program does not contain; pass --lowered " + module +
                      "=FILE with the artifact exir-partition --whole-module wrote for it",
                  {}, where);
    }
  });
}

//===----------------------------------------------------------------------===//
// Flow 1: whole program
//===----------------------------------------------------------------------===//

void lowerWholeProgram(Program &program, const std::string &backendId, const std::vector<CompileSpec> &compileSpecs,
                       const LoweringOptions &options, LoweringReport &report) {
  checkSelectedMethodsExist(program, options);
  requireResolvedCalls(program);
  const Backend &backend = options.backends->require(backendId);
  for (auto &[methodName, method] : program.methods) {
    if (!selected(options, methodName)) continue;
    ExportedProgram &ep = method.program;
    std::string where = "method " + methodName;
    for (const auto &node : ep.graph.nodes)
      if (isDelegateCall(node))
        throw Error("the method already calls a delegate; whole-module lowering takes an edge program", {}, where);
    for (const auto &spec : ep.signature.outputSpecs)
      if (spec.kind != OutputKind::UserOutput)
        throw Error(std::string("whole-module lowering cannot keep the ") + outputKindTag(spec.kind) +
                        " output '" + spec.arg.name + "' visible outside the delegate",
                    {}, where);
    for (const auto &out : ep.graph.outputs)
      if (out.kind != ArgKind::Tensor)
        throw Error(std::string("the method returns a non-tensor (") + argKindTag(out.kind) +
                        "); a delegate returns tensors only",
                    {}, where);

    PreprocessResult pre = runPreprocess(backend, ep, compileSpecs, where, report);

    ExportedProgram parent = emptyLike(ep);
    parent.moduleCallGraph = ep.moduleCallGraph;
    std::vector<std::string> userInputs;
    for (size_t i = 0; i < ep.graph.inputs.size(); ++i) {
      const InputSpec &spec = ep.signature.inputSpecs.at(i);
      if (spec.kind != InputKind::UserInput) continue; // the delegate owns every constant
      const Argument &in = ep.graph.inputs[i];
      if (in.kind != ArgKind::Tensor)
        throw Error(std::string("user input ") + std::to_string(i) + " is not a tensor (" + argKindTag(in.kind) +
                        "); a delegate takes tensors only",
                    {}, where);
      parent.graph.inputs.push_back(in);
      parent.signature.inputSpecs.push_back(spec);
      copyValueMeta(ep.graph, parent.graph, in.name);
      userInputs.push_back(in.name);
    }
    std::vector<std::string> results;
    for (const auto &out : ep.graph.outputs) {
      std::string name = parent.graph.freshName("getitem");
      parent.graph.tensorValues.set(name, edge::metaOf(ep.graph, out.name));
      results.push_back(name);
      OutputSpec spec;
      spec.kind = OutputKind::UserOutput;
      spec.arg = Argument::tensor(name);
      parent.signature.outputSpecs.push_back(spec);
      parent.graph.outputs.push_back(Argument::tensor(name));
    }
    std::string name = nextDelegateName(program);
    parent.graph.nodes.push_back(makeDelegateCall(freshNodeName(parent.graph, "executorch_call_delegate"), name,
                                                  userInputs, results, maxDebugHandle(ep.graph) + 1));

    std::vector<CompileSpec> specs = compileSpecs;
    size_t nodeCount = ep.graph.nodes.size();
    Delegate d = makeDelegate(program, backendId, specs, std::move(pre.processedBytes), std::move(ep));
    report.delegatesCreated.push_back(describeDelegate(name, methodName, d, nodeCount));
    program.delegates.set(name, std::move(d));
    method.program = std::move(parent);
  }
  program.stage = Stage::Delegated;
}

//===----------------------------------------------------------------------===//
// Flow 2: composition
//===----------------------------------------------------------------------===//

void composeLoweredModule(Program &program, const std::string &moduleName, const Program &lowered,
                          LoweringReport &report) {
  const Delegate *delegate = lowered.delegates.find(moduleName);
  if (!delegate) {
    if (lowered.delegates.size() != 1)
      throw Error("the lowered artifact has " + std::to_string(lowered.delegates.size()) +
                  " delegates and none is named '" + moduleName +
                  "'; pass an artifact written by exir-partition --whole-module (one delegate)");
    delegate = &lowered.delegates.begin()->second;
  }
  if (!delegate->original)
    throw Error("the lowered module has no original subgraph, so its signature cannot be checked");
  if (const Delegate *existing = program.delegates.find(moduleName); existing && !(*existing == *delegate))
    throw Error("the program already has a different delegate named '" + moduleName + "'");

  size_t calls = 0;
  for (auto &[methodName, method] : program.methods) {
    Graph &g = method.program.graph;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      Node &node = g.nodes[i];
      if (!isDelegateCall(node) || node.inputs.empty() || node.inputs[0].arg.kind != ArgKind::String) continue;
      auto [module, backend] = splitDelegateReference(node.inputs[0].arg.name);
      if (module != moduleName) continue;
      std::string where = "/methods/" + methodName + "/graph_module/graph/nodes/" + std::to_string(i) + " (" +
                          node.displayName() + ")";
      if (!backend.empty() && backend != delegate->backendId)
        throw Error("the graph calls " + moduleName + " on backend '" + backend + "' but the lowered module is for '" +
                        delegate->backendId + "'",
                    {}, where);
      checkCallSignature(g, node, moduleName, *delegate, where);
      node.inputs[0].arg.name = moduleName;
      ++calls;
    }
  }
  if (!calls) throw Error("no executorch_call_delegate in the program calls '" + moduleName + "'");
  program.delegates.set(moduleName, *delegate);
  report.delegatesCreated.push_back(moduleName + ": " + delegate->backendId + ", " + std::to_string(calls) +
                                    " call" + (calls == 1 ? "" : "s") + ", " +
                                    std::to_string(delegate->processed.length) + " bytes (composed)");
  program.stage = Stage::Delegated;
}

//===----------------------------------------------------------------------===//
// Verification and blob storage
//===----------------------------------------------------------------------===//

void verifyDelegatedProgram(const Program &program) {
  edge::DtypeRules rules = edge::DtypeRules::forProgram(program);
  edge::verifyEdgeProgram(program, rules);
  requireResolvedCalls(program);
  forEachDelegateCall(program, [&](const Graph &g, const Node &node, const std::string &where) {
    const std::string &name = node.inputs[0].arg.name;
    checkCallSignature(g, node, name, *program.delegates.find(name), where);
  });
  for (const auto &[name, d] : program.delegates) {
    if (!d.original) continue;
    try {
      edge::verifyEdgeMethod(*d.original, "forward", rules);
    } catch (Error &e) {
      throw Error("original module of " + name + ": " + e.message(), e.file(), "/delegates/" + name);
    }
    for (const auto &spec : d.original->signature.inputSpecs)
      if ((spec.kind == InputKind::Parameter || spec.kind == InputKind::Buffer ||
           spec.kind == InputKind::TensorConstant) &&
          !program.constants.contains(spec.target))
        throw Error("original module of " + name + " owns constant '" + spec.target +
                        "', which is not in the constants table",
                    {}, "/delegates/" + name);
  }
}

void storeDelegateBlobs(Program &program, const std::string &outputPath, uint64_t inlineLimit) {
  if (outputPath == "-") return;
  namespace fs = std::filesystem;
  std::string sidecar = fs::absolute(fs::path(outputPath + ".blobs")).lexically_normal().string();

  // Blobs already in the sidecar we are about to rewrite come back into memory first.
  for (auto &[name, d] : program.delegates)
    if (!d.processed.inlineBytes && d.processed.file == sidecar) {
      d.processed.inlineBytes = readFileRange(sidecar, d.processed.offset, d.processed.length, d.processed.crc32);
      d.processed.file.clear();
      d.processed.offset = 0;
      d.processed.fileSize.reset();
      d.processed.crc32.reset();
      d.processed.sha256.clear(); // the input's, unchecked: recomputed where needed
    }
  std::string content;
  std::map<std::string, uint64_t> offsetOf; // sha256 -> offset in the sidecar
  for (auto &[name, d] : program.delegates) {
    DataRef &ref = d.processed;
    if (!ref.inlineBytes || ref.inlineBytes->size() <= inlineLimit) continue;
    // The digest keys the deduplication and goes into the reference: always
    // computed here, never taken from the input.
    ref.sha256 = sha256Hex(*ref.inlineBytes);
    auto [it, inserted] = offsetOf.emplace(ref.sha256, content.size());
    if (inserted) content += *ref.inlineBytes;
    ref.file = sidecar;
    ref.offset = it->second;
    ref.length = ref.inlineBytes->size();
    ref.crc32 = crc32Update(0, *ref.inlineBytes);
    ref.inlineBytes.reset();
  }
  // The sidecar's size goes into every reference, so a replaced or truncated
  // sidecar is noticed by the next tool (Serde/ProgramReader.h, checkDataFiles).
  for (auto &[name, d] : program.delegates)
    if (d.processed.file == sidecar) d.processed.fileSize = content.size();
  if (!offsetOf.empty()) writeFileAtomically(sidecar, content);
}

} // namespace exir::partition
