# The c_api_models fixture: the synthetic models the C API tests read, written
# by octet-testmodel (random weights; tests/support/test_models.cc) into OUT.
#   cmake -DTESTMODEL=... -DEMULATOR=a|b -DOUT=dir -P make_models.cmake
# The tests check the model facts against these options (c_api_test.c).
string(REPLACE "|" ";" _emulator "${EMULATOR}")
file(MAKE_DIRECTORY ${OUT})
# Every model: vocab 64, hidden 32 (2 heads of 16); the "other" twins differ in their weights.
set(_models
  "llama.octet --layers 2 --packed --seed 3"
  "llama_other.octet --layers 2 --packed --seed 4"
  "llama_fp32.octet --layers 2 --fp32 --seed 3"
  "llama_fp32_other.octet --layers 2 --fp32 --seed 4"
  "llama0.octet --layers 0 --seed 3"
  "bert.octet --family bert --layers 2 --seed 3"
  "roberta.octet --family roberta --layers 2 --seed 3"
  "t5.octet --family t5 --layers 2 --seed 3")
foreach(_line IN LISTS _models)
  separate_arguments(_args UNIX_COMMAND "${_line}")
  list(POP_FRONT _args _name)
  execute_process(COMMAND ${_emulator} ${TESTMODEL} ${OUT}/${_name} ${_args} --vocab 64 --hidden 32
                  RESULT_VARIABLE _rc ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "octet-testmodel ${_name} ${_args}: ${_rc}\n${_err}")
  endif()
endforeach()
