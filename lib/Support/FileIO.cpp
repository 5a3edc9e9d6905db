//===- Support/FileIO.cpp - Reading inputs and writing outputs atomically -===//
#include "Support/FileIO.h"
#include "Support/Error.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <unistd.h>

namespace exir {

std::string readFileOrStdin(const std::string &path) {
  if (path == "-") {
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    return buffer.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(std::string("cannot open file: ") + std::strerror(errno), path);
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  if (size < 0) throw Error("cannot read file", path);
  std::string data(static_cast<size_t>(size), '\0');
  in.seekg(0);
  in.read(data.data(), size);
  if (!in) throw Error("cannot read file", path);
  return data;
}

void writeFileAtomically(const std::string &path,
                         const std::function<void(std::ostream &)> &produce) {
  if (path == "-") {
    std::ostringstream buffer;
    produce(buffer); // produce fully before writing, so errors print no partial output
    std::string bytes = buffer.str();
    std::cout.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::cout.flush();
    return;
  }
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  try {
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw Error(std::string("cannot create output file: ") + std::strerror(errno), path);
      produce(out);
      out.flush();
      if (!out) throw Error("failed writing output file", path);
    }
    std::filesystem::rename(tmp, path);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

void writeFileAtomically(const std::string &path, const std::string &bytes) {
  writeFileAtomically(path, [&](std::ostream &out) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  });
}

std::string readFileRange(const std::string &path, uint64_t offset, uint64_t length) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(std::string("cannot open data file: ") + std::strerror(errno), path);
  in.seekg(0, std::ios::end);
  uint64_t size = static_cast<uint64_t>(in.tellg());
  if (offset > size || length > size - offset)
    throw Error("data reference [" + std::to_string(offset) + ", +" + std::to_string(length) +
                    ") points past the end of the file (" + std::to_string(size) + " bytes)",
                path);
  std::string data(length, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(data.data(), static_cast<std::streamsize>(length));
  if (!in) throw Error("cannot read data file", path);
  return data;
}

uint64_t fileSize(const std::string &path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) throw Error("cannot open file: " + ec.message(), path);
  return size;
}

std::string parentDirectory(const std::string &path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

} // namespace exir
