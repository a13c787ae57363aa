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
foreach(family bert distilbert roberta xlm-roberta gpt2 llama qwen2 mistral marian t5)
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

# int8 (the default): the summary, the quantization report (weights, the
# tuning steps, every layer's output, the calibration used: a decoder writes
# its own), about a quarter of the fp32 file.
run(${CONVERT} llama -o int8.octet)
expect_ok("llama, [0-9]+ tensors \\(int8\\)" "quantization report"
          "weights: [0-9]+ int8 tensors, worst [0-9.]+ dB"
          "calibration: 16 x [0-9]+ ids the fp32 model generated \\(temperature 1, seed 1\\), as no --calibration was given"
          "int8 tuning, measured on 8 x [0-9]+ ids the fp32 model generated"
          "round to nearest +[0-9.]+ +[0-9.]+ +[0-9.]+%" "[0-9]+ of [0-9]+ matrices in int8"
          "layers\\.0\\.output +[0-9.]+ +0\\.99" "layers\\.1\\.output" "\n  output +[0-9.]+")
# Encoders without a tokenizer calibrate on pseudo-random ids (with one, on the built-in
# text: calibration_text_test.cc) and report output SQNR per step.
run(${CONVERT} bert -o bert8.octet)
expect_ok("calibration: 4 x [0-9]+ pseudo-random token ids"
          "round to nearest +- +- +- .*output SQNR [0-9.]+ dB")
# Every step, with a target no model meets; --keep-fp32 keeps what it names.
# (an unreachable target: the fp32 products stop at --max-size)
run(${CONVERT} llama -o tuned.octet --target-ppl-ratio 0.5 --keep-fp32 "layers.0.ffn.*" --max-size 5%)
expect_ok("layer by layer +[0-9.]+ +[0-9.]+ +[0-9.]+% +smoothing kept in [0-2] of 2 layers, clipping kept in [0-2] of 2 layers, compensated rounding kept in [0-2] of 2 layers"
          "target perplexity ratio 0\\.5 not met: [0-9.]+ reached within --max-size 5%; the file written is the best found")
# --require-target: the same file, and exit status 3 with that line on stderr.
run(${CONVERT} llama -o required.octet --target-ppl-ratio 0.5 --require-target --max-size 5% --quiet)
expect_error(3 "target perplexity ratio 0\\.5 not met: [0-9.]+ reached within --max-size 5%; the file written is the best found")
if(NOT EXISTS "${WORK}/required.octet")
  fail("--require-target: the file must still be written")
endif()
run(${CONVERT} llama -o x.octet --max-size 10X)
expect_error(2 "--max-size '10X' is not a size > 0")
run(${CONVERT} llama -o x.octet --no-tune --require-target)
expect_error(2 "--no-tune measures nothing")
run(${OCTET} inspect tuned.octet)
expect_ok("layers\\.0\\.ffn\\.down\\.weight +F32" "layers\\.0\\.ffn\\.up\\.weight +F32"
          "I8 PackedQs8N16K4" "int8_step_1 +round to nearest"
          "fp32_matrices +layers\\.0\\.ffn\\.(down|gate|up)\\.weight")
run(${CONVERT} llama -o x.octet --keep-fp32 "layers.*.mlp.down_proj.weight")
expect_error(1 "--keep-fp32 'layers\\.\\*\\.mlp\\.down_proj\\.weight' matches no int8 tensor")
run(${CONVERT} llama -o x.octet --target-ppl-ratio 0)
expect_error(2 "--target-ppl-ratio '0' is not a number > 0")
run(${CONVERT} llama -o x.octet --dtype fp32 --keep-fp32 token_embedding)
expect_error(2 "--no-tune are used by --dtype int8")
run(${CONVERT} llama -o x.octet --no-tune --target-ppl-ratio 1.02)
expect_error(2 "--no-tune measures nothing")
run(${CONVERT} llama -o notune.octet --no-tune --keep-fp32 token_embedding)
expect_ok("tuning off \\(--no-tune\\)" "calibration: 16 x [0-9]+ ids the fp32 model generated")
run(${OCTET} inspect notune.octet)
expect_ok("token_embedding +F32")
run(${CONVERT} llama -o x.octet --heldout nothing.txt)
expect_error(1 "held-out file 'nothing\\.txt' does not exist")
run(${CONVERT} llama -o int8q.octet --dtype int8 --quiet)
expect_ok("^$")
file(SIZE "${WORK}/int8q.octet" int8_bytes)
run(${CONVERT} llama -o fp32.octet --dtype fp32 --quiet)
file(SIZE "${WORK}/fp32.octet" fp32_bytes)
math(EXPR ratio_percent "100 * ${int8_bytes} / ${fp32_bytes}")
if(ratio_percent GREATER 35)
  fail("the int8 file is ${ratio_percent}% of the fp32 file (expected about 25%)")
endif()
run(${OCTET} inspect int8q.octet)
expect_ok("quantization report" "layers\\.0\\.attn\\.q\\.weight" "layers\\.1\\.output"
          "calibration")
# --calibration: token ids, one sequence per line.
file(WRITE "${WORK}/calib.txt" "1, 5, 9, 30\n7 8 9\n")
run(${CONVERT} llama -o c.octet --calibration calib.txt)
expect_ok("calibration: 2 sequences, 7 token ids from calib.txt")
file(WRITE "${WORK}/text.txt" "hello world\n")
run(${CONVERT} llama -o c.octet --calibration text.txt)
expect_error(1 "the calibration file is text, but the checkpoint has no tokenizer to encode it")
file(WRITE "${WORK}/big.txt" "1 2 100000\n")
run(${CONVERT} llama -o c.octet --calibration big.txt)
expect_error(1 "calibration line 1: token id 100000 is outside the vocabulary")
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
