# octet tokenize / detokenize end to end: models/austen converted with its
# tokenizer.json, then the command line against the first golden lines.
#   -DCONVERT=octet-convert -DOCTET=octet -DEMULATOR=a|b -DSOURCE=models/austen
#   -DGOLDEN=goldens/austen.jsonl -DWORK=dir
string(REPLACE "|" ";" emulator "${EMULATOR}")
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${emulator} ${CONVERT} ${SOURCE} -o ${WORK}/austen.octet --dtype fp32 --quiet
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet-convert failed: ${err}")
endif()
file(STRINGS ${GOLDEN} lines ENCODING UTF-8)
list(GET lines 1 first)
string(JSON text GET "${first}" text)
string(JSON n LENGTH "${first}" ids)
set(want "")
math(EXPR last "${n} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${first}" ids ${i})
  list(APPEND want ${id})
endforeach()
string(REPLACE ";" "," want "${want}")
execute_process(COMMAND ${emulator} ${OCTET} tokenize ${WORK}/austen.octet --text "${text}"
                OUTPUT_VARIABLE got RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT got STREQUAL "${want}\n")
  message(FATAL_ERROR "octet tokenize: got '${got}' (${err}), want '${want}'")
endif()
string(JSON decoded GET "${first}" decoded)
execute_process(COMMAND ${emulator} ${OCTET} detokenize ${WORK}/austen.octet --ids ${want}
                OUTPUT_VARIABLE got RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT got STREQUAL "${decoded}\n")
  message(FATAL_ERROR "octet detokenize: got '${got}' (${err}), want '${decoded}'")
endif()
# --file: one line per text; --no-special; an id outside the vocabulary is one line on stderr.
file(WRITE ${WORK}/texts.txt "${text}\nsecond line\n")
execute_process(COMMAND ${emulator} ${OCTET} tokenize ${WORK}/austen.octet --no-special --file ${WORK}/texts.txt
                OUTPUT_VARIABLE got RESULT_VARIABLE rc)
string(REGEX MATCHALL "\n" newlines "${got}")
list(LENGTH newlines count)
if(NOT rc EQUAL 0 OR NOT count EQUAL 2)
  message(FATAL_ERROR "octet tokenize --file: got '${got}'")
endif()
execute_process(COMMAND ${emulator} ${OCTET} detokenize ${WORK}/austen.octet --ids 1,999999
                OUTPUT_VARIABLE got RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "outside the vocabulary")
  message(FATAL_ERROR "octet detokenize of a bad id: rc ${rc}, '${err}'")
endif()
