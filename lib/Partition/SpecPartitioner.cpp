//===- Partition/SpecPartitioner.cpp - A backend described by a YAML file -===//
//
// The `ops` list is handed to the edge.yaml parser itself, so the DSL and its
// error messages are exactly edge.yaml's. To keep its line numbers right, the
// parser sees the spec file with everything outside the `ops` list blanked
// out (characters replaced by spaces, newlines kept).
//
//===----------------------------------------------------------------------===//
#include "Partition/SpecPartitioner.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OperatorTable.h"
#include "Partition/Backend.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <yaml-cpp/yaml.h>

#include <limits>
#include <map>

namespace exir::partition {

namespace {

std::string lineOf(const YAML::Node &node) { return "line " + std::to_string(node.Mark().line + 1); }

class SpecPartitioner final : public Partitioner {
public:
  SpecPartitioner(PartitionerSpec spec, EdgeDtypeRules rules, std::string source)
      : spec_(std::move(spec)), rules_(std::move(rules)), source_(std::move(source)) {}

  std::string name() const override { return source_; }

  PartitionResult partition(const ExportedProgram &method) const override {
    const Graph &g = method.graph;
    std::vector<bool> supported(g.nodes.size(), false);
    for (size_t i = 0; i < g.nodes.size(); ++i) supported[i] = supports(g, g.nodes[i]);
    PartitionResult result;
    result.nodeTags.assign(g.nodes.size(), "");
    result.inputTags.assign(g.inputs.size(), "");
    auto deps = std::make_shared<const NodeDependencies>(NodeDependencies::of(g));
    result.dependencies = deps;
    for (const auto &p : proposePartitions(*deps, supported, spec_.fusion)) {
      std::string tag = "tag" + std::to_string(p.id);
      for (size_t n : p.nodes) result.nodeTags[n] = tag;
      result.partitionTags.set(tag, spec_.delegation);
    }
    if (spec_.ownConstants) tagOwnedConstants(method, result);
    return result;
  }

private:
  bool supports(const Graph &g, const Node &node) const {
    OpTarget t = parseTarget(node.target);
    if (t.dialect != TargetDialect::Edge) return false;
    const EdgeOpConstraint *c = rules_.find(t.qualifiedName());
    if (!c || !c->schema) return false;
    const OpSchema &schema = *c->schema;
    return !rules_.check(schema, EdgeDtypeRules::nodeDtypes(schema, g, node));
  }

