# Greedy generation with the KV cache against full runs, for a decoder-only
# golden case: the first sequence of its inputs.json is the prompt,
# `octet run --generate N --temperature 0` continues it, and a full run over the
# prompt and the generated ids must have each generated id as its argmax at the
# position before it (octet_npy_compare --argmax-from). Cases whose model has a
# tokenizer are not registered (generation prints text).
#   cmake -DOCTET=... -DCOMPARE=... -DEMULATOR="qemu|..." -DCASE_DIR=... -DMODEL=...
#         -DOUT=out.npy -DNEW_TOKENS=8 -P golden_generate.cmake
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
if(NOT EXISTS "${MODEL}")
  message(FATAL_ERROR "${MODEL} is missing: convert.golden_cases did not convert this case")
endif()
file(READ "${CASE_DIR}/inputs.json" inputs)
string(JSON n_prompt LENGTH "${inputs}" ids 0)
set(prompt "")
math(EXPR last "${n_prompt} - 1")
foreach(i RANGE ${last})
  string(JSON id GET "${inputs}" ids 0 ${i})
  list(APPEND prompt ${id})
endforeach()
list(JOIN prompt "," prompt)

execute_process(COMMAND ${EMULATOR} ${OCTET} run "${MODEL}" --ids ${prompt}
                        --generate ${NEW_TOKENS} --temperature 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet run --generate exited ${rc}: ${err}")
endif()
if(NOT out MATCHES "^sequence 0: [0-9,]+ -> ([0-9]+(,[0-9]+)*)\n$")
  message(FATAL_ERROR "unexpected --generate output: ${out}")
endif()
set(generated "${CMAKE_MATCH_1}")
string(REPLACE "," ";" generated_list "${generated}")
list(LENGTH generated_list n_generated)
if(n_generated GREATER NEW_TOKENS)  # fewer when the model ends on its eos id
  message(FATAL_ERROR "${n_generated} ids generated, ${NEW_TOKENS} asked: ${out}")
endif()

file(REMOVE "${OUT}")
execute_process(COMMAND ${EMULATOR} ${OCTET} run "${MODEL}" --ids ${prompt},${generated}
                        --dump "${OUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet run exited ${rc}: ${err}")
endif()
math(EXPR from "${n_prompt} - 1")
execute_process(COMMAND ${EMULATOR} ${COMPARE} "${OUT}" --argmax-from ${from} --ids ${generated}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${out}" out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${out}${err}")
endif()
