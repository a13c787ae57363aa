# java.jni_load (cross builds): a small int8 decoder from octet-testmodel, then octet_jni_load
# (jni_load.c) under the emulator with liboctet_jni.so and liboctet.so.
#   -DEMULATOR ('|' between its words) -DTESTMODEL -DLOAD -DJNI -DREFERENCE -DWORK
string(REPLACE "|" ";" _emulator "${EMULATOR}")
file(MAKE_DIRECTORY ${WORK})
set(_model ${WORK}/jni_load.octet)
execute_process(COMMAND ${_emulator} ${TESTMODEL} ${_model} --layers 2 --hidden 64 --vocab 512 --packed
                        --no-tokenizer
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet-testmodel failed (${rc}): ${err}")
endif()
execute_process(COMMAND ${_emulator} ${LOAD} ${JNI} ${REFERENCE} ${_model}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet_jni_load failed (${rc})")
endif()
