# A trained model of models/ (austen, austen-tiny), end to end: converted with
# --dtype fp32 and with --dtype int8 (calibrated on training text when the
# model has calibration_ids.txt and CALIBRATE is set, else with no flags at
# all: the converter's defaults), then the held-out perplexity of both over
# the first MAX_TOKENS held-out ids. int8 must be within LIMIT_PPM (parts per
# million, relative) of fp32, and the int8 KV cache of a 2048-token session
# at most 55% of an fp16 cache (75% for head_dim 8: KV_LIMIT_PPM; NONE: the model
# has no attention layer, so no KV cache, which octet_perplexity must then report).
# HELDOUT: the held-out ids (default MODEL_DIR/heldout_ids.txt). ROUND_TO_NEAREST_MIN_PPM:
# also convert with --no-tune, which must be at least that far above fp32 (a hard case).
# EMULATOR runs octet_perplexity; CONVERT_EMULATOR the converter (EMULATOR when not given;
# empty when the converter is the build machine's: tests/CMakeLists.txt).
#   cmake -DCONVERT=... [-DCONVERT_EMULATOR=...] -DPERPLEXITY=... -DEMULATOR="qemu|..."
#         -DMODEL_DIR=models/austen
#         -DWORK=dir -DMAX_TOKENS=4096 -DLIMIT_PPM=1000 [-DCALIBRATE=ON]
#         [-DKV_LIMIT_PPM=550000|NONE] [-DHELDOUT=file] [-DROUND_TO_NEAREST_MIN_PPM=50000]
#         -P austen_perplexity.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED CONVERT_EMULATOR)
  set(CONVERT_EMULATOR "${EMULATOR}")
endif()
string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
string(REPLACE "|" ";" CONVERT_EMULATOR "${CONVERT_EMULATOR}")
if(NOT HELDOUT)
  set(HELDOUT "${MODEL_DIR}/heldout_ids.txt")
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(check_run what)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} exited ${rc}: ${out}${err}")
  endif()
endfunction()

