//===- tests/Pte/PteTestUtil.h - Shared helpers for the .pte tests -------===//
//
// Corpus paths, a JSON comparison that names the first differing pointer, and
// builders for the two golden models of pte-format.md (§3.2 add.pte and the
// arduino x + 1.0 model).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Pte/PteModel.h"
#include "Support/FileIO.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <variant>
#include <vector>

namespace exir::pte::test {

inline std::string corpusDir() { return std::string(EXIR_SHARED_DIR) + "/corpus/pte/"; }
inline std::string inputsDir() { return std::string(EXIR_SOURCE_DIR) + "/tests/Pte/Inputs/"; }

/// The 14 real .pte files of the shared corpus (stem names).
inline const std::vector<std::string> &corpusNames() {
  static const std::vector<std::string> names = {
      "cadence_pr17248_conv2d_quantized_2025-12", "cadence_pr17248_maxpool2d_2025-12",
      "cadence_pr17248_softmax_2025-12",          "djl_conv_relu_xnnpack_et1.3.1",
      "djl_med_output_expand_et1.3.1",            "djl_prim_input_et1.3.1",
      "et_ModuleLinear-no-constant-segment_2024-09", "et_add_portable_2024-09",
      "et_arduino_kws_dscnn_cortexm_2026-08",     "node_mul_2024-05",
      "np_add_xnnpack_et1.3.1",                   "np_dtypes_et1.3.1",
      "np_multi_method_et1.3.1",                  "rs_add_2025-02"};
  return names;
}

/// "" when equal, else "<json pointer>: <a> != <b>" for the first difference.
/// Numbers compare by value (an integer 3 equals 3.0), everything else exactly.
inline std::string jsonDifference(const nlohmann::json &a, const nlohmann::json &b, const std::string &at = "") {
  auto show = [](const nlohmann::json &j) {
    std::string s = j.dump();
    return s.size() > 80 ? s.substr(0, 77) + "..." : s;
  };
  if (a.is_number() && b.is_number()) {
    bool same = (a.is_number_float() || b.is_number_float()) ? a.get<double>() == b.get<double>() : a == b;
    return same ? "" : at + ": " + show(a) + " != " + show(b);
  }
  if (a.type() != b.type()) return at + ": " + show(a) + " != " + show(b);
  if (a.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (!b.contains(it.key())) return at + "/" + it.key() + ": present != absent";
      std::string d = jsonDifference(it.value(), b.at(it.key()), at + "/" + it.key());
      if (!d.empty()) return d;
    }
    for (auto it = b.begin(); it != b.end(); ++it)
      if (!a.contains(it.key())) return at + "/" + it.key() + ": absent != present";
    return "";
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      return at + ": " + std::to_string(a.size()) + " elements != " + std::to_string(b.size()) + " elements";
    for (size_t i = 0; i < a.size(); ++i) {
      std::string d = jsonDifference(a[i], b[i], at + "/" + std::to_string(i));
      if (!d.empty()) return d;
    }
    return "";
  }
  return a == b ? "" : at + ": " + show(a) + " != " + show(b);
}

inline Tensor plannedFloatTensor(std::vector<int32_t> sizes, uint64_t offset) {
  Tensor t;
  t.scalarType = ScalarType::Float;
  t.dimOrder.resize(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) t.dimOrder[i] = uint8_t(i);
  t.sizes = std::move(sizes);
  t.allocationInfo = AllocationDetails::at(1, offset);
  return t;
}

/// forward(x, y) = x + y on [1] floats, exactly as pte-format.md §3.2 lists the
/// golden add.pte (offsets from the 2025-02 planner: x 0, y 16, out 32).
inline Program goldenAddModel() {
  Program program;
  ExecutionPlan plan;
  plan.name = "forward";
  plan.containerMetaType = ContainerMetadata{"T2#2#0(T2#1#1($,$),D0())", "$"};
  plan.values = {plannedFloatTensor({1}, 0), plannedFloatTensor({1}, 16), plannedFloatTensor({1}, 32), Int{1}};
  plan.inputs = {0, 1};
  plan.outputs = {2};
  plan.operators = {{"aten::add", "out"}};
  Chain chain;
  chain.instructions = {KernelCall{0, {0, 1, 3, 2, 2}}};
  plan.chains = {chain};
  plan.nonConstBufferSizes = {0, 48};
  program.executionPlan = {plan};
  program.constants = {BlobSource()}; // the placeholder only
  return program;
}

/// x + 1.0 on [3] floats with the 1.0 as a lifted 0-dim constant, like the
/// arduino AddModel golden (pte-format.md §2.2 / §3.2).
inline Program goldenConstantAddModel() {
  Program program;
  ExecutionPlan plan;
  plan.name = "forward";
  plan.containerMetaType = ContainerMetadata{"T2#1#0(T1#1($),D0())", "$"};
  Tensor constant;
  constant.scalarType = ScalarType::Float;
  constant.dataBufferIdx = 1;
  plan.values = {constant, plannedFloatTensor({3}, 16), plannedFloatTensor({3}, 0), Int{1}};
  plan.inputs = {1};
  plan.outputs = {2};
  plan.operators = {{"aten::add", "out"}};
  Chain chain;
  chain.instructions = {KernelCall{0, {1, 0, 3, 2, 2}}};
  plan.chains = {chain};
  plan.nonConstBufferSizes = {0, 32};
  program.executionPlan = {plan};
  program.constants = {BlobSource(), BlobSource::fromBytes(std::string("\x00\x00\x80\x3f", 4))};
  return program;
}

inline uint64_t readLE(const std::string &bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = 0; i < width; ++i) value |= uint64_t(uint8_t(bytes.at(at + i))) << (8 * i);
  return value;
}

/// Value `index` of `plan`, which must hold a V (a Tensor, Int, TensorList, ...).
template <typename V> const V &valueAs(const ExecutionPlan &plan, int64_t index) {
  INFO("value " << index);
  REQUIRE(index >= 0);
  REQUIRE(size_t(index) < plan.values.size());
  const V *v = std::get_if<V>(&plan.values[size_t(index)]);
  REQUIRE(v);
  return *v;
}

} // namespace exir::pte::test
