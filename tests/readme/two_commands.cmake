# The README's "Two commands" block against the scripts that CI and the demo run:
#   - the block holds exactly two commands, the demo's then the tests';
#   - the first is scripts/demo.sh, which exists, is executable and installs the
#     host build's packages itself (scripts/setup.sh --demo);
#   - the second is the one command .ci/run runs (and .ci/run runs nothing else),
#     an executable script that installs what it needs itself (scripts/setup.sh).
# A README that drifts from the scripts, or a CI that runs more than the README
# says, fails here.
#
#   cmake -DROOT=<source dir> [-DREADME=<file>] [-DCI_RUN=<file>] -P two_commands.cmake
if(NOT DEFINED ROOT)
  message(FATAL_ERROR "two_commands.cmake: -DROOT=<source dir> is required")
endif()
if(NOT DEFINED README)
  set(README ${ROOT}/README.md)
endif()
if(NOT DEFINED CI_RUN)
  set(CI_RUN ${ROOT}/.ci/run)
endif()

# commands(FILE OUT): the shell commands of a script, one per element: comment lines,
# blank lines, `set -...` and `cd ...` (the scripts' preamble) dropped, trailing
# comments stripped, a leading `exec ` dropped.
function(commands text out_var)
  string(REPLACE ";" "\\;" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(result "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "(^|[ \t])#.*$" "" line "${line}")
    string(STRIP "${line}" line)
    if(line STREQUAL "" OR line MATCHES "^(set|cd) ")
      continue()
    endif()
    string(REGEX REPLACE "^exec +" "" line "${line}")
    list(APPEND result "${line}")
  endforeach()
  set(${out_var} "${result}" PARENT_SCOPE)
endfunction()

function(executable path)
  execute_process(COMMAND test -f ${ROOT}/${path} -a -x ${ROOT}/${path} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${path}, named in README.md's \"Two commands\", is not an executable file")
  endif()
endfunction()

# calls(SCRIPT PATTERN WHAT): SCRIPT runs a command matching PATTERN (not only in a comment).
function(calls script pattern what)
  file(READ ${ROOT}/${script} text)
  commands("${text}" cmds)
  foreach(c IN LISTS cmds)
    if(c MATCHES "${pattern}")
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${script} does not run ${what}, so on a fresh machine it would miss packages")
endfunction()

# The block: the first fence after the heading "## Two commands".
file(READ ${README} readme)
string(FIND "${readme}" "\n## Two commands" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${README} has no heading '## Two commands'")
endif()
string(SUBSTRING "${readme}" ${at} -1 rest)
string(FIND "${rest}" "\n```" open)
if(open EQUAL -1)
  message(FATAL_ERROR "${README}: no code block after '## Two commands'")
endif()
string(SUBSTRING "${rest}" ${open} -1 rest)
string(SUBSTRING "${rest}" 1 -1 rest)
string(FIND "${rest}" "\n" eol)  # the rest of the fence line: ```sh
string(SUBSTRING "${rest}" ${eol} -1 rest)
string(FIND "${rest}" "\n```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "${README}: the '## Two commands' block has no closing fence")
endif()
string(SUBSTRING "${rest}" 0 ${close} block)
commands("${block}" readme_cmds)
list(LENGTH readme_cmds n)
if(NOT n EQUAL 2)
  message(FATAL_ERROR "README.md's \"Two commands\" block holds ${n} commands, not 2: ${readme_cmds}")
endif()
list(GET readme_cmds 0 demo)
list(GET readme_cmds 1 tests)

if(NOT demo STREQUAL "scripts/demo.sh")
  message(FATAL_ERROR "README.md's first command is '${demo}', not scripts/demo.sh")
endif()
executable(scripts/demo.sh)
calls(scripts/demo.sh "scripts/setup\\.sh --demo" "scripts/setup.sh --demo")

file(READ ${CI_RUN} ci)
commands("${ci}" ci_cmds)
list(LENGTH ci_cmds n)
if(NOT n EQUAL 1)
  message(FATAL_ERROR ".ci/run runs ${n} commands (${ci_cmds}); it must run only the README's "
                      "test command '${tests}'")
endif()
if(NOT ci_cmds STREQUAL tests)
  message(FATAL_ERROR ".ci/run runs '${ci_cmds}', README.md's test command is '${tests}'")
endif()
executable(${tests})
calls(${tests} "scripts/setup\\.sh\"?($|[ ;|&]+[^-])" "scripts/setup.sh (all of it, not --demo)")

message(STATUS "README.md's two commands: '${demo}' (as scripts/demo.sh), '${tests}' (as .ci/run)")
