# Runs one CLI test case: cmake -DOCTET=... -DCONVERT=... -DTESTMODEL=...
#   -DEMULATOR="qemu|-L|..." -DPYTHON=python3-or-empty -DWORK=dir -DCASE=name -P cli_test.cmake
# Each case runs the tools the way a user does and checks exit status, that
# errors are exactly one line "<tool>: ..." on stderr, and the output content.
cmake_minimum_required(VERSION 3.25)

string(REPLACE "|" ";" EMULATOR "${EMULATOR}")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# Runs a command (through the emulator); sets RC, OUT and ERR in the caller.
function(run)
  execute_process(COMMAND ${EMULATOR} ${ARGN}
                  WORKING_DIRECTORY "${WORK}"
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

# The last command exited 0, wrote nothing on stderr and its stdout matches every regex.
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

# Like expect_ok for generation: stderr is exactly the one stats line.
function(expect_generated)
  if(NOT ERR MATCHES "^octet: prompt [0-9]+ tokens, generated [0-9]+ tokens; prefill [0-9.]+ tokens/s, decode [0-9.]+ tokens/s; arena [0-9]+ bytes \\([^)]*\\), peak RSS [0-9]+ bytes \\([^)]*\\)\n$")
    fail("expected the generation stats line on stderr")
  endif()
  set(ERR "")
  expect_ok(${ARGN})
endfunction()

# The last command exited with `status`, printed nothing on stdout and exactly
# one line "<tool>: ..." on stderr matching every regex.
function(expect_error status tool)
  if(NOT RC STREQUAL "${status}")
    fail("expected exit status ${status}")
  endif()
  if(NOT OUT STREQUAL "")
    fail("expected nothing on stdout")
  endif()
  string(REGEX MATCHALL "\n" newlines "${ERR}")
  list(LENGTH newlines lines)
  if(NOT lines EQUAL 1 OR NOT ERR MATCHES "\n$")
    fail("expected exactly one line on stderr")
  endif()
  if(NOT ERR MATCHES "^${tool}: [^ ]")
    fail("stderr does not start with '${tool}: '")
  endif()
  foreach(pattern IN LISTS ARGN)
    if(NOT ERR MATCHES "${pattern}")
      fail("stderr does not match '${pattern}'")
    endif()
  endforeach()
endfunction()

# Writes a tiny model: make_model(NAME testmodel-args...) -> ${WORK}/NAME.octet
function(make_model name)
  run(${TESTMODEL} "${WORK}/${name}.octet" ${ARGN})
  expect_ok()
endfunction()

# Checks the .npy header of `path`: float32, C order, the given shape, and the
# file size (a 64-byte multiple of header, then the data).
# expect_npy(path d0 d1 [d2]): [d0, d1] or [d0, d1, d2].
function(expect_npy path d0 d1)
  if(NOT EXISTS "${path}")
    fail("${path} was not written")
  endif()
  file(READ "${path}" magic LIMIT 8 HEX)
  if(NOT magic STREQUAL "934e554d50590100")
    fail("${path} does not start with the .npy v1.0 magic (got ${magic})")
  endif()
  file(READ "${path}" length_hex OFFSET 8 LIMIT 2 HEX)
  string(SUBSTRING "${length_hex}" 0 2 low)
  string(SUBSTRING "${length_hex}" 2 2 high)
  math(EXPR header_length "0x${high} * 256 + 0x${low}")
  math(EXPR header_end "10 + ${header_length}")
  math(EXPR misaligned "${header_end} % 64")
  if(NOT misaligned EQUAL 0)
    fail("${path}: the data does not start on a 64-byte boundary (${header_end})")
  endif()
  file(READ "${path}" header OFFSET 10 LIMIT ${header_length})
  set(shape "${d0}, ${d1}")
  set(numel "${d0} * ${d1}")
  if(ARGC GREATER 3)
    set(shape "${shape}, ${ARGV3}")
    set(numel "${numel} * ${ARGV3}")
  endif()
  set(expected "{'descr': '<f4', 'fortran_order': False, 'shape': (${shape}), }")
  string(FIND "${header}" "${expected}" at)
  if(NOT at EQUAL 0 OR NOT header MATCHES "\n$")
    fail("${path}: header is '${header}', expected '${expected}'")
  endif()
  file(SIZE "${path}" size)
  math(EXPR expected_size "${header_end} + ${numel} * 4")
  if(NOT size EQUAL expected_size)
    fail("${path}: ${size} bytes, expected ${expected_size}")
  endif()
endfunction()

set(REQUIRED_BENCH_KEYS prefill_ms prefill_tokens_per_s decode_tokens_per_s arena_bytes
    weights_bytes peak_rss_bytes heap_allocs_during_run notes)

# ---------------------------------------------------------------------------
if(CASE STREQUAL "help")
  foreach(command "${OCTET}|--help" "${OCTET}|-h" "${OCTET}|help" "${OCTET}|run|--help"
                  "${OCTET}|bench|--help" "${OCTET}|inspect|--help" "${OCTET}|inspect|-h"
                  "${CONVERT}|--help" "${TESTMODEL}|--help")
    string(REPLACE "|" ";" command "${command}")
    run(${command})
    expect_ok("Usage: ")
  endforeach()
  # Help wins over other errors on the same line.
  run(${OCTET} run --bogus --help)
  expect_ok("Usage: octet run")
  run(${OCTET} run --help)
  expect_ok("--ids" "--decoder-ids" "--dump" "--threads" "--generate" "--prompt" "--temperature"
            "--top-k" "--top-p" "--seed" "--attention-map" "--layer" "--head")
  run(${OCTET} bench --help)
  expect_ok("--seq" "--batch" "--decode" "--threads" "--runs" "--json")
  run(${CONVERT} --help)
  expect_ok("-o OUT.octet" "--dtype int8\\|fp32" "--calibration" "--quiet" "bert" "gpt2" "llama"
            "qwen2" "mistral" "marian" "t5" "F32" "F16" "BF16" "index.json")
  run(${OCTET} --help)
  expect_ok("run" "bench" "inspect" "--version")

elseif(CASE STREQUAL "version")
  run(${OCTET} --version)
  expect_ok("^octet [0-9]+\\.[0-9]+\\.[0-9]+\n$")
  run(${CONVERT} --version)
  expect_ok("^octet-convert [0-9]+\\.[0-9]+\\.[0-9]+\n$")

elseif(CASE STREQUAL "inspect")
  make_model(llama --family llama --layers 2)
  run(${OCTET} inspect llama.octet)
  expect_ok("format version +1\\.9" "family +Llama" "structure +DecoderOnly" "vocab_size +32"
            "hidden_size +16" "num_layers +2" "norm +RmsNorm" "activation +Silu"
            "attention\\.num_heads +2" "attention\\.head_dim +8" "rope\\.theta +10000"
            "position +Rope" "token_embedding +I8 +\\[32, 16\\] +512 "
            "layers\\.1\\.attn\\.q\\.weight +I8 +\\[16, 16\\]" "PerChannel axis 0, 32 scale"
            "final_norm\\.weight +F32 +\\[16\\] +64 " "HfTokenizerJson" "tokenizer\\.json"
            "synthetic tiny model" "38\\.5 dB" "memory plan" "session plan" "qs8_gemm")

elseif(CASE STREQUAL "inspect_json")
  make_model(llama --family llama --layers 1)
  run(${OCTET} inspect llama.octet --json)
  expect_ok("^{\n" "}\n$" "\"file\": {" "\"size_bytes\": [0-9]+" "\"format_version\": \"1\\.9\""
            "\"architecture\": {" "\"family\": \"Llama\"" "\"attention\": {" "\"rope\": {"
            "\"tensors\": ." "\"name\": \"token_embedding\"" "\"shape\": \\[32, 16\\]"
            "\"scheme\": \"PerChannel\"" "\"min_scale\": [0-9]" "\"weights\": {"
            "\"bytes_by_dtype\": {" "\"tokenizer\": {" "\"provenance\": {" "\"layer_errors\": ."
            "\"sqnr_db\": 38\\.5" "\"memory_plan\": {" "\"session_plan\": {" "\"cpu\": {"
            "\"qs8_gemm_kernel\": \"qs8_gemm")
  # Exactly one object: one line starts with '{' and one with '}'.
  string(REGEX MATCHALL "\n}" closings "${OUT}")
  list(LENGTH closings count)
  if(NOT count EQUAL 1)
    fail("expected one top-level JSON object")
  endif()

elseif(CASE STREQUAL "inspect_bert")
  make_model(bert --family bert --layers 0 --fp32 --no-tokenizer)
  run(${OCTET} inspect bert.octet)
  expect_ok("family +Bert" "structure +EncoderOnly" "position_embedding +F32 +\\[64, 16\\]"
            "rope +null" "tokenizer\n +none" "session plan \\(this build, batch 1, seq 64\\)"
            "activations +[0-9]+")

elseif(CASE STREQUAL "inspect_t5")
  # The session plan may be unavailable for models this build cannot run yet;
  # inspect reports that in its section and still succeeds.
  make_model(t5 --family t5 --layers 1)
  run(${OCTET} inspect t5.octet)
  expect_ok("family +T5" "structure +EncoderDecoder" "num_decoder_layers +1"
            "position +RelativeBias" "attention\\.relative_buckets +32"
            "encoder\\.layers\\.0\\.attn\\.q\\.weight" "decoder\\.layers\\.0\\.ffn\\.down\\.weight"
            "session plan \\(this build, batch 1, seq 512\\)")
  run(${OCTET} inspect t5.octet --json)
  expect_ok("\"session_plan\": {")

elseif(CASE STREQUAL "bad_files")
  make_model(good --layers 0)
  file(SIZE "${WORK}/good.octet" size)
  math(EXPR half "${size} / 2")
  make_model(truncated --layers 0 --truncate ${half})
  make_model(header_only --layers 0 --truncate 16)
  file(WRITE "${WORK}/garbage.octet" "this is not an octet model, just some text to fill a file\n")
  file(WRITE "${WORK}/empty.octet" "")
  foreach(command inspect run bench)
    set(extra)
    if(command STREQUAL "run")
      set(extra --ids 1,2)
    endif()
    foreach(name truncated header_only garbage empty missing)
      run(${OCTET} ${command} ${name}.octet ${extra})
      expect_error(1 octet)
    endforeach()
    run(${OCTET} ${command} "${WORK}" ${extra})  # a directory
    expect_error(1 octet)
  endforeach()
  run(${OCTET} inspect missing.octet)
  expect_error(1 octet "missing\\.octet")

elseif(CASE STREQUAL "bad_flags")
  make_model(llama --layers 0)
  make_model(bert --family bert --layers 0)
  make_model(t5 --family t5 --layers 0)
  set(cases
    "${OCTET}"
    "${OCTET}|frobnicate"
    "${OCTET}|--frobnicate"
    "${OCTET}|run"
    "${OCTET}|run|llama.octet"
    "${OCTET}|run|llama.octet|--ids"
    "${OCTET}|run|llama.octet|--ids|5,x"
    "${OCTET}|run|llama.octet|--ids|5,,6"
    "${OCTET}|run|llama.octet|--ids|-5"
    "${OCTET}|run|llama.octet|--ids|99999999999"
    "${OCTET}|run|llama.octet|--ids|1|--bogus"
    "${OCTET}|run|llama.octet|--ids|1|extra"
    "${OCTET}|run|llama.octet|--ids|1|--threads|-3"
    "${OCTET}|run|llama.octet|--ids|1|--threads|100000"
    "${OCTET}|run|llama.octet|--ids|1|--threads|2x"
    "${OCTET}|run|llama.octet|--ids|1|--dump|a.npy|--dump|b.npy"
    "${OCTET}|run|llama.octet|--ids|1|--temperature|0.5"
    "${OCTET}|run|llama.octet|--ids|1|--generate|0"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--temperature|-1"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--temperature|nan"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--top-p|0"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--top-p|1.5"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--top-k|-1"
    "${OCTET}|run|llama.octet|--ids|1|--generate|4|--seed|x"
    "${OCTET}|run|llama.octet|--ids|1|--prompt|hello|--generate|4"
    "${OCTET}|run|llama.octet|--chat|--ids|1"
    "${OCTET}|run|llama.octet|--chat|--dump|a.npy"
    "${OCTET}|run|llama.octet|--chat|--context|0"
    "${OCTET}|run|llama.octet|--ids|1|--system|hi"
    "${OCTET}|run|llama.octet|--ids|1|--context|8"
    "${OCTET}|run|llama.octet|--ids|1|--verbose"
    "${OCTET}|run|llama.octet|--ids|1|--layer|0"
    "${OCTET}|run|llama.octet|--ids|1|--attention-map|a.png|--head|x"
    "${OCTET}|run|llama.octet|--ids|1|--decoder-ids|0,1"
    "${OCTET}|run|llama.octet|--ids|1|--ids|2|--decoder-ids|0"
    "${OCTET}|run|llama.octet|--ids|32"
    "${OCTET}|run|llama.octet|--ids|1|--attention-map|a.png|--layer|0"
    "${OCTET}|run|bert.octet|--ids|1|--generate|3"
    "${OCTET}|run|t5.octet|--ids|1,2"
    "${OCTET}|bench"
    "${OCTET}|bench|llama.octet|--runs|0"
    "${OCTET}|bench|llama.octet|--runs|-1"
    "${OCTET}|bench|llama.octet|--seq|0"
    "${OCTET}|bench|llama.octet|--batch|1.5"
    "${OCTET}|bench|llama.octet|--threads|257"
    "${OCTET}|bench|llama.octet|--json=yes"
    "${OCTET}|bench|bert.octet|--seq|128"
    "${OCTET}|inspect"
    "${OCTET}|inspect|llama.octet|--bogus"
    "${OCTET}|inspect|llama.octet|llama.octet"
    "${CONVERT}"
    "${CONVERT}|${WORK}"
    "${CONVERT}|${WORK}|-o"
    "${CONVERT}|${WORK}|-o|out.octet|--dtype|int4"
    "${CONVERT}|${WORK}|-o|out.octet|--bogus")
  foreach(command IN LISTS cases)
    string(REPLACE "|" ";" command "${command}")
    list(GET command 0 tool_path)
    set(tool octet)
    if(tool_path STREQUAL "${CONVERT}")
      set(tool octet-convert)
    endif()
    run(${command})
    expect_error(2 ${tool})
  endforeach()
  # The messages name the problem.
  run(${OCTET} run llama.octet --ids 5,x)
  expect_error(2 octet "--ids" "'x'")
  run(${OCTET} run llama.octet --ids 1 --bogus)
  expect_error(2 octet "unknown option '--bogus'")
  run(${OCTET} run llama.octet --ids 32)
  expect_error(2 octet "out of range" "vocab_size is 32")
  run(${OCTET} bench llama.octet --threads 300)
  expect_error(2 octet "--threads")
  run(${OCTET} run llama.octet --dump)
  expect_error(2 octet "missing value for --dump")

elseif(CASE STREQUAL "run_dump_llama")
  make_model(llama --family llama --layers 0)
  run(${OCTET} run llama.octet --ids 5,17,31 --ids 7,8 --dump out.npy)
  expect_ok()
  expect_npy("${WORK}/out.npy" 2 3 32)
  run(${OCTET} run llama.octet --ids 5,17,31,1,2 --ids 7 --ids 3,3 --dump out3.npy --threads 2)
  expect_ok()
  expect_npy("${WORK}/out3.npy" 3 5 32)
  make_model(tied --family llama --layers 0 --tied --fp32)
  run(${OCTET} run tied.octet --ids 1 --dump tied.npy)
  expect_ok()
  expect_npy("${WORK}/tied.npy" 1 1 32)

elseif(CASE STREQUAL "run_dump_bert")
  make_model(bert --family bert --layers 0)
  run(${OCTET} run bert.octet --ids 5,17,31 --ids 7,8 --dump out.npy)
  expect_ok()
  expect_npy("${WORK}/out.npy" 2 3 16)

elseif(CASE STREQUAL "run_summary")
  make_model(llama --family llama --layers 0)
  run(${OCTET} run llama.octet --ids 5,17,31 --ids 7,8)
  expect_ok("logits float32 \\[2, 3, 32\\]" "sequence 0: 3 tokens; next token"
            "sequence 1: 2 tokens; next token \\(argmax at position 1\\): [0-9]+")
  make_model(bert --family bert --layers 0)
  run(${OCTET} run bert.octet --ids 5,17,31)
  expect_ok("last hidden state float32 \\[1, 3, 16\\]")
  # An unwritable dump is a runtime failure.
  run(${OCTET} run llama.octet --ids 1 --dump "${WORK}/no/such/dir/out.npy")
  expect_error(1 octet "cannot write")

elseif(CASE STREQUAL "run_layers")
  # fp32 models with transformer layers run, for every structure.
  make_model(llama --family llama --layers 2 --fp32)
  run(${OCTET} run llama.octet --ids 5,17,31 --ids 7,8 --dump out.npy)
  expect_ok("wrote .*out\\.npy: float32 \\[2, 3, 32\\]")
  expect_npy("${WORK}/out.npy" 2 3 32)
  run(${OCTET} run llama.octet --ids 5,17,31)
  expect_ok("logits float32 \\[1, 3, 32\\]" "next token")
  make_model(bert --family bert --layers 2 --fp32)
  run(${OCTET} run bert.octet --ids 5,17,31 --ids 7 --dump bert.npy)
  expect_ok()
  expect_npy("${WORK}/bert.npy" 2 3 16)
  make_model(t5 --family t5 --layers 1 --fp32)
  run(${OCTET} run t5.octet --ids 1,2,3 --ids 4 --decoder-ids 0,5 --decoder-ids 0,6,7,8
      --dump t5.npy)
  expect_ok()
  expect_npy("${WORK}/t5.npy" 2 4 32)
  run(${OCTET} run t5.octet --ids 1,2,3 --decoder-ids 0,5)
  expect_ok("decoder logits float32 \\[1, 2, 32\\]")
  run(${OCTET} run t5.octet --ids 1,2,3)
  expect_error(2 octet "--decoder-ids")
  # int8 files: every matrix product in int8, outputs of the same shapes.
  make_model(llama8 --family llama --layers 1)
  run(${OCTET} run llama8.octet --ids 5,17,31 --ids 7,8 --dump out8.npy)
  expect_ok()
  expect_npy("${WORK}/out8.npy" 2 3 32)
  make_model(bert8 --family bert --layers 2)
  run(${OCTET} run bert8.octet --ids 5,17,31)
  expect_ok("last hidden state float32 \\[1, 3, 16\\]")

elseif(CASE STREQUAL "run_generate")
  make_model(llama --family llama --layers 2 --fp32)
  set(line "sequence [0-9]+: [0-9,]+ -> [0-9]+(,[0-9]+)*\n")
  # Greedy: the format, deterministic, and each token is the argmax of a full
  # forward pass over the prompt and the tokens before it.
  run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 6 --temperature 0)
  expect_generated("^sequence 0: 1,5,7 -> [0-9]+(,[0-9]+)*\nsequence 1: 3 -> [0-9]+(,[0-9]+)*\n$")
  set(greedy "${OUT}")
  run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 6 --temperature 0)
  expect_generated()
  if(NOT OUT STREQUAL greedy)
    fail("greedy generation is not deterministic:\n${greedy}")
  endif()
  # top-k 1 is greedy at any temperature; so is a tiny top-p.
  run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 6 --temperature 3 --top-k 1 --seed 9)
  expect_generated()
  if(NOT OUT STREQUAL greedy)
    fail("--top-k 1 differs from greedy:\n${greedy}")
  endif()
  run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 6 --top-p 0.000001 --seed 9)
  expect_generated()
  if(NOT OUT STREQUAL greedy)
    fail("a tiny --top-p differs from greedy:\n${greedy}")
  endif()
  string(REGEX MATCHALL "-> [0-9,]+" chains "${greedy}")
  set(prompts "1,5,7" "3")
  foreach(b 0 1)
    list(GET chains ${b} chain)
    list(GET prompts ${b} ids)
    string(SUBSTRING "${chain}" 3 -1 chain)
    string(REPLACE "," ";" tokens "${chain}")
    foreach(token IN LISTS tokens)
      run(${OCTET} run llama.octet --ids ${ids})
      expect_ok()
      if(NOT OUT MATCHES "next token \\(argmax at position [0-9]+\\): ([0-9]+) ")
        fail("no next token in the summary")
      endif()
      if(NOT CMAKE_MATCH_1 STREQUAL token)
        fail("greedy token ${token} after ${ids} is not the argmax ${CMAKE_MATCH_1}")
      endif()
      set(ids "${ids},${token}")
    endforeach()
  endforeach()
  # Sampling: the same seed gives the same ids; different seeds (almost surely)
  # give different ids on this near-uniform random model.
  set(seen "")
  foreach(seed 1 2 3 4 5)
    run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 12 --temperature 1 --seed ${seed})
    expect_generated("^${line}${line}$")
    set(first "${OUT}")
    run(${OCTET} run llama.octet --ids 1,5,7 --ids 3 --generate 12 --temperature 1 --seed ${seed})
    expect_generated()
    if(NOT OUT STREQUAL first)
      fail("seed ${seed} gave different ids twice:\n${first}")
    endif()
    # The eos token (2) ends a sequence.
    if(OUT MATCHES "-> ([0-9]+,)*2,")
      fail("generation went on after the eos token")
    endif()
    list(APPEND seen "${OUT}")
  endforeach()
  list(REMOVE_DUPLICATES seen)
  list(LENGTH seen distinct)
  if(distinct LESS 3)
    fail("5 seeds gave only ${distinct} different outputs")
  endif()
  run(${OCTET} run llama.octet --ids 1,5,7 --generate 8 --temperature 0.8 --top-k 5 --top-p 0.9
      --seed 3)
  expect_generated("^sequence 0: 1,5,7 -> [0-9]+(,[0-9]+)*\n$")
  # Encoder-decoder (t5, decoder start token 0): the sources on the left, the
  # generated ids without the start token; greedy is deterministic and each
  # token is the argmax of a teacher-forced pass over the start token and the
  # tokens before it.
  make_model(t5 --family t5 --layers 1 --fp32)
  run(${OCTET} run t5.octet --ids 1,2,3 --ids 4 --generate 5 --temperature 0)
  expect_generated("^sequence 0: 1,2,3 -> [0-9]+(,[0-9]+)*\nsequence 1: 4 -> [0-9]+(,[0-9]+)*\n$")
  set(greedy "${OUT}")
  run(${OCTET} run t5.octet --ids 1,2,3 --ids 4 --generate 5 --temperature 0)
  expect_generated()
  if(NOT OUT STREQUAL greedy)
    fail("encoder-decoder greedy generation is not deterministic:\n${greedy}")
  endif()
  string(REGEX MATCHALL "-> [0-9,]+" chains "${greedy}")
  set(sources "1,2,3" "4")
  foreach(b 0 1)
    list(GET chains ${b} chain)
    list(GET sources ${b} source)
    string(SUBSTRING "${chain}" 3 -1 chain)
    string(REPLACE "," ";" tokens "${chain}")
    set(decoder "0")
    foreach(token IN LISTS tokens)
      run(${OCTET} run t5.octet --ids ${source} --decoder-ids ${decoder})
      expect_ok()
      if(NOT OUT MATCHES "next token \\(argmax at position [0-9]+\\): ([0-9]+) ")
        fail("no next token in the summary")
      endif()
      if(NOT CMAKE_MATCH_1 STREQUAL token)
        fail("greedy token ${token} after ${source} -> ${decoder} is not the argmax ${CMAKE_MATCH_1}")
      endif()
      set(decoder "${decoder},${token}")
    endforeach()
  endforeach()
  run(${OCTET} run t5.octet --ids 1,2,3 --ids 4 --generate 12 --temperature 1 --seed 4)
  expect_generated("^${line}${line}$")
  set(first "${OUT}")
  run(${OCTET} run t5.octet --ids 1,2,3 --ids 4 --generate 12 --temperature 1 --seed 4)
  expect_generated()
  if(NOT OUT STREQUAL first)
    fail("encoder-decoder sampling with seed 4 gave different ids twice:\n${first}")
  endif()
  if(OUT MATCHES "-> ([0-9]+,)*1,")  # the t5 test model's eos token is 1
    fail("encoder-decoder generation went on after the eos token")
  endif()
  run(${OCTET} run t5.octet --ids 1,2 --decoder-ids 0 --generate 4)
  expect_error(2 octet "--decoder-ids" "--generate")
  # What cannot generate: one line each.
  make_model(llama0 --family llama --layers 0)
  run(${OCTET} run llama0.octet --ids 1,2 --generate 4)
  expect_error(1 octet "--generate" "transformer layers")

