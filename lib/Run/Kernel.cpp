//===- Run/Kernel.cpp - The kernel registry -------------------------------===//
//
// Kernels are registered by name at static-initialization time. Every
// registered kernel is wrapped so that (1) a call with the wrong number of
// arguments is refused the way the runtime's codegen'd wrappers refuse it
// (schema arguments + 1 return slot, counted from the operator table), and
// (2) any exir::Error a kernel throws names the kernel, so kernels themselves
// only say what went wrong.
//
//===----------------------------------------------------------------------===//

#include "Run/Kernel.h"

#include "Ops/OperatorTable.h"
#include "Support/Error.h"

#include <algorithm>

namespace exir::run {

namespace {
/// Schema arguments + 1 of the op `name` in the builtin table; -1 if unknown.
int expectedArgCount(const std::string &name) {
  const OpSchema *schema = OperatorTable::builtin().lookup(name);
  return schema ? int(schema->arguments.size()) + 1 : -1;
}

KernelFn checked(std::string name, KernelFn fn) {
  // The table is consulted on the first call, not at registration: registration
  // runs during static initialization, before the table may be ready.
  auto expected = std::make_shared<int>(-2);
  return [name = std::move(name), fn = std::move(fn), expected](std::span<Value *> args) {
    if (*expected == -2) *expected = expectedArgCount(name);
    if (*expected >= 0 && int(args.size()) != *expected)
      throw Error(name + ": expected " + std::to_string(*expected) + " arguments, got " +
                  std::to_string(args.size()));
    for (Value *arg : args)
      if (!arg) throw Error(name + ": null argument");
    try {
      fn(args);
    } catch (const Error &e) {
      throw Error(name + ": " + e.message(), e.file(), e.location());
    }
  };
}
} // namespace

KernelRegistry &KernelRegistry::global() {
  static KernelRegistry registry;
  return registry;
}

void KernelRegistry::add(std::string name, KernelFn fn) {
  auto it = std::lower_bound(kernels_.begin(), kernels_.end(), name,
                             [](const auto &entry, const std::string &n) { return entry.first < n; });
  if (it != kernels_.end() && it->first == name)
    throw InternalError("kernel '" + name + "' registered twice");
  KernelFn wrapped = checked(name, std::move(fn));
  kernels_.insert(it, {std::move(name), std::move(wrapped)});
}

const KernelFn *KernelRegistry::find(std::string_view name) const {
  auto it = std::lower_bound(kernels_.begin(), kernels_.end(), name,
                             [](const auto &entry, std::string_view n) { return entry.first < n; });
  return it != kernels_.end() && it->first == name ? &it->second : nullptr;
}

std::vector<std::string> KernelRegistry::names() const {
  std::vector<std::string> result;
  result.reserve(kernels_.size());
  for (const auto &entry : kernels_) result.push_back(entry.first);
  return result;
}

KernelRegistration::KernelRegistration(
    std::initializer_list<std::pair<const char *, KernelFn>> kernels) {
  for (const auto &[name, fn] : kernels) KernelRegistry::global().add(name, fn);
}

} // namespace exir::run
