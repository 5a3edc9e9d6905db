# Turns a text file into a C++ function returning it as a std::string_view.
# Usage: cmake -DINPUT=<file> -DOUTPUT=<file.cpp> -DSYMBOL=<function> -P EmbedText.cmake
file(READ "${INPUT}" content)
set(delim "EXIR_EMBED")
string(FIND "${content}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter )${delim}\"")
endif()
set(text "// Generated from ${INPUT} by EmbedText.cmake; do not edit.\n")
string(APPEND text "#include <string_view>\n\nnamespace exir::embedded {\n")
string(APPEND text "std::string_view ${SYMBOL}() {\n")
string(APPEND text "  static const char text[] = R\"${delim}(${content})${delim}\";\n")
string(APPEND text "  return {text, sizeof(text) - 1};\n}\n} // namespace exir::embedded\n")
file(WRITE "${OUTPUT}" "${text}")