elseif(CASE STREQUAL "run_not_implemented")
  make_model(llama --family llama --layers 0)
  make_model(t5 --family t5 --layers 0)
  run(${OCTET} run llama.octet --prompt "Hello there" --generate 4)
  expect_error(2 octet "--prompt" "tokenizer")
  run(${OCTET} run llama.octet --chat)
  expect_error(2 octet "--chat" "tokenizer")
  run(${OCTET} run llama.octet --ids 1,2 --attention-map map.png --layer 0 --head 1)
  expect_error(2 octet "--attention-map needs attention layers")  # a 0-layer model has none
  run(${OCTET} run t5.octet --ids 1,2 --ids 3 --decoder-ids 0,5 --decoder-ids 0)
  expect_error(1 octet "encoder-decoder models need transformer layers")

elseif(CASE STREQUAL "run_attention_map")
  make_model(llama --family llama --layers 2)
  make_model(t5 --family t5 --layers 2)
  # A PNG: the file starts with the PNG signature.
  function(expect_png path)
    if(NOT EXISTS "${WORK}/${path}")
      fail("${path} was not written")
    endif()
    file(READ "${WORK}/${path}" magic LIMIT 8 HEX)
    if(NOT magic STREQUAL "89504e470d0a1a0a")
      fail("${path} is not a PNG (starts with ${magic})")
    endif()
  endfunction()
  run(${OCTET} run llama.octet --ids 1,2,3,4 --attention-map map.png)
  if(ERR MATCHES "no PNG support")  # a build without cairo says so, in one line
    expect_error(1 octet "--attention-map" "libcairo2-dev")
    return()
  endif()
  expect_ok("wrote map.png: layer 1 self-attention, all 2 heads \\[2 heads, 4 queries, 4 keys\\]"
            "logits float32 \\[1, 4, 32\\]")
  expect_png(map.png)
  run(${OCTET} run llama.octet --ids 1,2,3,4 --attention-map head.png --layer 0 --head 1)
  expect_ok("wrote head.png: layer 0 self-attention, head 1 \\[1 heads, 4 queries, 4 keys\\]")
  expect_png(head.png)
  run(${OCTET} run llama.octet --ids 1,2,3 --ids 4 --attention-map seq.png --sequence 1)
  expect_ok("sequence 1 \\[2 heads, 1 queries, 1 keys\\]")
  expect_png(seq.png)
  run(${OCTET} run t5.octet --ids 1,2,3 --decoder-ids 0,4 --attention-map cross.png --cross)
  expect_ok("wrote cross.png: layer 1 cross-attention, all 2 heads \\[2 heads, 2 queries, 3 keys\\]")
  expect_png(cross.png)
  run(${OCTET} run t5.octet --ids 1,2,3 --decoder-ids 0,4 --attention-map enc.png --stack encoder
      --layer 0)
  expect_ok("layer 0 encoder self-attention, all 2 heads \\[2 heads, 3 queries, 3 keys\\]")
  run(${OCTET} run t5.octet --ids 1,2,3 --decoder-ids 0,4 --attention-map dec.png)
  expect_ok("layer 1 decoder self-attention, all 2 heads \\[2 heads, 2 queries, 2 keys\\]")
  # Errors: one line each, naming the problem.
  run(${OCTET} run llama.octet --ids 1,2 --ids 3 --attention-map map.png)
  expect_error(2 octet "--sequence N")
  run(${OCTET} run llama.octet --ids 1,2 --ids 3 --attention-map map.png --sequence 2)
  expect_error(2 octet "--sequence")
  run(${OCTET} run llama.octet --ids 1,2 --attention-map map.png --cross)
  expect_error(2 octet "--cross needs an encoder-decoder model")
  run(${OCTET} run llama.octet --ids 1,2 --attention-map map.png --stack encoder)
  expect_error(2 octet "--stack is for encoder-decoder models")
  run(${OCTET} run llama.octet --ids 1,2 --attention-map map.png --layer 2)
  expect_error(2 octet "--layer 2 is out of range" "0 to 1")
  run(${OCTET} run llama.octet --ids 1,2 --attention-map map.png --head 2)
  expect_error(2 octet "--head 2 is out of range")
  run(${OCTET} run t5.octet --ids 1 --decoder-ids 0 --attention-map map.png --cross --stack encoder)
  expect_error(2 octet "--cross")
  run(${OCTET} run t5.octet --ids 1 --decoder-ids 0 --attention-map map.png --stack middle)
  expect_error(2 octet "--stack middle")
  run(${OCTET} run llama.octet --ids 1 --attention-map map.png --generate 2)
  expect_error(2 octet "--attention-map" "--generate")
  run(${OCTET} run llama.octet --ids 1 --cross)
  expect_error(2 octet "--cross needs --attention-map")
  run(${OCTET} run llama.octet --ids 1 --attention-map no/such/dir/map.png)
  expect_error(1 octet "cannot write no/such/dir/map.png")

