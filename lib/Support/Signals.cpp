//===- Support/Signals.cpp - Remove temporary files on SIGINT/SIGTERM -----===//
#include "Support/Signals.h"

#include <atomic>
#include <climits>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace exir {

namespace {

constexpr int kSlots = 64;
// Slot states: 0 free, 1 being filled (ignored by the handler), 2 holds a path.
std::atomic<int> slotState[kSlots];
char slotPath[kSlots][PATH_MAX];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

const int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

extern "C" void removeTemporariesAndDie(int sig) {
  int savedErrno = errno;
  for (int i = 0; i < kSlots; ++i)
    if (slotState[i].load() == 2) ::unlink(slotPath[i]);
  errno = savedErrno;
  // SA_RESETHAND restored the default action and SA_NODEFER left the signal
  // unblocked: raising it again ends the process as if we had not caught it.
  ::raise(sig);
}

} // namespace

void installCleanupSignalHandlers() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int sig : kSignals) {
    struct sigaction current;
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    // A signal the parent made us ignore (nohup, a shell's background job) stays ignored.
    if (current.sa_handler == SIG_IGN) continue;
    struct sigaction action;
    std::memset(&action, 0, sizeof action);
    action.sa_handler = removeTemporariesAndDie;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_NODEFER;
    ::sigaction(sig, &action, nullptr);
  }
}

int registerTemporaryFile(const std::string &path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (slotState[i].compare_exchange_strong(expected, 1)) {
      std::memcpy(slotPath[i], path.c_str(), path.size() + 1);
      slotState[i].store(2);
      return i;
    }
  }
  return -1;
}

void unregisterTemporaryFile(int slot) {
  if (slot >= 0 && slot < kSlots) slotState[slot].store(0);
}

} // namespace exir
