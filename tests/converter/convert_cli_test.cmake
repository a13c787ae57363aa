# octet-convert as a user runs it: cmake -DCONVERT=... -DOCTET=... -DCHECKPOINT=...
#   -DEMULATOR="qemu|..." -DWORK=dir -P convert_cli_test.cmake
# Success prints one summary line on stdout (nothing with --quiet) and nothing
# on stderr; every failure is exactly one line "octet-convert: ..." and no file.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run)
  execute_process(COMMAND ${EMULATOR} ${ARGN} WORKING_DIRECTORY "${WORK}"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(RC "${rc}" PARENT_SCOPE)
  set(OUT "${out}" PARENT_SCOPE)
  set(ERR "${err}" PARENT_SCOPE)
  list(JOIN ARGN " " command)
  set(LAST_COMMAND "${command}" PARENT_SCOPE)
endfunction()

function(fail what)
  message(FATAL_ERROR "${what}\n  command: ${LAST_COMMAND}\n  exit: ${RC}\n"
                      "  stdout:\n${OUT}\n  stderr:\n${ERR}")
endfunction()

function(expect_ok)
  if(NOT RC EQUAL 0)
    fail("expected exit status 0")
  endif()
  if(NOT ERR STREQUAL "")
    fail("expected nothing on stderr")
  endif()
  foreach(pattern IN LISTS ARGN)
    if(NOT OUT MATCHES "${pattern}")
      fail("stdout does not match '${pattern}'")
    endif()
  endforeach()
endfunction()

function(expect_error status)
  if(NOT RC STREQUAL "${status}")
    fail("expected exit status ${status}")
  endif()
  if(NOT OUT STREQUAL "")
    fail("expected nothing on stdout")
  endif()
  string(REGEX MATCHALL "\n" newlines "${ERR}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT ERR MATCHES "\n$" OR NOT ERR MATCHES "^octet-convert: [^ ]")
    fail("expected exactly one line 'octet-convert: ...' on stderr")
  endif()
  foreach(pattern IN LISTS ARGN)
    if(NOT ERR MATCHES "${pattern}")
      fail("stderr does not match '${pattern}'")
    endif()
  endforeach()
endfunction()

# Every family converts and loads; the summary names the model type.
foreach(family bert gpt2 llama qwen2 mistral marian t5)
  run(${CHECKPOINT} ${family} --family ${family})
  expect_ok()
  run(${CONVERT} ${family} -o ${family}.octet --dtype fp32)
  expect_ok("^wrote ${family}\\.octet: ${family}, [0-9]+ tensors \\(fp32\\), 0 tokenizer files, ")
  run(${OCTET} inspect ${family}.octet)
  expect_ok()
endforeach()

# F16, BF16 and sharded checkpoints; --quiet prints nothing.
run(${CHECKPOINT} llama_f16 --dtype F16 --shards 3)
expect_ok()
run(${CONVERT} llama_f16 -o llama_f16.octet --dtype fp32 --quiet)
expect_ok("^$")
run(${CHECKPOINT} t5_bf16 --family t5 --dtype BF16)
expect_ok()
run(${CONVERT} t5_bf16 --output=t5_bf16.octet --dtype=fp32 --quiet)
expect_ok("^$")

# int8 (the default) is the next issue's; calibration belongs to it.
run(${CONVERT} llama -o int8.octet)
expect_error(1 "--dtype int8 \\(the default\\) is not available yet: .*issue #4")
run(${CONVERT} llama -o int8.octet --dtype int8 --quiet)
expect_error(1 "issue #4")
file(WRITE "${WORK}/calib.txt" "hello\n")
run(${CONVERT} llama -o x.octet --dtype fp32 --calibration calib.txt)
expect_error(2 "--calibration is used by --dtype int8")

# Broken checkpoints: one line naming the problem, no output file.
run(${CHECKPOINT} missing --remove model.layers.1.mlp.up_proj.weight)
expect_ok()
run(${CONVERT} missing -o missing.octet --dtype fp32)
expect_error(1 "llama: missing tensor model\\.layers\\.1\\.mlp\\.up_proj\\.weight \\(-> layers\\.1\\.ffn\\.up\\.weight\\) \\[48, 32\\]")
if(EXISTS "${WORK}/missing.octet")
  fail("a failed conversion left missing.octet behind")
endif()

file(COPY "${WORK}/llama/" DESTINATION "${WORK}/badjson")
file(WRITE "${WORK}/badjson/config.json" "{\"model_type\": \"llama\",\n")
run(${CONVERT} badjson -o badjson.octet --dtype fp32)
expect_error(1 "config\\.json is not valid JSON: .*line 2")

file(COPY "${WORK}/llama/" DESTINATION "${WORK}/truncated")
file(WRITE "${WORK}/truncated/model.safetensors" "abc")
run(${CONVERT} truncated -o truncated.octet --dtype fp32)
expect_error(1 "model\\.safetensors is truncated: 3 bytes")

file(COPY "${WORK}/llama/" DESTINATION "${WORK}/bart")
file(WRITE "${WORK}/bart/config.json" "{\"model_type\": \"bart\"}")
run(${CONVERT} bart -o bart.octet --dtype fp32)
expect_error(1 "config\\.json: model_type 'bart' is not supported")

file(MAKE_DIRECTORY "${WORK}/noweights")
file(WRITE "${WORK}/noweights/config.json" "{\"model_type\": \"gpt2\"}")
run(${CONVERT} noweights -o noweights.octet --dtype fp32)
expect_error(1 "neither model\\.safetensors nor model\\.safetensors\\.index\\.json")

run(${CONVERT} llama -o no_such_dir/x.octet --dtype fp32)
expect_error(1 "does not exist")
