//===- tests/Support/SignalsTest.cpp - Temporaries removed on a signal ----===//
//
// A child process registers temporary files, installs the handler and is
// killed by SIGTERM / SIGINT: the registered files must be gone, an
// unregistered one kept, and the child must have died of that signal.
//
//===----------------------------------------------------------------------===//
#include "Support/Signals.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace exir;

namespace {

std::string scratchDir(const std::string &name) {
  fs::path dir = fs::path(EXIR_BINARY_DIR) / "unittests-tmp" / "signals" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

void touch(const std::string &path) { std::ofstream(path) << "x"; }

/// Forks; the child registers `a` and `b`, unregisters `b`, and raises `sig`.
int statusOfChildRaising(int sig, const std::string &a, const std::string &b) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(sig, SIG_DFL); // as a tool starts: not ignored
    installCleanupSignalHandlers();
    touch(a);
    touch(b);
    registerTemporaryFile(a);
    unregisterTemporaryFile(registerTemporaryFile(b));
    ::raise(sig);
    ::_exit(0); // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST_CASE("a signal removes the registered temporaries and kills the process", "[signals]") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    std::string dir = scratchDir("sig" + std::to_string(sig));
    std::string a = dir + "/out.tmp.a", b = dir + "/out.tmp.b";
    int status = statusOfChildRaising(sig, a, b);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    CHECK_FALSE(fs::exists(a));
    CHECK(fs::exists(b)); // unregistered (renamed into place): kept
  }
}

TEST_CASE("registerTemporaryFile reuses freed slots", "[signals]") {
  // More registrations than slots, each freed: none may run out.
  for (int i = 0; i < 1000; ++i) {
    int slot = registerTemporaryFile("/nonexistent/x" + std::to_string(i));
    REQUIRE(slot >= 0);
    unregisterTemporaryFile(slot);
  }
}
