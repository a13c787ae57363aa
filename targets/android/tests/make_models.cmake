# java.make_models: the models the Java tests read, in OUT. Each is remade only when it is
# missing or older than the tool that makes it (or its sources), so a second run is quick.
#   cmake -DCONVERT=... -DTESTMODEL=... -DCHECKPOINT=... -DTOKENIZERS=... -DMODELS_DIR=...
#         -DOUT=... -P make_models.cmake
file(MAKE_DIRECTORY ${OUT})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}${err}")
  endif()
endfunction()

# stale(<var> <output> <inputs...>): true when output is missing or older than an input.
function(stale var output)
  set(result FALSE)
  if(NOT EXISTS ${output})
    set(result TRUE)
  else()
    foreach(input ${ARGN})
      if(${input} IS_NEWER_THAN ${output})
        set(result TRUE)
      endif()
    endforeach()
  endif()
  set(${var} ${result} PARENT_SCOPE)
endfunction()

# models/austen and models/austen-tiny, int8 with the converter's defaults (as users convert them).
foreach(name austen austen-tiny)
  set(src ${MODELS_DIR}/${name})
  stale(redo ${OUT}/${name}.octet ${CONVERT} ${src}/model.safetensors ${src}/config.json
        ${src}/tokenizer.json)
  if(redo)
    message(STATUS "converting models/${name}")
    run(${CONVERT} ${src} -o ${OUT}/${name}.octet --quiet)
  endif()
endforeach()

# Synthetic models from octet-testmodel (no usable tokenizer): a decoder, an encoder (BERT), an
# encoder-decoder (T5) and a truncated file.
foreach(spec "tiny;--family;llama;--layers;2" "bert;--family;bert;--layers;2;--hidden;32;--vocab;64"
             "t5;--family;t5;--layers;1" "truncated;--truncate;200")
  list(POP_FRONT spec name)
  stale(redo ${OUT}/${name}.octet ${TESTMODEL})
  if(redo)
    run(${TESTMODEL} ${OUT}/${name}.octet ${spec})
  endif()
endforeach()

# Random checkpoints with real tokenizers (tests/tokenizer/data): Qwen2.5's (a chat template)
# and Llama 2's (SentencePiece BPE with byte fallback), as tests/cli/text_test.py makes them.
foreach(spec "qwen;qwen2;qwen2_5;151665;--eos-id;151645" "llama2;llama;llama2;32000")
  list(POP_FRONT spec name family tokenizer vocab)
  stale(redo ${OUT}/${name}.octet ${CONVERT} ${CHECKPOINT} ${TOKENIZERS}/${tokenizer}/tokenizer.json)
  if(redo)
    message(STATUS "making ${name}.octet (random ${family} weights, the ${tokenizer} tokenizer)")
    set(dir ${OUT}/${name}-checkpoint)
    file(REMOVE_RECURSE ${dir})
    run(${CHECKPOINT} ${dir} --family ${family} --vocab ${vocab} --max-positions 512 ${spec})
    file(COPY ${TOKENIZERS}/${tokenizer}/tokenizer.json ${TOKENIZERS}/${tokenizer}/tokenizer_config.json
         DESTINATION ${dir})
    run(${CONVERT} ${dir} -o ${OUT}/${name}.octet --dtype fp32 --quiet)
  endif()
endforeach()
