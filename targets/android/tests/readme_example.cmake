# java.readme_example: the Java example of README.md (the ```java block after
# the "<!-- java-example: tested -->" line), compiled against octet.jar and run on a model, so
# the README never goes stale; it must print what `octet run` prints for the same prompt and
# seed (as the C and C++ examples must). Its output is echoed for ctest's JNI-warning check.
#   cmake -DREADME=... -DOCTET=... -DJAVAC=... -DJAVA=... -DJAR=... -DLIBRARY=... -DMODEL=... -DWORK=...
#         -P readme_example.cmake
file(READ ${README} text)
string(FIND "${text}" "<!-- java-example: tested -->" at)
if(at LESS 0)
  message(FATAL_ERROR "${README} has no <!-- java-example: tested --> marker")
endif()
string(SUBSTRING "${text}" ${at} -1 text)
string(FIND "${text}" "```java\n" start)
string(SUBSTRING "${text}" ${start} -1 text)
string(LENGTH "```java\n" skip)
string(SUBSTRING "${text}" ${skip} -1 text)
string(FIND "${text}" "```" end)
string(SUBSTRING "${text}" 0 ${end} code)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/classes)
file(WRITE ${WORK}/Example.java "${code}")
execute_process(COMMAND ${JAVAC} --release 8 -Xlint:all -Xlint:-options -Werror -encoding UTF-8
                        -cp ${JAR} -d ${WORK}/classes ${WORK}/Example.java
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the README's example does not compile:\n${out}${err}")
endif()
execute_process(COMMAND ${JAVA} -Xcheck:jni -Doctet.jni.library=${LIBRARY}
                        -cp ${JAR}:${WORK}/classes Example ${MODEL}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the README's example exited with ${rc}")
endif()
set(prompt "It is a truth universally acknowledged, that")
execute_process(COMMAND ${OCTET} run ${MODEL} --prompt "${prompt}" --generate 64 --temperature 0.8
                        --top-p 0.95 --seed 7
                RESULT_VARIABLE rc OUTPUT_VARIABLE cli ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "octet run failed: ${err}")
endif()
if(out STREQUAL "${prompt}\n" OR NOT out STREQUAL cli)
  message(FATAL_ERROR "the README's Java example printed other text than octet run:\n--- octet run:\n${cli}\n--- Java:\n${out}")
endif()
message(STATUS "the README's Java example prints what octet run prints")
