//===- bench/ExirJsonBench.cpp - Read/write timing of program JSON --------===//
//
// Times our simdjson-based ExportedProgram reader and streaming writer on one
// file, or (--nlohmann) a plain nlohmann::json DOM parse + dump of the same file
// for comparison. Run each mode in its own process (see json_bench.sh) so peak
// RSS is measured per mode. --program reads and writes a stage artifact (or
// any input exir-plan takes) through readProgram / writeProgram and reports the
// CPU time of each phase, which a loaded machine skews less than wall time.
//
//===----------------------------------------------------------------------===//
#include "Support/Allocator.h"
#include "Serde/ExportJson.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <ctime>

namespace {

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

int runExir(const std::string &path, const char *outPath) {
  auto start = std::chrono::steady_clock::now();
  exir::ExportedProgram ep = exir::readExportedProgramJsonFile(path);
  double readMs = millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  std::string text = exir::writeExportedProgramJson(ep);
  double writeMs = millisecondsSince(start);
  std::printf("exir     read  %8.1f ms  (%zu nodes, %zu tensor values)\n", readMs, ep.graph.nodes.size(),
              ep.graph.tensorValues.size());
  std::printf("exir     write %8.1f ms  (%zu bytes)\n", writeMs, text.size());
  if (outPath) exir::writeFileAtomically(outPath, text);
  return 0;
}

double cpuMilliseconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

long peakRssMegabytes() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

int runProgram(const std::string &path, const char *outPath) {
  auto start = std::chrono::steady_clock::now();
  double cpu = cpuMilliseconds();
  exir::Program program = exir::readProgram(path);
  std::printf("program  read  %8.1f ms  %8.1f ms CPU  peak RSS %ld MB\n", millisecondsSince(start),
              cpuMilliseconds() - cpu, peakRssMegabytes());
  start = std::chrono::steady_clock::now();
  cpu = cpuMilliseconds();
  exir::writeProgram(program, outPath ? outPath : "/dev/null");
  std::printf("program  write %8.1f ms  %8.1f ms CPU  peak RSS %ld MB\n", millisecondsSince(start),
              cpuMilliseconds() - cpu, peakRssMegabytes());
  return 0;
}

int runNlohmann(const std::string &path) {
  auto start = std::chrono::steady_clock::now();
  std::string text = exir::readFileOrStdin(path);
  // nlohmann::json (std::map objects): ordered_json's linear key lookup makes
  // the 100k-entry tensor_values object quadratic.
  nlohmann::json doc = nlohmann::json::parse(text);
  double readMs = millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  std::string out = doc.dump();
  double writeMs = millisecondsSince(start);
  std::printf("nlohmann read  %8.1f ms  (file + DOM parse)\n", readMs);
  std::printf("nlohmann write %8.1f ms  (%zu bytes, compact dump, sorted keys)\n", writeMs, out.size());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  exir::enableLargePageHeap();
  bool nlohmann = argc > 1 && std::strcmp(argv[1], "--nlohmann") == 0;
  bool program = argc > 1 && std::strcmp(argv[1], "--program") == 0;
  int first = nlohmann || program ? 2 : 1;
  if (argc - first < 1 || argc - first > 2) {
    std::fprintf(stderr, "usage: exir-json-bench [--nlohmann | --program] PROGRAM.json [OUT.json]\n");
    return exir::ExitUsage;
  }
  try {
    if (program) return runProgram(argv[first], argc - first == 2 ? argv[first + 1] : nullptr);
    return nlohmann ? runNlohmann(argv[first]) : runExir(argv[first], argc - first == 2 ? argv[first + 1] : nullptr);
  } catch (const exir::Error &e) {
    std::fprintf(stderr, "exir-json-bench: error: %s\n", e.render().c_str());
    return exir::ExitBadInput;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "exir-json-bench: error: %s\n", e.what());
    return exir::ExitBadInput;
  }
}
