# Greedy generation of a converted golden case through the KV cache: the
# sequences of its inputs.json are the prompts of one batched `octet run
# --generate N --temperature 0`, and each generated token must be the argmax
# of a full forward pass (no cache) over its prompt and the tokens before it.
# This checks the prefill and the decode steps (RoPE at later positions, the
# cached keys, windows reached by the steps) against the path the goldens check.
# With -DCONTINUATION=ON and a "continuation" in inputs.json (the reference's
# own greedy tokens after each sequence, gen_goldens.py), the generated tokens
# must also be those.
#   cmake -DOCTET=... -DEMULATOR="qemu|..." -DCASE_DIR=... -DMODEL=... -DTOKENS=8
#         [-DCONTINUATION=ON] -P golden_generate.cmake
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
if(NOT EXISTS "${MODEL}")
  message(FATAL_ERROR "${MODEL} is missing: convert.golden_cases did not convert this case")
endif()
file(READ "${CASE_DIR}/inputs.json" inputs)
file(READ "${CASE_DIR}/config.json" config)
string(JSON eos_value ERROR_VARIABLE no_eos GET "${config}" eos_token_id)
if(NOT no_eos)
  set(eos "${eos_value}")
endif()

string(JSON batch LENGTH "${inputs}" ids)
set(prompts "")
set(args "")
math(EXPR last "${batch} - 1")
foreach(b RANGE ${last})
  string(JSON n LENGTH "${inputs}" ids ${b})
  set(seq "")
  math(EXPR n_last "${n} - 1")
  foreach(i RANGE ${n_last})
    string(JSON id GET "${inputs}" ids ${b} ${i})
    list(APPEND seq ${id})
  endforeach()
  list(JOIN seq "," seq)
  list(APPEND prompts "${seq}")
  list(APPEND args --ids "${seq}")
endforeach()

execute_process(COMMAND ${EMULATOR} ${OCTET} run "${MODEL}" ${args} --generate ${TOKENS}
                        --temperature 0
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet run --generate exited ${rc}: ${err}")
endif()
foreach(b RANGE ${last})
  list(GET prompts ${b} ids)
  if(NOT out MATCHES "sequence ${b}: ${ids} -> ([0-9,]+)\n")
    message(FATAL_ERROR "no generated ids for sequence ${b} in:\n${out}")
  endif()
  string(REPLACE "," ";" tokens "${CMAKE_MATCH_1}")
  list(LENGTH tokens count)
  if(NOT count EQUAL TOKENS)
    # Fewer only when generation stopped at the config's end-of-sequence id.
    list(GET tokens -1 last_id)
    if(count GREATER TOKENS OR NOT DEFINED eos OR NOT last_id STREQUAL eos)
      message(FATAL_ERROR "sequence ${b}: ${count} tokens generated, ${TOKENS} asked")
    endif()
    message(STATUS "sequence ${b}: stopped at the end-of-sequence id ${eos} after ${count} tokens")
  endif()
  string(JSON has_continuation ERROR_VARIABLE no_continuation GET "${inputs}" continuation)
  if(CONTINUATION AND NOT no_continuation)
    set(want "")
    math(EXPR last_token "${count} - 1")
    foreach(i RANGE ${last_token})
      string(JSON id GET "${inputs}" continuation ${b} ${i})
      list(APPEND want ${id})
    endforeach()
    if(NOT want STREQUAL tokens)
      message(FATAL_ERROR "sequence ${b}: generated ${tokens}, the reference's greedy "
                          "continuation is ${want}")
    endif()
    message(STATUS "sequence ${b}: the reference's greedy continuation, token for token")
  endif()
  foreach(token IN LISTS tokens)
    execute_process(COMMAND ${EMULATOR} ${OCTET} run "${MODEL}" --ids ${ids}
                    RESULT_VARIABLE rc OUTPUT_VARIABLE full ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "octet run exited ${rc}: ${err}")
    endif()
    if(NOT full MATCHES "next token \\(argmax at position [0-9]+\\): ([0-9]+) ")
      message(FATAL_ERROR "no next token in the summary:\n${full}")
    endif()
    if(NOT CMAKE_MATCH_1 STREQUAL token)
      message(FATAL_ERROR "sequence ${b}: generated ${token} after ${ids}, but the full pass's "
                          "argmax is ${CMAKE_MATCH_1}")
    endif()
    set(ids "${ids},${token}")
  endforeach()
  message(STATUS "sequence ${b}: ${TOKENS} greedy tokens equal the full passes' argmax")
endforeach()
