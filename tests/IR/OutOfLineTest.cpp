//===- tests/IR/OutOfLineTest.cpp - out-of-line records of the IR ---------===//
//
// OutOfLine<T> and the records kept behind it (SymInt's expression, Device's
// record, Argument's rare payloads): absent reads as default, copies are deep,
// an absent record equals a default one.
//
//===----------------------------------------------------------------------===//
#include "IR/IR.h"

#include <catch2/catch.hpp>

using namespace exir;

namespace {
struct Rec {
  std::string text = "default";
  int n = 0;
  bool operator==(const Rec &o) const = default;
};
} // namespace

TEST_CASE("OutOfLine reads a default until written, and copies deeply", "[ir][out-of-line]") {
  OutOfLine<Rec> a;
  CHECK_FALSE(a.present());
  CHECK(a.get().text == "default");
  a.mutate().n = 3;
  REQUIRE(a.present());
  CHECK(a.get() == Rec{"default", 3});

  OutOfLine<Rec> b = a;
  b.mutate().text = "changed";
  CHECK(a.get().text == "default"); // the copy has its own record
  a = b;
  CHECK(a.get().text == "changed");
  b.mutate().n = 4;
  CHECK(a.get().n == 3);
  a = OutOfLine<Rec>();
  CHECK_FALSE(a.present());

  OutOfLine<Rec> absent, written;
  written.mutate(); // holds the default values
  CHECK(absent == written);
  written.mutate().n = 1;
  CHECK_FALSE(absent == written);
}

TEST_CASE("SymInt and Device keep their rare parts out of line, with value semantics", "[ir][out-of-line]") {
  SymInt s = SymInt::symbol("s0");
  s.setHint(8);
  SymInt t = s;
  t.setExpr("s1");
  CHECK(s.expr() == "s0");
  CHECK(t.hint() == std::optional<int64_t>(8));
  SymInt c = SymInt::of(4);
  CHECK(c.expr().empty());
  CHECK_FALSE(c.hint().has_value());
  c.setHint(std::nullopt); // no record made for nothing: still equal to a fresh one
  CHECK(c == SymInt::of(4));

  Device cpu, explicitCpu, gpu;
  explicitCpu.setType("cpu");
  gpu.setType("cuda");
  gpu.setIndex(1);
  CHECK(cpu.type() == "cpu");
  CHECK(cpu == explicitCpu);
  Device copy = gpu;
  copy.setIndex(2);
  CHECK(gpu.index() == std::optional<int64_t>(1));
  CHECK_FALSE(copy == gpu);
}

TEST_CASE("Argument's rare record: deep copies, and assignment from inside itself", "[ir][out-of-line]") {
  Argument a;
  a.kind = ArgKind::Floats;
  a.mutableFloats() = {1.0, 2.0};
  Argument b = a;
  b.mutableFloats()[0] = 9.0;
  CHECK(a.floats() == std::vector<double>{1.0, 2.0});
  CHECK_FALSE(a == b);
  b = a;
  CHECK(a == b);

  // An absent record equals one that holds only empty values.
  Argument plain = Argument::integer(3), touched = Argument::integer(3);
  touched.mutableClassFqn();
  CHECK(plain == touched);

  // a = a.mapping()[0].second: the source lives in the record being replaced.
  Argument m;
  m.kind = ArgKind::StringToArgument;
  Argument inner = Argument::string("x");
  inner.mutableFloats() = {5.0};
  m.mutableMapping().push_back({"k", inner});
  m = m.mapping()[0].second;
  CHECK(m.kind == ArgKind::String);
  CHECK(m.name == "x");
  CHECK(m.floats() == std::vector<double>{5.0});
  CHECK(m.mapping().empty());
}

TEST_CASE("BoxedOptional behaves as std::optional, copies deeply, in one pointer", "[ir][out-of-line]") {
  STATIC_REQUIRE(sizeof(BoxedOptional<std::string>) == sizeof(void *));
  BoxedOptional<std::string> a;
  CHECK_FALSE(a);
  CHECK_FALSE(a.has_value());
  CHECK(a == BoxedOptional<std::string>());
  a = std::string("bytes");
  REQUIRE(a);
  CHECK(*a == "bytes");
  CHECK(a->size() == 5);
  CHECK(a != BoxedOptional<std::string>());

  BoxedOptional<std::string> b = a; // deep: b's bytes are its own
  CHECK(b == a);
  *b += "!";
  CHECK(*a == "bytes");
  CHECK(b != a);
  b = a;
  CHECK(b == a);
  BoxedOptional<std::string> empty;
  b = empty;
  CHECK_FALSE(b);

  BoxedOptional<std::string> moved = std::move(a);
  CHECK(*moved == "bytes");
  moved = "other"; // assigns into the held string
  CHECK(*moved == "other");
  moved = std::nullopt;
  CHECK_FALSE(moved);
  moved = "again";
  moved.reset();
  CHECK_FALSE(moved);
  CHECK(BoxedOptional<std::string>("") != BoxedOptional<std::string>()); // an empty string is a value
}
