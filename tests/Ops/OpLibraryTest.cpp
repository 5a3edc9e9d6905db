//===- tests/Ops/OpLibraryTest.cpp - Custom operators from YAML -----------===//
#include "Ops/EdgeYaml.h"
#include "Ops/OpLibrary.h"
#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {
const char *kLibrary = "- func: unitlib::twice(Tensor self, int k=2) -> Tensor\n"
                       "  out: unitlib::twice.out(Tensor self, int k=2, *, Tensor(a!) out) -> Tensor(a!)\n"
                       "  type_alias:\n"
                       "    T0: [Float]\n"
                       "  type_constraint:\n"
                       "  - {self: T0, __ret_0: T0}\n"
                       "- func: unitlib::plain(Tensor self) -> Tensor\n";
}

TEST_CASE("an op library adds schemas, out variants and dtype rules to the builtin table", "[oplibrary]") {
  registerOpLibrary(kLibrary, "unitlib.yaml");
  registerOpLibrary(kLibrary, "again.yaml"); // the same text is registered once
  const OperatorTable &table = OperatorTable::builtin();
  const OpSchema *twice = table.lookup("unitlib::twice");
  REQUIRE(twice);
  const OpSchema *out = table.outVariant(*twice);
  REQUIRE(out);
  CHECK(out->qualifiedName() == "unitlib::twice.out");
  CHECK(table.functionalOf(*out) == twice);
  REQUIRE(table.lookup("unitlib::plain"));
  CHECK(table.outVariant(*table.lookup("unitlib::plain")) == nullptr);

  auto rules = opLibraryDtypeRules();
  REQUIRE(rules.size() >= 1);
  const EdgeOpConstraint *c = rules.back()->find("unitlib::twice");
  REQUIRE(c);
  CHECK(c->line == 1);
  CHECK(rules.back()->find("unitlib::plain") == nullptr);
  CHECK(rules.back()->check(*twice, {{"self", ScalarType::Long}, {"__ret_0", ScalarType::Long}}).has_value());
  CHECK_FALSE(rules.back()->check(*twice, {{"self", ScalarType::Float}, {"__ret_0", ScalarType::Float}}).has_value());
}

TEST_CASE("op library errors name the file and line", "[oplibrary]") {
  auto failsWith = [](const std::string &text, const std::string &location, const std::string &message) {
    try {
      registerOpLibrary(text, "bad.yaml");
      FAIL("no error for: " << text);
    } catch (const Error &e) {
      CHECK(e.file() == "bad.yaml");
      CHECK(e.location() == location);
      CHECK_THAT(e.message(), Catch::Contains(message));
    }
  };
  failsWith("func: x::y(Tensor self) -> Tensor\n", "line 1", "a list of entries");
  failsWith("- func: x::y(Tensor self) -> Tensor\n  outt: 1\n", "line 2", "unknown key 'outt'");
  failsWith("- func: x::y(Tensor self -> Tensor\n", "line 1", "'func':");
  failsWith("- func: x::y(Tensor self) -> Tensor\n  out: x::y.out(Tensor self) -> Tensor\n", "line 2",
            "'out' must be an out variant");
  failsWith("- func: x::y(Tensor self) -> Tensor\n  out: x::z.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n",
            "line 2", "'out' must be an overload of x::y");
  failsWith("- func: aten::relu(Tensor self) -> Tensor\n", "line 1", "defined twice");
  failsWith("- func: [x]\n", "line 1", "'func' must be a string");
}
