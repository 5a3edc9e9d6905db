//===- Serde/PayloadConfig.h - PT2 weights configs read in place -*- C++ -*-===//
//
// Internal to lib/Serde. A PT2 archive describes its raw weight payloads in a
// PayloadConfig member (`data/weights/<model>_weights_config.json`): for each
// FQN a member name and a TensorMeta. For 100k weights that is 30 MB of one
// repeated shape, whose simdjson DOM (~100 MB of fresh tape and string pages)
// and TensorMeta objects cost more than everything else the constants table
// needs. scanPayloadConfig reads that shape with simdjson's On-Demand API
// instead (a structural index, no tape; strings stay in the text unless they
// hold an escape). It accepts a strict subset of what the DOM reader accepts,
// with the same meaning, and gives up on anything else (floats, symbolic or
// unusual fields, duplicate keys, any syntax error): the caller then reads the
// config through the DOM, which reports every problem as it always has.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "IR/IR.h"

#include <simdjson.h>

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace exir {

/// One FQN of a PayloadConfig. Strings point into the scanned text, or into
/// PayloadTable::unescaped for the rare one written with escapes.
struct PayloadEntry {
  std::string_view fqn;
  std::string_view pathName; // empty when the field is missing
  bool usePickle = false;
  bool tensor = false; // tensor_meta is present and not null
  ScalarType dtype = ScalarType::Float;
  int64_t storageOffset = 0;
  // sizes and strides: runs of PayloadTable::ints
  uint32_t sizesAt = 0, sizesCount = 0, stridesAt = 0, stridesCount = 0;
};

struct PayloadTable {
  std::vector<PayloadEntry> entries; // in document order
  std::vector<int64_t> ints;
  std::deque<std::string> unescaped; // strings that held escapes (stable addresses)
};

/// The entries of PayloadConfig JSON `text` (followed by simdjson's padding),
/// or nullopt if the text is not in the common form read here (see above).
std::optional<PayloadTable> scanPayloadConfig(simdjson::padded_string_view text);

} // namespace exir
