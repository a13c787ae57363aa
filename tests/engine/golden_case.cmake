# One golden case end to end (tests/golden/README.md): the case converted by the
# convert.golden_cases fixture is run with the arguments of its inputs.json,
# and the --dump is compared with expected.npy over the real positions.
#   cmake -DOCTET=... -DCOMPARE=... -DEMULATOR="qemu|..." -DCASE_DIR=... -DMODEL=...
#         -DOUT=out.npy (-DREL=1e-5 | -DMIN_COSINE=0.998) -P golden_case.cmake
# REL bounds max abs error / max abs reference (fp32 files); MIN_COSINE the
# lowest cosine similarity per position (int8 files against the fp32 golden).
# -DPOOLING=mean|cls (BERT cases): runs with --pooling and compares the
# [batch, hidden] dump with pooled_<POOLING>.npy (tests/golden/pool_goldens.py).
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
if(NOT EXISTS "${MODEL}")
  message(FATAL_ERROR "${MODEL} is missing: convert.golden_cases did not convert this case")
endif()
file(READ "${CASE_DIR}/inputs.json" inputs)

# The `octet run` arguments, as given.
string(JSON n_args LENGTH "${inputs}" args)
set(args "")
math(EXPR last "${n_args} - 1")
foreach(i RANGE ${last})
  string(JSON arg GET "${inputs}" args ${i})
  list(APPEND args "${arg}")
endforeach()

# The real positions: the lengths of the decoder ids (encoder-decoder) or the ids.
string(JSON has_decoder ERROR_VARIABLE no_decoder GET "${inputs}" decoder_ids)
set(key ids)
if(NOT no_decoder)
  set(key decoder_ids)
endif()
string(JSON batch LENGTH "${inputs}" ${key})
set(lengths "")
math(EXPR last "${batch} - 1")
foreach(b RANGE ${last})
  string(JSON len LENGTH "${inputs}" ${key} ${b})
  list(APPEND lengths ${len})
endforeach()
list(JOIN lengths "," lengths)
set(expected "${CASE_DIR}/expected.npy")
if(DEFINED POOLING)
  list(APPEND args --pooling ${POOLING})
  set(expected "${CASE_DIR}/pooled_${POOLING}.npy")
  string(REGEX REPLACE "[0-9]+" "1" lengths "${lengths}")  # one row per sequence
endif()

file(REMOVE "${OUT}")
execute_process(COMMAND ${EMULATOR} ${OCTET} run "${MODEL}" ${args} --dump "${OUT}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet run exited ${rc}: ${err}")
endif()
if(DEFINED MIN_COSINE)
  set(criterion --min-cosine ${MIN_COSINE})
else()
  set(criterion --rel ${REL})
endif()
execute_process(COMMAND ${EMULATOR} ${COMPARE} "${OUT}" "${expected}"
                        --lengths ${lengths} ${criterion}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(STRIP "${out}" out)
message(STATUS "${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${out}${err}")
endif()
