# -DOCTET -DTESTMODEL -DEMULATORS (one per CPU, ',' between, '|' inside)
# -DCPUS -DWORK: the same generation under every CPU model gives the same ids.
file(MAKE_DIRECTORY ${WORK})
string(REPLACE "," ";" _emulators "${EMULATORS}")
list(GET _emulators 0 _first)
string(REPLACE "|" ";" _first "${_first}")
set(_model ${WORK}/packed.octet)
execute_process(COMMAND ${_first} ${TESTMODEL} ${_model} --layers 2 --packed --hidden 64
                        --vocab 512 --no-tokenizer
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "octet-testmodel failed: ${_err}")
endif()
set(_reference "")
set(_i 0)
foreach(_emulator IN LISTS _emulators)
  list(GET CPUS ${_i} _cpu)
  math(EXPR _i "${_i} + 1")
  string(REPLACE "|" ";" _emulator "${_emulator}")
  execute_process(
    COMMAND ${_emulator} ${OCTET} run ${_model} --ids 1,5,9,3 --ids 7,2 --generate 12
            --temperature 0.7 --seed 11 --threads 2
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${_cpu}: octet run failed (${_rc}; SIGILL is 132 or 'Illegal instruction'): ${_err}")
  endif()
  message(STATUS "${_cpu}: ${_out}")
  if(_reference STREQUAL "")
    set(_reference "${_out}")
    set(_reference_cpu ${_cpu})
  elseif(NOT _out STREQUAL _reference)
    message(FATAL_ERROR "${_cpu} generated other tokens than ${_reference_cpu}:\n${_out}\nvs\n${_reference}")
  endif()
endforeach()
