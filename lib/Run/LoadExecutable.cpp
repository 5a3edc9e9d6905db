//===- Run/LoadExecutable.cpp - A .pte or any program input, by content ---===//
#include "Pte/PteReader.h"
#include "Run/Interpreter.h"
#include "Serde/ExportJson.h"
#include "Serde/ProgramJson.h"
#include "Ops/OpLibrary.h"
#include "Serde/ProgramReader.h"
#include "Support/Error.h"
#include "Support/FileIO.h"

#include <filesystem>
#include <fstream>

namespace exir::run {

namespace {
/// A .pte carries the flatbuffer identifier "ET12" at byte 4.
bool looksLikePte(const std::string &head) { return head.size() >= 8 && head.compare(4, 4, "ET12") == 0; }
} // namespace

std::unique_ptr<Executable> loadExecutable(const std::string &path) {
  if (path == "-") {
    auto bytes = std::make_shared<const std::string>(readFileOrStdin(path));
    checkInputNotEmpty(*bytes, path);
    if (looksLikePte(*bytes)) return makePteExecutable(pte::readPte(bytes, path));
    // JSON on stdin: our artifact writes "format" first; anything else is read
    // as a bare torch.export ExportedProgram.
    size_t key = bytes->find_first_not_of(" \t\r\n{");
    std::string cwd = std::filesystem::current_path().string();
    Program program;
    if (key != std::string::npos && bytes->compare(key, 8, "\"format\"") == 0) {
      program = readProgramJson(*bytes, path, cwd);
    } else {
      program = programFromExportedProgram(readExportedProgramJson(*bytes, path), Stage::Aten);
      program.stage = guessStage(program.methods.begin()->second.program);
      program.baseDirectory = cwd;
    }
    registerOpLibraries(program);
    return makeGraphExecutable(std::move(program));
  }
  requireRegularFile(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open the file", path);
  std::string head(8, '\0');
  in.read(head.data(), 8);
  head.resize(size_t(in.gcount()));
  if (looksLikePte(head)) return makePteExecutable(pte::readPteFile(path));
  Program program = readProgram(path);
  try {
    registerOpLibraries(program);
    return makeGraphExecutable(std::move(program));
  } catch (Error &e) {
    e.withFile(path);
    throw;
  }
}

} // namespace exir::run
