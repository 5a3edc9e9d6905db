//===- Support/Error.h - Diagnostics carried as exceptions -------*- C++ -*-===//
//
// Library code never prints or exits. It throws exir::Error, which carries a
// location (file + JSON pointer, byte offset or node name) and one line of text.
// Only tools print, as `tool: error: 'file': /json/pointer: message`, and exit
// with 1 for bad input. Broken internal invariants throw exir::InternalError,
// which tools report with exit code 3.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace exir {

/// Longest run of quoted text ('...') a diagnostic echoes; longer runs are cut
/// with "…" so a 10 MB name does not become a 10 MB error line.
constexpr size_t kMaxQuotedInMessage = 200;
/// Longest diagnostic line as a whole.
constexpr size_t kMaxMessageLength = 4000;
/// Longest location (JSON pointer) a diagnostic shows; a deeper one keeps its
/// start and its end, so the message after it is never cut away.
constexpr size_t kMaxLocationLength = 600;

/// Makes `text` safe to print as one line of a diagnostic: control characters
/// (newline, tab, escape, ...) become \n, \t or \xNN, every single-quoted run
/// longer than kMaxQuotedInMessage is cut, and the whole is cut at
/// kMaxMessageLength. Printable UTF-8 passes unchanged.
std::string oneLineMessage(std::string_view text);
/// `text` with control characters written as \n, \t, \r or \xNN (no cutting),
/// for printing input names in text output such as exir-inspect's.
std::string escapeControlCharacters(std::string_view text);
/// `location` with its middle replaced by "…" when longer than kMaxLocationLength.
std::string shortLocation(const std::string &location);

class Error : public std::runtime_error {
public:
  explicit Error(std::string message, std::string file = {}, std::string location = {})
      : std::runtime_error(message), message_(std::move(message)), file_(std::move(file)),
        location_(std::move(location)) {}

  const std::string &message() const { return message_; }
  const std::string &file() const { return file_; }
  const std::string &location() const { return location_; }

  /// Fills in the file when the thrower did not know it.
  Error &withFile(const std::string &file) {
    if (file_.empty()) file_ = file;
    return *this;
  }
  /// Prefixes a location (e.g. a method name) when the thrower did not know it.
  Error &withLocation(const std::string &location) {
    if (location_.empty()) location_ = location;
    return *this;
  }

  /// "'file': location: message" (parts that are empty are left out), as one
  /// line (see oneLineMessage).
  std::string render() const {
    std::string out;
    if (!file_.empty()) out += "'" + file_ + "': ";
    if (!location_.empty()) out += shortLocation(location_) + ": ";
    out += message_;
    return oneLineMessage(out);
  }

private:
  std::string message_, file_, location_;
};

/// A broken invariant of our own code (a bug), not bad input.
class InternalError : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// Exit codes shared by every tool.
enum ExitCode : int { ExitOk = 0, ExitBadInput = 1, ExitUsage = 2, ExitInternal = 3 };

} // namespace exir
