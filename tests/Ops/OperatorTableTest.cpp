//===- tests/Ops/OperatorTableTest.cpp - Operator table tests -------------===//
//
// Lookups, core-ness, out-variant and view-copy links of the builtin table,
// plus whole-table consistency: every schema parses (the table loads) and every
// functional op that should have an out variant resolves to one.
//
//===----------------------------------------------------------------------===//
#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {
const OperatorTable &table() { return OperatorTable::builtin(); }

const OpSchema &op(const char *name) {
  const OpSchema *s = table().lookup(name);
  INFO(name);
  REQUIRE(s != nullptr);
  return *s;
}

std::string outName(const char *name) {
  const OpSchema *out = table().outVariant(op(name));
  return out ? out->qualifiedName() : "<none>";
}
} // namespace

TEST_CASE("lookup accepts the usual spellings", "[table]") {
  CHECK(table().lookup("aten::add.Tensor") != nullptr);
  CHECK(table().lookup("aten::relu") == table().lookup("aten::relu.default"));
  CHECK(table().lookup("relu") == table().lookup("aten::relu"));
  CHECK(table().lookup("aten::relu") != nullptr);
  CHECK(table().lookup("aten::no_such_op") == nullptr);
  CHECK(table().lookup("aten::add.NoSuchOverload") == nullptr);
  CHECK(op("aten::add.Tensor").str() ==
        "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST_CASE("out variants", "[table]") {
  CHECK(outName("aten::add.Tensor") == "aten::add.out");
  CHECK(outName("aten::add.Scalar") == "aten::add.Scalar_out");
  CHECK(outName("aten::max.dim") == "aten::max.dim_max");
  CHECK(outName("aten::max") == "aten::max.unary_out");
  CHECK(outName("aten::select_copy.int") == "aten::select_copy.int_out");
  CHECK(outName("aten::arange.start_step") == "aten::arange.start_out");
  CHECK(outName("aten::arange") == "aten::arange.out");
  CHECK(outName("aten::full") == "aten::full.out");
  CHECK(outName("aten::_to_copy") == "aten::_to_copy.out");
  CHECK(outName("aten::empty.memory_format") == "aten::empty.out");
  CHECK(outName("aten::sum.dim_IntList") == "aten::sum.IntList_out");
  CHECK(outName("aten::split_copy.Tensor") == "aten::split_copy.Tensor_out");
  CHECK(outName("aten::native_layer_norm") == "aten::native_layer_norm.out");
  // Mutable (not in-place) ops keep their out variant.
  CHECK(outName("aten::_native_batch_norm_legit") == "aten::_native_batch_norm_legit.out");
  CHECK(outName("aten::_native_batch_norm_legit.no_stats") ==
        "aten::_native_batch_norm_legit.no_stats_out");
  CHECK(outName("dim_order_ops::_to_dim_order_copy") == "dim_order_ops::_to_dim_order_copy.out");
  CHECK(outName("dim_order_ops::_to_dim_order_copy.default") == "dim_order_ops::_to_dim_order_copy.out");
  CHECK(outName("quantized_decomposed::quantize_per_tensor") == "quantized_decomposed::quantize_per_tensor.out");
  CHECK(outName("quantized_decomposed::quantize_per_tensor.tensor") ==
        "quantized_decomposed::quantize_per_tensor.Tensor_out");
  CHECK(outName("quantized_decomposed::dequantize_per_channel") ==
        "quantized_decomposed::dequantize_per_channel.out");
  // An out variant maps to itself; in-place ops and views have none.
  CHECK(outName("aten::add.out") == "aten::add.out");
  CHECK(outName("aten::copy_") == "<none>");
  CHECK(outName("aten::view") == "<none>");
  CHECK(outName("aten::sym_size.int") == "<none>");
  // The reverse link.
  const OpSchema *functional = table().functionalOf(op("aten::max.dim_max"));
  REQUIRE(functional);
  CHECK(functional->qualifiedName() == "aten::max.dim");
}

TEST_CASE("core-ness", "[table]") {
  CHECK(table().isCore(op("aten::convolution")));
  CHECK_FALSE(table().isCore(op("aten::conv2d")));
  CHECK_FALSE(table().isCore(op("aten::linear")));
  CHECK(table().isCore(op("aten::add.Tensor")));
  CHECK_FALSE(table().isCore(op("aten::add.out")));
  CHECK(table().isCore(op("aten::view")));
  CHECK_FALSE(table().isCore(op("aten::view_copy")));
  size_t core = 0;
  for (const OpSchema *s : table().all())
    if (table().isCore(*s)) ++core;
  CHECK(core >= 180);
}

TEST_CASE("view ops map to their _copy ops", "[table]") {
  auto copyName = [](const char *name) {
    const OpSchema *c = table().viewCopyOf(op(name));
    return c ? c->qualifiedName() : "<none>";
  };
  CHECK(copyName("aten::view") == "aten::view_copy");
  CHECK(copyName("aten::permute") == "aten::permute_copy");
  CHECK(copyName("aten::select.int") == "aten::select_copy.int");
  CHECK(copyName("aten::slice.Tensor") == "aten::slice_copy.Tensor");
  CHECK(copyName("aten::squeeze.dims") == "aten::squeeze_copy.dims");
  CHECK(copyName("aten::transpose.int") == "aten::transpose_copy.int");
  CHECK(copyName("aten::split_with_sizes") == "aten::split_with_sizes_copy");
  CHECK(copyName("aten::t") == "aten::t_copy");
  CHECK(copyName("aten::add.Tensor") == "<none>");
  CHECK(copyName("aten::reshape") == "<none>");
  CHECK(table().info("aten::view_copy")->isViewCopy);
  CHECK_FALSE(table().info("aten::add.Tensor")->isViewCopy);
}

TEST_CASE("every functional op with tensor outputs has an out variant or a reason not to", "[table]") {
  // Ops whose functional form legitimately has no out variant in the table:
  // views (replaced by _copy ops), composite ops decomposed by to_edge,
  // in-place ops, and ops with non-tensor or no returns.
  std::vector<std::string> missing;
  size_t withOut = 0;
  for (const OpSchema *s : table().all()) {
    const OperatorInfo *info = table().info(*s);
    REQUIRE(info);
    if (s->isOutVariant()) {
      // Every out variant serves some functional op.
      INFO(s->qualifiedName());
      CHECK(info->functional != nullptr);
      continue;
    }
    if (s->isInplace() || s->isView() || s->numTensorReturns() == 0) continue;
    if (info->outVariant) {
      ++withOut;
      // The out variant keeps the functional arguments (minus TensorOptions).
      for (const auto &arg : info->outVariant->arguments)
        if (!arg.isOut) CHECK(s->argument(arg.name) != nullptr);
      continue;
    }
    if (info->isCore) missing.push_back(s->qualifiedName());
  }
  CHECK(withOut >= 200);
  // Core ops without an out variant in ATen itself.
  std::sort(missing.begin(), missing.end());
  CHECK(missing == std::vector<std::string>{"aten::adaptive_avg_pool1d", "aten::avg_pool1d"});
}

TEST_CASE("table text errors name the line", "[table][errors]") {
  try {
    OperatorTable::parse("namespace aten\n# comment\nrelu(Tensor self) -> Tensor\nabs(Tensr self) -> Tensor\n",
                         "t.txt");
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.file() == "t.txt");
    CHECK(e.location() == "line 4, column 5");
  }
  CHECK_THROWS_AS(OperatorTable::parse("relu(Tensor self) -> Tensor\nrelu(Tensor self) -> Tensor\n", "t"),
                  Error);
  CHECK_THROWS_AS(OperatorTable::parse("@out=nope relu(Tensor self) -> Tensor\n", "t"), Error);
  CHECK_THROWS_AS(OperatorTable::parse("@bogus relu(Tensor self) -> Tensor\n", "t"), Error);
  OperatorTable small = OperatorTable::parse(
      "@core @out=odd relu(Tensor self) -> Tensor\nrelu.odd(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n",
      "t");
  REQUIRE(small.size() == 2);
  CHECK(small.outVariant(*small.lookup("relu"))->qualifiedName() == "aten::relu.odd");
}

TEST_CASE("every schema in the table re-parses from its printed form", "[table]") {
  for (const OpSchema *s : table().all()) {
    INFO(s->text);
    OpSchema again = parseSchema(s->str());
    CHECK(again.str() == s->str());
    CHECK(again.qualifiedName() == s->qualifiedName());
    CHECK(again.arguments.size() == s->arguments.size());
    // Every default converts to an IR argument of its type.
    for (const auto &arg : s->arguments)
      if (arg.defaultValue) CHECK_NOTHROW(defaultToArgument(arg));
  }
}
