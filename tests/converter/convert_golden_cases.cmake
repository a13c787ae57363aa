# Converts every golden case: cmake -DCONVERT=... -DOCTET=... -DEMULATOR="qemu|..."
#   -DCASES=tests/golden/cases -DOUT=dir -P convert_golden_cases.cmake
# Each case directory (one with a config.json) becomes OUT/<case>.octet with
# --dtype fp32, and must load (`octet inspect`). All failures are listed.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
file(REMOVE_RECURSE "${OUT}")
file(MAKE_DIRECTORY "${OUT}")

file(GLOB configs LIST_DIRECTORIES false "${CASES}/*/config.json")
list(SORT configs)
if(NOT configs)
  message(STATUS "no golden cases under ${CASES} (make them with tests/golden/gen_goldens.py)")
  return()
endif()

set(failures "")
set(count 0)
foreach(config IN LISTS configs)
  get_filename_component(dir "${config}" DIRECTORY)
  get_filename_component(name "${dir}" NAME)
  math(EXPR count "${count} + 1")
  execute_process(COMMAND ${EMULATOR} ${CONVERT} "${dir}" -o "${OUT}/${name}.octet" --dtype fp32 --quiet
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
    string(STRIP "${err}" err)
    list(APPEND failures "${name}: convert exited ${rc}: ${err}")
    continue()
  endif()
  execute_process(COMMAND ${EMULATOR} ${OCTET} inspect "${OUT}/${name}.octet"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(STRIP "${err}" err)
    list(APPEND failures "${name}: inspect exited ${rc}: ${err}")
    continue()
  endif()
  message(STATUS "${name}: converted and loaded")
endforeach()

list(LENGTH failures n_failed)
if(n_failed GREATER 0)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "${n_failed} of ${count} golden cases failed:\n  ${text}")
endif()
message(STATUS "all ${count} golden cases converted into ${OUT}")
