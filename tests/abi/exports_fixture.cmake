# Writes a copy of the public header that disagrees with liboctet.so on
# purpose, for the negative variants of abi.exports:
#   MODE=drop: without octet_version_number's declaration (the library then
#              exports a function the headers do not declare);
#   MODE=add:  with one more declaration, of a function the library lacks.
# -DHEADER=octet.h -DOUT=the copy -DMODE=drop|add
file(READ ${HEADER} text)
set(original "${text}")
if(MODE STREQUAL "drop")
  string(REPLACE "OCTET_API uint32_t octet_version_number(void);" "" text "${text}")
elseif(MODE STREQUAL "add")
  string(APPEND text "\nOCTET_API void octet_declared_but_not_exported(void);\n")
else()
  message(FATAL_ERROR "MODE must be drop or add")
endif()
if(text STREQUAL original)
  message(FATAL_ERROR "the fixture is the header unchanged: ${HEADER} changed its declarations")
endif()
file(WRITE ${OUT} "${text}")
