# Converts every golden case: cmake -DCONVERT=... [-DCONVERT_EMULATOR="qemu|..."] -DOCTET=...
#   -DEMULATOR="qemu|..." -DCASES=tests/golden/cases -DOUT=dir -P convert_golden_cases.cmake
# (EMULATOR runs octet; CONVERT_EMULATOR runs the converter, EMULATOR when not given: empty
# when the converter is the build machine's, tests/CMakeLists.txt.)
# Each case directory (one with a config.json) becomes OUT/<case>.octet with
# --dtype fp32 and OUT/<case>.int8.octet with --dtype int8, and both must load
# (`octet inspect`). All failures are listed.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED CONVERT_EMULATOR)
  set(CONVERT_EMULATOR "${EMULATOR}")
endif()
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
string(REPLACE "|" ";" CONVERT_EMULATOR "${CONVERT_EMULATOR}")
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
  set(ok TRUE)
  foreach(dtype fp32 int8)
    set(model "${OUT}/${name}.octet")
    if(dtype STREQUAL "int8")
      set(model "${OUT}/${name}.int8.octet")
    endif()
    execute_process(COMMAND ${CONVERT_EMULATOR} ${CONVERT} "${dir}" -o "${model}" --dtype ${dtype} --quiet
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
      string(STRIP "${err}" err)
      list(APPEND failures "${name}: convert --dtype ${dtype} exited ${rc}: ${err}")
      set(ok FALSE)
      break()
    endif()
    execute_process(COMMAND ${EMULATOR} ${OCTET} inspect "${model}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}" err)
      list(APPEND failures "${name}: inspect (${dtype}) exited ${rc}: ${err}")
      set(ok FALSE)
      break()
    endif()
  endforeach()
  if(ok)
    message(STATUS "${name}: converted (fp32 and int8) and loaded")
  endif()
endforeach()

list(LENGTH failures n_failed)
if(n_failed GREATER 0)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "${n_failed} of ${count} golden cases failed:\n  ${text}")
endif()
message(STATUS "all ${count} golden cases converted into ${OUT}")
