//===- fuzz/FuzzPickle.cpp - the torch.save pickle subset ------------------===//
//
// One input = one data.pkl: the pickle interpreter that finds the tensors
// (storage key, dtype, sizes, strides, offset) of a torch.save archive.
//
//===----------------------------------------------------------------------===//
#include "FuzzCommon.h"

#include "Serde/TorchPickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace exir;
  fuzz::fuzzOne([&] { readPickledTensors(fuzz::asText(data, size), "data.pkl"); });
  return 0;
}
