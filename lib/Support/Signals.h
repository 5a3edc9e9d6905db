//===- Support/Signals.h - Remove temporary files on SIGINT/SIGTERM -*- C++ -*-===//
//
// Outputs are written to temporary files beside their targets (FileIO.h). When
// a tool is interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE) the
// handler unlinks every temporary still registered, then dies of the same
// signal with the default action, so the shell sees the usual status. Only
// async-signal-safe calls run in the handler: the paths are kept in fixed
// slots, filled before a temporary exists and emptied after it is renamed.
// SIGKILL cannot be caught; a killed run can still leave `OUT.tmp.XXXXXXXX`.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace exir {

/// Installs the cleanup handler for the signals above (once; later calls do nothing).
void installCleanupSignalHandlers();

/// Registers a temporary file for removal if a signal arrives; returns its slot
/// (-1 when every slot is taken: the file is then not cleaned up on a signal).
int registerTemporaryFile(const std::string &path);

/// Forgets a slot returned by registerTemporaryFile (no-op for -1).
void unregisterTemporaryFile(int slot);

} // namespace exir
