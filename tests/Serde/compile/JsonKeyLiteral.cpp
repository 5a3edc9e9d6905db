// Compiled by ctest, not linked (tests/CMakeLists.txt): a literal key that
// JSON would need to escape must not compile (JsonKey's consteval check), and
// the same file with a plain key must, so the refusal is not some other error.
#include "Serde/JsonWriter.h"

void writeKey(exir::JsonWriter &w) {
#ifdef EXIR_KEY_NEEDS_ESCAPING
  w.key("needs \"escaping\"");
#else
  w.key("plain_key");
#endif
}
