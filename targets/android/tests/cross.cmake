# The JNI library of a cross build (the Raspberry Pi presets), where no JVM runs under qemu:
#   java.library    what Android's loader and any JVM need (check_library.cmake): exports only
#                   JNI_OnLoad, Java_* and octet_*; no C++ runtime among NEEDED; every LOAD
#                   segment aligned for 16 KB pages; the stripped size printed
#   java.jni_load   dlopen under qemu (every symbol bound at once, JNI_OnLoad present) and the
#                   runtime inside it gives the logits liboctet.so gives, bit for bit
# (Included from targets/android/CMakeLists.txt.)

set(_jni_readelf ${CMAKE_READELF})
if(NOT _jni_readelf)
  find_program(_jni_readelf NAMES readelf)
endif()
if(_jni_readelf AND CMAKE_STRIP)
  add_test(NAME java.library
    COMMAND ${CMAKE_COMMAND}
      -DLIBRARY=$<TARGET_FILE:octet_jni>
      -DREADELF=${_jni_readelf}
      -DSTRIP=${CMAKE_STRIP}
      -DMIN_ALIGN=16384
      -DWORK=${CMAKE_CURRENT_BINARY_DIR}/tests/work/library
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/check_library.cmake)
else()
  message(STATUS "octet: *** no readelf/strip for this target: java.library is NOT registered ***")
endif()

if(TARGET octet_shared)  # (octet-testmodel comes with the tests, configured later)
  add_executable(octet_jni_load tests/jni_load.c)
  set_target_properties(octet_jni_load PROPERTIES C_STANDARD 99 C_EXTENSIONS OFF)
  target_include_directories(octet_jni_load PRIVATE ${PROJECT_SOURCE_DIR}/runtime/include)
  target_compile_options(octet_jni_load PRIVATE -Wall -Wextra -pedantic -Werror)
  target_link_libraries(octet_jni_load PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(octet_jni_load octet_jni octet_shared)
  set(_jni_work ${CMAKE_CURRENT_BINARY_DIR}/tests/work)
  string(REPLACE ";" "|" _jni_emulator "${CMAKE_CROSSCOMPILING_EMULATOR}")
  add_test(NAME java.jni_load
    COMMAND ${CMAKE_COMMAND}
      "-DEMULATOR=${_jni_emulator}"
      -DTESTMODEL=$<TARGET_FILE:octet-testmodel>
      -DLOAD=$<TARGET_FILE:octet_jni_load>
      -DJNI=$<TARGET_FILE:octet_jni>
      -DREFERENCE=$<TARGET_FILE:octet_shared>
      -DWORK=${_jni_work}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/tests/jni_load.cmake)
else()
  message(STATUS "octet: *** java.jni_load needs octet_shared: NOT registered ***")
endif()
