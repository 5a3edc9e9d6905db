//===- Edge/DescribeOp.cpp - What the tools know about one operator -------===//
#include "Edge/DescribeOp.h"
#include "Edge/OpInfo.h"
#include "Ops/EdgeYaml.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <algorithm>
#include <sstream>
#include <utility>
#include <vector>

namespace exir::edge {

namespace {

constexpr CppDecomposition kCppDecompositions[] = {
    {"aten::relu6", "decompose-activations", "aten::hardtanh"},
    {"aten::silu", "decompose-activations", "aten::sigmoid, aten::mul.Tensor"},
    {"aten::softmax.int", "decompose-activations", "aten::_softmax"},
    {"aten::log_softmax.int", "decompose-activations", "aten::_log_softmax"},
    {"aten::conv1d", "decompose-convolution", "aten::convolution"},
    {"aten::conv2d", "decompose-convolution", "aten::convolution"},
    {"aten::conv3d", "decompose-convolution", "aten::convolution"},
    {"aten::conv1d.padding", "decompose-convolution", "aten::convolution (\"same\" with an odd total: aten::constant_pad_nd first)"},
    {"aten::conv2d.padding", "decompose-convolution", "aten::convolution (\"same\" with an odd total: aten::constant_pad_nd first)"},
    {"aten::conv3d.padding", "decompose-convolution", "aten::convolution (\"same\" with an odd total: aten::constant_pad_nd first)"},
    {"aten::einsum", "decompose-einsum", "aten::permute, aten::sum.dim_IntList, aten::bmm, aten::view (symbolic sizes: aten::unsqueeze, aten::mul.Tensor, aten::sum.dim_IntList)"},
    {"aten::lstm.input", "decompose-rnn", "unrolled gates (aten::addmm, aten::sigmoid, aten::tanh, ...)"},
    {"aten::gru.input", "decompose-rnn", "unrolled gates (aten::addmm, aten::sigmoid, aten::tanh, ...)"},
    {"aten::rnn_tanh.input", "decompose-rnn", "unrolled steps (aten::addmm, aten::tanh, ...)"},
    {"aten::rnn_relu.input", "decompose-rnn", "unrolled steps (aten::addmm, aten::relu, ...)"},
    {"aten::_unsafe_view", "replace-view-ops", "aten::view_copy"},
    {"aten::reshape", "decompose-shape-ops", "aten::view_copy"},
    {"aten::flatten.using_ints", "decompose-shape-ops", "aten::view_copy"},
    {"aten::split.Tensor", "decompose-shape-ops", "aten::slice_copy.Tensor"},
    {"aten::split.sizes", "decompose-shape-ops", "aten::slice_copy.Tensor"},
    {"aten::split_with_sizes", "decompose-shape-ops", "aten::slice_copy.Tensor"},
    {"aten::unbind.int", "decompose-shape-ops", "aten::select_copy.int"},
    {"aten::dropout", "decompose-shape-ops", "its input (eval mode)"},
    {"aten::contiguous", "decompose-shape-ops", "its input"},
    {"aten::detach", "decompose-shape-ops", "its input"},
    {"aten::batch_norm", "decompose-batch-norm", "aten::_native_batch_norm_legit_no_training (eval)"},
};

} // namespace

std::span<const CppDecomposition> cppDecompositions() { return kCppDecompositions; }

namespace {

size_t editDistance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string displayName(const OpSchema &s) {
  return s.ns + "::" + s.name + (s.overload.empty() ? "" : "." + s.overload);
}

/// "did you mean": every overload of the name asked for, else the closest names.
std::string closestNames(const std::string &key) {
  const OperatorTable &table = OperatorTable::builtin();
  std::vector<std::string> overloads;
  std::vector<std::pair<size_t, std::string>> scored;
  for (const OpSchema *s : table.all()) {
    std::string name = displayName(*s);
    if (s->ns + "::" + s->name == key) overloads.push_back(name);
    scored.emplace_back(editDistance(key, name), name);
  }
  if (!overloads.empty()) {
    std::string list;
    for (const auto &o : overloads) list += (list.empty() ? "" : ", ") + o;
    return "it has overloads " + list + ": name one";
  }
  std::sort(scored.begin(), scored.end());
  std::string list;
  for (size_t i = 0; i < scored.size() && i < 3; ++i) list += (i ? ", " : "") + scored[i].second;
  return "closest names: " + list;
}

} // namespace

std::string describeOp(const std::string &name, const std::vector<const EdgeDtypeRules *> &dtypeRules,
                       const DecompositionRules &decompositions) {
  const OperatorTable &table = OperatorTable::builtin();
  std::string key = OperatorTable::normalizeName(name);
  const OperatorInfo *info = table.info(key);
  if (!info)
    throw Error("operator '" + name + "' is not in the operator table (" + closestNames(key) +
                "; custom ops come from --op-library FILE)");
  const OpSchema &schema = info->schema;
  std::ostringstream out;
  out << schema.str() << "\n";
  out << "  core ATen: " << (info->isCore ? "yes" : isCoreOp(key) ? "no, but edge allows it (a _copy op)" : "no")
      << "\n";
  if (schema.isOutVariant())
    out << "  out variant: is one" << (info->functional ? " (of " + displayName(*info->functional) + ")" : "") << "\n";
  else if (info->outVariant)
    out << "  out variant: " << info->outVariant->str() << "\n";
  else
    out << "  out variant: none" << (schema.isInplace() ? " (in-place op)" : "") << "\n";
  if (info->viewCopy) out << "  view: replaced by " << displayName(*info->viewCopy) << " in edge\n";

  std::vector<std::string> ruleLines = decompositions.describe(key);
  std::vector<std::string> cppLines;
  for (const auto &d : kCppDecompositions)
    if (OperatorTable::normalizeName(d.op) == key)
      cppLines.push_back(std::string("built-in pass ") + d.pass + " -> " + d.result);
  // What to_edge does with an op that nothing decomposes: functionalize
  // rewrites in-place and out= ops, replace-view-ops swaps views for their
  // _copy twins, and edge allows core ops and _copy ops as they are.
  const OpSchema *twin = functionalTwin(table, schema);
  OpTarget target{TargetDialect::Aten, schema.ns, schema.name, schema.overload.empty() ? "default" : schema.overload};
  if (ruleLines.empty() && cppLines.empty()) {
    out << "  decomposition: none";
    if (isGraphAssert(target))
      out << " needed: remove-asserts drops it (a runtime check, as upstream's to_edge drops it)";
    else if (staysAtenInEdge(target))
      out << " needed: it stays as it is in edge (as upstream's to_edge keeps it)";
    else if (twin)
      out << " needed: functionalize replaces it by " << displayName(*twin);
    else if (info->viewCopy)
      out << " needed: the view becomes its _copy op";
    else if (!isCoreOp(key))
      out << " (to_edge refuses it unless --allow-non-core names it)";
    out << "\n";
  } else {
    out << "  decomposition:\n";
    for (const auto &l : ruleLines) out << "    " << l << "\n";
    for (const auto &l : cppLines) out << "    " << l << "\n";
  }

  const EdgeOpConstraint *c = nullptr;
  const EdgeDtypeRules *from = nullptr;
  std::string searched;
  for (const EdgeDtypeRules *rules : dtypeRules) {
    searched += (searched.empty() ? "" : ", ") + rules->sourceName();
    if ((c = rules->find(key))) {
      from = rules;
      break;
    }
  }
  if (!c) {
    out << "  dtypes: any (no entry in " << searched << ")\n";
  } else {
    out << "  dtypes (" << from->sourceName() << " line " << c->line << ", " << c->rows.size()
        << (c->rows.size() == 1 ? " row" : " rows") << "):\n";
    EdgeOpConstraint one = *c;
    for (const auto &row : c->rows) {
      one.rows = {row};
      out << "    " << EdgeDtypeRules::describeRows(one) << "\n";
    }
  }
  return out.str();
}

} // namespace exir::edge