execute_process(COMMAND ${CONVERT_EMULATOR} ${CONVERT} "${MODEL_DIR}" -o "${WORK}/fp32.octet" --dtype fp32 --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
check_run("octet-convert --dtype fp32")
if(NOT KV_LIMIT_PPM)
  set(KV_LIMIT_PPM 550000)
endif()
# A converter under the emulator (host code: its tuner is checked on the host presets) runs
# with --no-tune, on the training text where the model folder has it (else on the text its
# fp32 model generates, as with no flags): what qemu checks is the ARM kernels' int8
# perplexity. The build machine's converter converts as on the host (the board runs what a
# desktop made).
set(calibration_args)
if(CALIBRATE OR (CONVERT_EMULATOR AND EXISTS "${MODEL_DIR}/calibration_ids.txt"))
  set(calibration_args --calibration "${MODEL_DIR}/calibration_ids.txt")
endif()
if(CONVERT_EMULATOR)
  list(APPEND calibration_args --no-tune)
endif()
execute_process(COMMAND ${CONVERT_EMULATOR} ${CONVERT} "${MODEL_DIR}" -o "${WORK}/int8.octet"
                        ${calibration_args}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
check_run("octet-convert --dtype int8")
message(STATUS "${out}")

# Text calibration: encoded with the checkpoint's tokenizer.json. A converter feature (the
# converter runs on desktops): checked on the host presets, not again under qemu.
if(EMULATOR)
  message(STATUS "text calibration: checked on the host presets (converter-side), not in an emulated suite")
elseif(CALIBRATE)
  file(WRITE "${WORK}/calibration.txt"
       "It is a truth universally acknowledged, that a single man in possession of a good "
       "fortune, must be in want of a wife.\n\n\"My dear Mr. Bennet,\" said his lady to him one "
       "day, \"have you heard that Netherfield Park is let at last?\"\n")
  execute_process(COMMAND ${CONVERT_EMULATOR} ${CONVERT} "${MODEL_DIR}" -o "${WORK}/text.octet"
                          --calibration "${WORK}/calibration.txt"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_run("octet-convert --calibration text")
  if(NOT out MATCHES "calibration: 1 sequences, [0-9]+ token ids \\(text encoded with the model.s tokenizer\\)")
    message(FATAL_ERROR "text calibration was not encoded: ${out}")
  endif()
endif()

set(dtypes fp32 int8)
if(ROUND_TO_NEAREST_MIN_PPM)
  execute_process(COMMAND ${CONVERT_EMULATOR} ${CONVERT} "${MODEL_DIR}" -o "${WORK}/rtn.octet" --no-tune
                          --quiet
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_run("octet-convert --no-tune")
  list(APPEND dtypes rtn)
endif()
foreach(dtype ${dtypes})
  execute_process(COMMAND ${EMULATOR} ${PERPLEXITY} "${WORK}/${dtype}.octet"
                          "${HELDOUT}" --max-tokens ${MAX_TOKENS}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  check_run("octet_perplexity (${dtype})")
  message(STATUS "${dtype}: ${out}")
  if(NOT out MATCHES "perplexity ([0-9.]+) over")
    message(FATAL_ERROR "no perplexity in: ${out}")
  endif()
  set(ppl_${dtype} "${CMAKE_MATCH_1}")
  if(KV_LIMIT_PPM STREQUAL "NONE")
    if(NOT out MATCHES "no KV cache \\(no attention layer\\): 0 bytes for 2048 tokens")
      message(FATAL_ERROR "KV_LIMIT_PPM=NONE, but the model has a KV cache: ${out}")
    endif()
    continue()
  endif()
  if(NOT out MATCHES "ratio ([0-9.]+)")
    message(FATAL_ERROR "no KV cache ratio in: ${out}")
  endif()
  set(kv_${dtype} "${CMAKE_MATCH_1}")
endforeach()

# CMake's math() is integer-only: compare in parts per million.
function(ppm value var)
  if(NOT value MATCHES "^([0-9]+)\\.([0-9]+)$")
    message(FATAL_ERROR "not a decimal number: ${value}")
  endif()
  set(whole "${CMAKE_MATCH_1}")
  string(SUBSTRING "${CMAKE_MATCH_2}000000" 0 6 frac)
  string(REGEX REPLACE "^0+(.)" "\\1" frac "${frac}")
  math(EXPR result "${whole} * 1000000 + ${frac}")
  set(${var} "${result}" PARENT_SCOPE)
endfunction()
ppm("${ppl_fp32}" fp32_ppm)
ppm("${ppl_int8}" int8_ppm)
math(EXPR rel_ppm "(${int8_ppm} - ${fp32_ppm}) * 1000000 / ${fp32_ppm}")
if(KV_LIMIT_PPM STREQUAL "NONE")
  set(kv_note "no KV cache")
else()
  ppm("${kv_int8}" kv_ppm)
  set(kv_note "int8 KV cache / fp16 = ${kv_int8} (limit ${KV_LIMIT_PPM} ppm)")
endif()
message(STATUS "int8 perplexity ${ppl_int8} vs fp32 ${ppl_fp32}: ${rel_ppm} ppm relative "
               "(limit +${LIMIT_PPM}); ${kv_note}")
if(rel_ppm GREATER LIMIT_PPM)
  message(FATAL_ERROR "int8 perplexity ${ppl_int8} is more than ${LIMIT_PPM} ppm above fp32's "
                      "${ppl_fp32}")
endif()
if(ROUND_TO_NEAREST_MIN_PPM)
  ppm("${ppl_rtn}" rtn_ppm)
  math(EXPR rtn_rel_ppm "(${rtn_ppm} - ${fp32_ppm}) * 1000000 / ${fp32_ppm}")
  message(STATUS "round to nearest (--no-tune): ${ppl_rtn}, ${rtn_rel_ppm} ppm above fp32 "
                 "(must be at least ${ROUND_TO_NEAREST_MIN_PPM})")
  if(rtn_rel_ppm LESS ROUND_TO_NEAREST_MIN_PPM)
    message(FATAL_ERROR "round to nearest is only ${rtn_rel_ppm} ppm above fp32: not the hard "
                        "case this test is for")
  endif()
endif()
if(NOT KV_LIMIT_PPM STREQUAL "NONE" AND kv_ppm GREATER KV_LIMIT_PPM)
  message(FATAL_ERROR "the int8 KV cache is ${kv_int8} of an fp16 cache (limit ${KV_LIMIT_PPM} ppm)")
endif()
