//===- tests/Ops/SchemaTest.cpp - Operator signature parser tests ---------===//
//
// Covers the grammar pieces the operator table relies on: types, alias
// annotations, defaults, keyword-only markers, returns, namespaces, and the
// column reported for syntax errors.
//
//===----------------------------------------------------------------------===//
#include "Ops/Schema.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace exir;

namespace {
std::string errorLocation(const std::string &text) {
  try {
    parseSchema(text);
  } catch (const Error &e) {
    return e.location();
  }
  return "no error";
}
} // namespace

TEST_CASE("add.Tensor parses with a keyword-only default", "[schema]") {
  OpSchema s = parseSchema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  CHECK(s.ns == "aten");
  CHECK(s.name == "add");
  CHECK(s.overload == "Tensor");
  CHECK(s.qualifiedName() == "aten::add.Tensor");
  REQUIRE(s.arguments.size() == 3);
  CHECK(s.arguments[0].name == "self");
  CHECK(s.arguments[0].type.isTensor());
  CHECK_FALSE(s.arguments[1].kwargOnly);
  CHECK(s.arguments[2].kwargOnly);
  CHECK(s.arguments[2].type.base == SchemaBaseType::Scalar);
  REQUIRE(s.arguments[2].defaultValue);
  CHECK(s.arguments[2].defaultValue->kind == SchemaDefault::Kind::Int);
  CHECK(s.arguments[2].defaultValue->intValue == 1);
  REQUIRE(s.returns.size() == 1);
  CHECK(s.returns[0].name.empty());
  CHECK_FALSE(s.isOutVariant());
  CHECK_FALSE(s.isView());
  CHECK(s.str() == "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
}

TEST_CASE("add.out has an out argument and an aliased return", "[schema]") {
  OpSchema s = parseSchema(
      "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
  REQUIRE(s.arguments.size() == 4);
  const SchemaArgument &out = s.arguments[3];
  CHECK(out.isOut);
  CHECK(out.alias.isWrite);
  CHECK(out.alias.beforeSet == std::vector<std::string>{"a"});
  CHECK_FALSE(s.arguments[2].isOut);
  CHECK(s.isOutVariant());
  CHECK_FALSE(s.isInplace());
  CHECK(s.returns[0].alias.isWrite);
  CHECK(s.outArguments().size() == 1);
}

TEST_CASE("max.dim_max has two outs and named returns", "[schema]") {
  OpSchema s = parseSchema("max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
                           "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)");
  CHECK(s.outArguments().size() == 2);
  CHECK(s.arguments[2].defaultValue->kind == SchemaDefault::Kind::Bool);
  CHECK(s.arguments[2].defaultValue->intValue == 0);
  REQUIRE(s.returns.size() == 2);
  CHECK(s.returns[0].name == "values");
  CHECK(s.returns[1].name == "indices");
  CHECK(s.returns[1].alias.beforeSet == std::vector<std::string>{"b"});
}

TEST_CASE("convolution: optional tensors and SymInt lists", "[schema]") {
  OpSchema s = parseSchema("convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, "
                           "SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] "
                           "output_padding, SymInt groups) -> Tensor");
  CHECK(s.overload.empty());
  CHECK(s.qualifiedName() == "aten::convolution");
  CHECK(s.arguments[2].type.optional);
  CHECK(s.arguments[2].type.isTensorLike());
  CHECK(s.arguments[3].type.base == SchemaBaseType::SymInt);
  CHECK(s.arguments[3].type.isList);
  CHECK_FALSE(s.arguments[3].type.fixedSize);
  CHECK(s.arguments[8].type.base == SchemaBaseType::SymInt);
  CHECK_FALSE(s.arguments[8].type.isList);
}

TEST_CASE("split_copy returns a tensor list", "[schema]") {
  OpSchema s = parseSchema("split_copy.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]");
  REQUIRE(s.returns.size() == 1);
  CHECK(s.returns[0].type.isTensorList());
  CHECK(s.numTensorReturns() == 1);
}

TEST_CASE("types: fixed sizes, optional lists, element-optional lists", "[schema]") {
  SchemaType t = parseSchemaType("int[2]");
  CHECK(t.isList);
  CHECK(t.fixedSize == 2);
  CHECK_FALSE(t.optional);

  t = parseSchemaType("SymInt[1]?");
  CHECK(t.base == SchemaBaseType::SymInt);
  CHECK(t.fixedSize == 1);
  CHECK(t.optional);
  CHECK_FALSE(t.elementOptional);
  CHECK(t.str() == "SymInt[1]?");

  t = parseSchemaType("Tensor?[]");
  CHECK(t.isList);
  CHECK(t.elementOptional);
  CHECK_FALSE(t.optional);
  CHECK_FALSE(t.isTensorLike());
  CHECK(t.str() == "Tensor?[]");

  for (const char *name : {"ScalarType?", "Layout?", "Device?", "bool?", "float[]?", "str",
                           "Generator?", "MemoryFormat?", "Dimname", "Scalar?", "int[]?"}) {
    SchemaType parsed = parseSchemaType(name);
    CHECK(parsed.str() == name);
  }
  CHECK(parseSchemaType("float[]?").base == SchemaBaseType::Float);
  CHECK(parseSchemaType("Dimname").base == SchemaBaseType::Dimname);
}

TEST_CASE("alias annotations", "[schema]") {
  OpSchema view = parseSchema("view(Tensor(a) self, SymInt[] size) -> Tensor(a)");
  CHECK(view.isView());
  CHECK_FALSE(view.isMutable());
  CHECK(view.arguments[0].alias.str() == "(a)");

  OpSchema split = parseSchema(
      "split_with_sizes(Tensor(a -> *) self, SymInt[] split_sizes, int dim=0) -> Tensor(a)[]");
  CHECK(split.arguments[0].alias.afterSet == std::vector<std::string>{"*"});
  CHECK(split.arguments[0].alias.str() == "(a -> *)");
  CHECK(split.returns[0].type.isTensorList());
  CHECK(split.returns[0].alias.beforeSet == std::vector<std::string>{"a"});

  OpSchema inplace = parseSchema("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)");
  CHECK(inplace.isInplace());
  CHECK_FALSE(inplace.isOutVariant());

  OpSchema listOut = parseSchema(
      "split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()");
  CHECK(listOut.returns.empty());
  CHECK(listOut.arguments[3].isOut);
  CHECK(listOut.arguments[3].type.isTensorList());
}

TEST_CASE("defaults of every kind", "[schema]") {
  OpSchema s = parseSchema(
      "f(Tensor? a=None, bool b=True, int c=-1, int[] d=[], int[2] e=[0,0], float g=1e-05, "
      "str h=\"mean\", str i='none', MemoryFormat j=contiguous_format, ScalarType? k=long, "
      "ScalarType l=float, float[] m=[1.5, 2], int n=Mean) -> Tensor");
  auto def = [&](const char *name) { return *s.argument(name)->defaultValue; };
  CHECK(def("a").kind == SchemaDefault::Kind::None);
  CHECK(def("b").kind == SchemaDefault::Kind::Bool);
  CHECK(def("b").intValue == 1);
  CHECK(def("c").intValue == -1);
  CHECK(def("d").kind == SchemaDefault::Kind::IntList);
  CHECK(def("d").ints.empty());
  CHECK(def("e").ints == std::vector<int64_t>{0, 0});
  CHECK(def("g").kind == SchemaDefault::Kind::Float);
  CHECK(def("g").floatValue == Approx(1e-05));
  CHECK(def("h").kind == SchemaDefault::Kind::String);
  CHECK(def("h").text == "mean");
  CHECK(def("i").text == "none");
  CHECK(def("j").kind == SchemaDefault::Kind::Identifier);
  CHECK(def("j").text == "contiguous_format");
  CHECK(def("m").kind == SchemaDefault::Kind::FloatList);
  CHECK(def("m").floats == std::vector<double>{1.5, 2.0});

  // Conversion into IR arguments, as torch.export would serialize the value.
  CHECK(defaultToArgument(*s.argument("a")).isNone());
  CHECK(defaultToArgument(*s.argument("b")) == Argument::boolean(true));
  CHECK(defaultToArgument(*s.argument("c")) == Argument::integer(-1));
  CHECK(defaultToArgument(*s.argument("d")) == Argument::ints_({}));
  CHECK(defaultToArgument(*s.argument("e")) == Argument::ints_({0, 0}));
  CHECK(defaultToArgument(*s.argument("g")) == Argument::real(1e-05));
  CHECK(defaultToArgument(*s.argument("h")) == Argument::string("mean"));
  Argument mf = defaultToArgument(*s.argument("j"));
  CHECK(mf.kind == ArgKind::MemoryFormat);
  CHECK(mf.intValue == kMemoryFormatContiguous);
  CHECK(defaultToArgument(*s.argument("k")) == Argument::scalarType(ScalarType::Long));
  CHECK(defaultToArgument(*s.argument("l")) == Argument::scalarType(ScalarType::Float));
  Argument floats = defaultToArgument(*s.argument("m"));
  CHECK(floats.kind == ArgKind::Floats);
  CHECK(floats.floats() == std::vector<double>{1.5, 2.0});
  CHECK(defaultToArgument(*s.argument("n")) == Argument::integer(1));
}

TEST_CASE("scalar defaults broadcast to fixed-size lists and follow the type", "[schema]") {
  OpSchema s = parseSchema("conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, "
                           "SymInt[2] padding=0, float p=2, Scalar alpha=1, Scalar beta=0.5) -> Tensor");
  CHECK(defaultToArgument(*s.argument("stride")) == Argument::ints_({1, 1}));
  CHECK(defaultToArgument(*s.argument("padding")) == Argument::ints_({0, 0}));
  CHECK(defaultToArgument(*s.argument("p")) == Argument::real(2.0));
  CHECK(defaultToArgument(*s.argument("alpha")) == Argument::integer(1));
  CHECK(defaultToArgument(*s.argument("beta")) == Argument::real(0.5));
  CHECK_THROWS_AS(defaultToArgument(*s.argument("input")), Error);
}

TEST_CASE("defaults that do not fit the type are errors", "[schema]") {
  OpSchema s = parseSchema("f(int a=\"x\", ScalarType b=notatype, bool c=None) -> ()");
  CHECK_THROWS_AS(defaultToArgument(*s.argument("a")), Error);
  CHECK_THROWS_AS(defaultToArgument(*s.argument("b")), Error);
  CHECK_THROWS_AS(defaultToArgument(*s.argument("c")), Error);
}

TEST_CASE("namespaces", "[schema]") {
  OpSchema q = parseSchema("quantized_decomposed::quantize_per_tensor(Tensor input, float scale, int "
                           "zero_point, int quant_min, int quant_max, ScalarType dtype) -> Tensor");
  CHECK(q.ns == "quantized_decomposed");
  CHECK(q.qualifiedName() == "quantized_decomposed::quantize_per_tensor");
  OpSchema d = parseSchema("dim_order_ops::_to_dim_order_copy.out(Tensor self, *, bool non_blocking=False, "
                           "int[]? dim_order=None, Tensor(a!) out) -> Tensor(a!)");
  CHECK(d.qualifiedName() == "dim_order_ops::_to_dim_order_copy.out");
  OpSchema a = parseSchema("aten::relu.default(Tensor self) -> Tensor");
  CHECK(a.qualifiedName() == "aten::relu");
  CHECK(a.nameWithOverload() == "relu");
  OpSchema e = parseSchema("et_view(Tensor self, SymInt[] size) -> Tensor", "executorch_prim");
  CHECK(e.qualifiedName() == "executorch_prim::et_view");
}

TEST_CASE("schemas round-trip through str()", "[schema]") {
  for (const char *text : {
           "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
           "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
           "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)",
           "aten::_assert_async.msg(Tensor self, str assert_msg) -> ()",
       }) {
    OpSchema s = parseSchema(text);
    CHECK(s.str() == text);
    CHECK(parseSchema(s.str()).str() == s.str());
  }
}

TEST_CASE("syntax errors report the column", "[schema][errors]") {
  // Unknown type at column 6.
  CHECK(errorLocation("relu(Tensr self) -> Tensor") == "column 6");
  // Missing "->".
  CHECK(errorLocation("relu(Tensor self) Tensor") == "column 19");
  // Missing closing parenthesis: the argument list stops at column 17.
  CHECK(errorLocation("relu(Tensor self -> Tensor") == "column 18");
  // Unterminated string default.
  CHECK(errorLocation("f(str a=\"abc) -> ()") == "column 9");
  // Duplicate argument names.
  CHECK(errorLocation("f(Tensor a, Tensor a) -> ()") != "no error");
  // Trailing junk.
  CHECK(errorLocation("relu(Tensor self) -> Tensor out junk") == "column 33");
  // Empty name.
  CHECK(errorLocation("(Tensor self) -> Tensor") == "column 1");
  try {
    parseSchema("relu(Tensr self) -> Tensor");
    FAIL("no error");
  } catch (const Error &e) {
    CHECK(e.message().find("unknown type 'Tensr'") != std::string::npos);
  }
}