elseif(CASE STREQUAL "run_pooling")
  make_model(bert --family bert --layers 1)
  make_model(llama --family llama --layers 1)
  run(${OCTET} run bert.octet --ids 1,2,3 --ids 4,5 --pooling mean --dump mean.npy)
  expect_ok("wrote mean.npy: float32 \\[2, 16\\]")
  expect_npy("${WORK}/mean.npy" 2 16)
  run(${OCTET} run bert.octet --ids 1,2,3 --ids 4,5 --pooling cls)
  expect_ok("sentence embeddings \\(cls pooling\\) float32 \\[2, 16\\]" "sequence 1: L2 norm")
  run(${OCTET} run bert.octet --ids 1,2,3 --pooling max)
  expect_error(2 octet "--pooling max")
  run(${OCTET} run llama.octet --ids 1,2,3 --pooling mean)
  expect_error(2 octet "--pooling" "encoder-only")

elseif(CASE STREQUAL "bench_json")
  make_model(llama --family llama --layers 0)
  run(${OCTET} bench llama.octet --seq 16 --batch 2 --decode 8 --runs 3 --json)
  expect_ok("^{\n" "}\n$" "\"heap_allocs_during_run\": 0,"
            "\"decode_tokens_per_s\": null" "\"batch\": 2" "\"seq\": 16")
  foreach(key IN LISTS REQUIRED_BENCH_KEYS)
    if(NOT OUT MATCHES "\"${key}\": ")
      fail("bench --json has no '${key}'")
    endif()
  endforeach()
  make_model(bert --family bert --layers 0)
  run(${OCTET} bench bert.octet --seq 8 --runs 2 --json)
  expect_ok("\"heap_allocs_during_run\": 0," "\"structure\": \"encoder-only\"")