  PartitionerSpec spec_;
  EdgeDtypeRules rules_;
  std::string source_;
};

/// `text` with every character outside [begin, end) turned into a space (newlines kept).
std::string keepOnly(const std::string &text, size_t begin, size_t end) {
  std::string out = text;
  for (size_t i = 0; i < out.size(); ++i)
    if ((i < begin || i >= end) && out[i] != '\n') out[i] = ' ';
  return out;
}

size_t sizeField(const YAML::Node &value, const std::string &key, const std::string &source) {
  try {
    int64_t v = value.as<int64_t>();
    if (v < 0) throw Error("'" + key + "' must not be negative", source, lineOf(value));
    return size_t(v);
  } catch (const YAML::Exception &) {
    throw Error("'" + key + "' must be an integer", source, lineOf(value));
  }
}

bool boolField(const YAML::Node &value, const std::string &key, const std::string &source) {
  try {
    return value.as<bool>();
  } catch (const YAML::Exception &) {
    throw Error("'" + key + "' must be true or false", source, lineOf(value));
  }
}

std::string stringField(const YAML::Node &value, const std::string &key, const std::string &source) {
  if (!value.IsScalar() || value.Scalar().empty())
    throw Error("'" + key + "' must be a non-empty string", source, lineOf(value));
  return value.Scalar();
}

} // namespace

std::unique_ptr<Partitioner> parseSpecPartitioner(const std::string &text, const std::string &sourceName) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception &e) {
    throw Error("YAML syntax error: " + e.msg, sourceName, "line " + std::to_string(e.mark.line + 1));
  }
  if (!root.IsMap()) throw Error("a partitioner spec must be a mapping (backend_id, ops, ...)", sourceName);

  PartitionerSpec spec;
  YAML::Node ops, opsKey, backendNode;
  std::vector<size_t> keyPositions;
  for (const auto &kv : root) keyPositions.push_back(size_t(kv.first.Mark().pos));
  for (const auto &kv : root) {
    std::string key = kv.first.Scalar();
    const YAML::Node &value = kv.second;
    if (key == "backend_id") {
      spec.delegation.backendId = stringField(value, key, sourceName);
      backendNode = value;
    } else if (key == "preprocess") {
      spec.delegation.preprocessor = stringField(value, key, sourceName);
    } else if (key == "compile_specs") {
      if (!value.IsSequence()) throw Error("'compile_specs' must be a list of KEY=VALUE strings", sourceName, lineOf(value));
      for (const auto &item : value) {
        try {
          spec.delegation.compileSpecs.push_back(parseCompileSpec(stringField(item, "compile_specs", sourceName)));
        } catch (Error &e) {
          throw e.withFile(sourceName).withLocation(lineOf(item));
        }
      }
    } else if (key == "min_partition_size") {
      spec.fusion.minPartitionSize = sizeField(value, key, sourceName);
    } else if (key == "max_partition_size") {
      spec.fusion.maxPartitionSize = sizeField(value, key, sourceName);
    } else if (key == "own_constants") {
      spec.ownConstants = boolField(value, key, sourceName);
    } else if (key == "fusion") {
      std::string mode = stringField(value, key, sourceName);
      if (mode == "connected") spec.fusion.mode = FusionMode::Connected;
      else if (mode == "upstream") spec.fusion.mode = FusionMode::Upstream;
      else throw Error("'fusion' must be 'connected' or 'upstream', not '" + mode + "'", sourceName, lineOf(value));
    } else if (key == "ops") {
      ops = value;
      opsKey = kv.first;
    } else {
      throw Error("unknown key '" + key +
                      "' (expected backend_id, preprocess, compile_specs, min_partition_size, max_partition_size, "
                      "own_constants, fusion, ops)",
                  sourceName, lineOf(kv.first));
    }
  }
  if (spec.delegation.backendId.empty()) throw Error("the spec names no 'backend_id'", sourceName);
  if (spec.fusion.maxPartitionSize && spec.fusion.maxPartitionSize < spec.fusion.minPartitionSize)
    throw Error("max_partition_size is smaller than min_partition_size", sourceName);
  const BackendRegistry &backends = BackendRegistry::builtin();
  if (!backends.find(spec.delegation.preprocessorId())) {
    std::string known;
    for (const auto &id : backends.ids()) known += (known.empty() ? "" : ", ") + id;
    throw Error("unknown backend id '" + spec.delegation.preprocessorId() + "' (registered backends: " + known +
                    "; a new backend can name one of them under 'preprocess:' to produce its blob)",
                sourceName, lineOf(backendNode));
  }
  if (!ops.IsSequence() || ops.size() == 0)
    throw Error("'ops' must be a non-empty list of edge.yaml entries", sourceName,
                opsKey.IsDefined() && !opsKey.IsNull() ? lineOf(opsKey) : std::string());

  // Hand the `ops` list, in place, to the edge.yaml parser.
  size_t begin = size_t(ops.Mark().pos), end = text.size();
  for (size_t pos : keyPositions)
    if (pos > begin) end = std::min(end, pos);
  EdgeDtypeRules rules = EdgeDtypeRules::parse(keepOnly(text, begin, end), sourceName);
  if (rules.size() == 0) throw Error("'ops' lists no operators", sourceName, lineOf(ops));
  return std::make_unique<SpecPartitioner>(std::move(spec), std::move(rules), sourceName);
}

std::unique_ptr<Partitioner> loadSpecPartitioner(const std::string &path) {
  return parseSpecPartitioner(readFileOrStdin(path), path);
}

} // namespace exir::partition
