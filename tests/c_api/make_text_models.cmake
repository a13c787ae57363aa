# The c_api_text_models fixture: models with real tokenizers for the C API's
# text section (c_api_text_test.c), written into OUT:
#   llama2_chat.octet  octet-testcheckpoint's random Llama (vocab 32000) with Llama 2's
#                      tokenizer and Qwen2.5's chat template (tests/text/chat_templates)
#   austen.octet       models/austen (fp32: int8 conversion measures itself, seconds)
#   t5_text.octet      a random T5 (vocab 8008) with the trained T5 Unigram tokenizer and
#                      Mistral v0.1's chat template
#   cli_unicode.txt    `octet chat-template llama2_chat.octet --messages .../unicode.json`
#   cmake -DCHECKPOINT=... -DCONVERT=... -DOCTET=... -DTOKENIZERS=build/tokenizer_data
#         -DAUSTEN=models/austen -DTEMPLATES=tests/text/chat_templates -DOUT=dir -P this
file(MAKE_DIRECTORY ${OUT})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "${ARGN}: exit ${_rc}\n${_out}${_err}")
  endif()
endfunction()

# tokenizer_config.json `config` with "chat_template" set to the file `template`.
function(write_config config template out)
  file(READ ${config} _cfg)
  file(READ ${template} _tpl)
  string(REPLACE "\\" "\\\\" _tpl "${_tpl}")
  string(REPLACE "\"" "\\\"" _tpl "${_tpl}")
  string(REPLACE "\n" "\\n" _tpl "${_tpl}")
  string(REPLACE "\r" "\\r" _tpl "${_tpl}")
  string(REPLACE "\t" "\\t" _tpl "${_tpl}")
  string(JSON _cfg SET "${_cfg}" chat_template "\"${_tpl}\"")
  file(WRITE ${out} "${_cfg}")
endfunction()

# A random checkpoint of `family` with the tokenizer `tokenizer` and a chat template.
function(text_model name family vocab tokenizer template)
  set(_src ${OUT}/${name}_checkpoint)
  file(REMOVE_RECURSE ${_src})
  run(${CHECKPOINT} ${_src} --family ${family} --vocab ${vocab} --max-positions 512)
  file(COPY ${TOKENIZERS}/${tokenizer}/tokenizer.json DESTINATION ${_src})
  write_config(${TOKENIZERS}/${tokenizer}/tokenizer_config.json ${template}
               ${_src}/tokenizer_config.json)
  run(${CONVERT} ${_src} -o ${OUT}/${name}.octet --dtype fp32 --quiet)
endfunction()

text_model(llama2_chat llama 32000 llama2 ${TEMPLATES}/qwen2_5.jinja)
text_model(t5_text t5 8008 t5_unigram ${TEMPLATES}/mistral_v0_1.jinja)
run(${CONVERT} ${AUSTEN} -o ${OUT}/austen.octet --dtype fp32 --quiet)
execute_process(COMMAND ${OCTET} chat-template ${OUT}/llama2_chat.octet
                        --messages ${TEMPLATES}/messages/unicode.json
                OUTPUT_FILE ${OUT}/cli_unicode.txt RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "octet chat-template: exit ${_rc}\n${_err}")
endif()