elseif(CASE STREQUAL "bench_text")
  make_model(llama --family llama --layers 0)
  run(${OCTET} bench llama.octet --seq 8 --runs 2)
  expect_ok("prefill ms \\(median\\)" "prefill tokens/s" "arena" "weights" "peak RSS"
            "heap allocs during runs +0\n")

elseif(CASE STREQUAL "bench_layers")
  foreach(family llama bert t5)
    make_model(${family} --family ${family} --layers 1 --fp32)
    run(${OCTET} bench ${family}.octet --seq 8 --decode 4 --runs 2 --json)
    expect_ok("\"heap_allocs_during_run\": 0,")
    if(family STREQUAL "bert")
      expect_ok("\"decode_tokens_per_s\": null" "encoder-only model")
    else()
      # Decoders time their steps: a number, and the steps allocate nothing either.
      expect_ok("\"decode_tokens_per_s\": [0-9]")
    endif()
  endforeach()
  make_model(llama8 --family llama --layers 1)
  run(${OCTET} bench llama8.octet --seq 8 --runs 2 --json)
  expect_ok("\"heap_allocs_during_run\": 0,")

elseif(CASE STREQUAL "convert")
  file(MAKE_DIRECTORY "${WORK}/empty_dir")
  run(${CONVERT} "${WORK}/empty_dir" -o out.octet)
  expect_error(1 octet-convert "config\\.json")
  run(${CONVERT} "${WORK}/no_such_dir" -o out.octet)
  expect_error(1 octet-convert "does not exist")
  file(MAKE_DIRECTORY "${WORK}/checkpoint")
  file(WRITE "${WORK}/checkpoint/config.json" "{\"model_type\": \"llama\"}\n")
  run(${CONVERT} "${WORK}/checkpoint" -o out.octet --dtype fp32 --quiet)
  expect_error(1 octet-convert
               "neither model\\.safetensors nor|built without the Hugging Face importer")
  run(${CONVERT} "${WORK}/checkpoint" --output=out.octet --dtype int8)
  expect_error(1 octet-convert
               "neither model\\.safetensors nor|built without the Hugging Face importer")

elseif(CASE STREQUAL "python_checks")
  # Host only: parse the JSON and the .npy files with Python's standard library.
  get_filename_component(here "${CMAKE_CURRENT_LIST_FILE}" DIRECTORY)
  make_model(llama --family llama --layers 0)
  make_model(bert --family bert --layers 0)
  make_model(t5 --family t5 --layers 1)
  foreach(model llama bert t5)
    run(${OCTET} inspect ${model}.octet --json)
    expect_ok()
    file(WRITE "${WORK}/inspect_${model}.json" "${OUT}")
  endforeach()
  run(${OCTET} bench llama.octet --seq 8 --runs 2 --json)
  expect_ok()
  file(WRITE "${WORK}/bench.json" "${OUT}")
  run(${OCTET} run llama.octet --ids 5,17,31 --ids 7,8 --dump llama.npy)
  expect_ok()
  run(${OCTET} run bert.octet --ids 5,17,31 --ids 7,8 --dump bert.npy)
  expect_ok()
  run(${PYTHON} "${here}/check_outputs.py" "${WORK}")
  expect_ok()

else()
  message(FATAL_ERROR "unknown CASE '${CASE}'")
endif()
