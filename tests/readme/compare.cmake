# The README examples against the CLI: same prompt, same seed, same text.
# -DOCTET -DGENERATE_C -DPREFIX_CC -DMODEL
function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    list(JOIN ARGN " " _cmd)
    message(FATAL_ERROR "'${_cmd}' failed (${_rc}): ${_err}")
  endif()
  set(${out_var} "${_out}" PARENT_SCOPE)
endfunction()

function(expect_same what expected actual)
  if(NOT expected STREQUAL actual)
    message(FATAL_ERROR "${what} differs from the CLI's.\n--- octet run:\n${expected}\n--- example:\n${actual}")
  endif()
  message(STATUS "${what}: same text as octet run")
endfunction()

set(_prompt "It is a truth universally acknowledged, that")

# generate.c: 64 tokens, temperature 0.8, top-p 0.95, seed 7.
run(_c ${GENERATE_C} ${MODEL})
run(_cli ${OCTET} run ${MODEL} --prompt "${_prompt}" --generate 64 --temperature 0.8 --top-p 0.95
    --seed 7)
if(_c STREQUAL "${_prompt}\n")
  message(FATAL_ERROR "generate.c printed the prompt and nothing else")
endif()
expect_same("generate.c" "${_cli}" "${_c}")

# prefix.cc: the prefix once, then 16 tokens at temperature 0.8 with seeds 1 and 2.
run(_cpp ${PREFIX_CC} ${MODEL})
set(_expected "")
foreach(_seed 1 2)
  run(_cli ${OCTET} run ${MODEL} --prompt "${_prompt}" --generate 16 --temperature 0.8
      --seed ${_seed})
  string(APPEND _expected "seed ${_seed}: ${_cli}")
endforeach()
expect_same("prefix.cc" "${_expected}" "${_cpp}")
