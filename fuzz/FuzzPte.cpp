//===- fuzz/FuzzPte.cpp - .pte and .ptd readers ----------------------------===//
//
// One input = one file, read as exir-inspect reads it: a .ptd (FlatTensor,
// "FT01" at byte 4) through readPtd and its listing, anything else as a .pte
// through readPte and its text and JSON dumps.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "Pte/FlatTensor.h"
#include "Pte/PteDump.h"
#include "Pte/PteReader.h"

#include <sstream>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  std::string_view bytes = fuzz::asText(data, size);
  fuzz::fuzzOne([&] {
    std::ostringstream sink;
    if (ptd::looksLikePtd(bytes)) {
      ptd::File file = ptd::readPtd(fuzz::writeInputFile(bytes, ".ptd"));
      ptd::dumpPtdText(file, sink);
    } else {
      pte::Program program = pte::readPte(std::string(bytes), "fuzz.pte");
      pte::dumpPteText(program, sink);
      pte::dumpPteJson(program, sink);
    }
  });
  return 0;
}
