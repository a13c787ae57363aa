# cmake -DGOLDEN=goldens/<name>.jsonl -DCORPUS=corpus.jsonl -DFILES_DIR=<tokenizer files> -P check_goldens.cmake
# Fails when the golden file is stale: its provenance names other tokenizer files or another corpus
# than the ones in the tree, or it has not one encode line per corpus line.
foreach(_v GOLDEN CORPUS FILES_DIR)
  if(NOT DEFINED ${_v})
    message(FATAL_ERROR "check_goldens.cmake: -D${_v}=... is required")
  endif()
endforeach()
if(NOT EXISTS ${GOLDEN})
  message(FATAL_ERROR "${GOLDEN} is missing: run tests/tokenizer/gen_goldens.js (README.md)")
endif()

file(READ ${GOLDEN} _golden)
string(FIND "${_golden}" "\n" _eol)
string(SUBSTRING "${_golden}" 0 ${_eol} _first)
string(JSON _prov GET "${_first}" provenance)
string(JSON _corpus_sha GET "${_prov}" corpus_sha256)
string(JSON _corpus_lines GET "${_prov}" corpus_lines)
string(JSON _files GET "${_prov}" files)

file(SHA256 ${CORPUS} _got)
if(NOT _got STREQUAL _corpus_sha)
  message(FATAL_ERROR "${GOLDEN} was made from another corpus (sha256 ${_corpus_sha}, corpus.jsonl has ${_got}): regenerate it")
endif()

string(JSON _nfiles LENGTH "${_files}")
math(EXPR _last "${_nfiles} - 1")
foreach(_i RANGE ${_last})
  string(JSON _file MEMBER "${_files}" ${_i})
  string(JSON _want GET "${_files}" ${_file})
  file(SHA256 ${FILES_DIR}/${_file} _got)
  if(NOT _got STREQUAL _want)
    message(FATAL_ERROR "${GOLDEN} was made from another ${_file} (sha256 ${_want}, ${FILES_DIR} has ${_got})")
  endif()
endforeach()

# Count lines by how they start; the matches hold no ';', so they count as list items (the texts
# themselves are never parsed: they may hold \u0000 and ';').
file(READ ${CORPUS} _corpus)
string(REGEX MATCHALL "\n\"" _m "\n${_corpus}")
list(LENGTH _m _n_corpus)
string(REGEX MATCHALL "\n{\"text\":" _m "${_golden}")
list(LENGTH _m _n_texts)
if(NOT _n_corpus EQUAL _corpus_lines OR NOT _n_texts EQUAL _n_corpus)
  message(FATAL_ERROR "${GOLDEN}: ${_n_texts} encode lines, provenance says ${_corpus_lines}, corpus.jsonl has ${_n_corpus}")
endif()
message(STATUS "${GOLDEN}: current (${_n_texts} texts)")
