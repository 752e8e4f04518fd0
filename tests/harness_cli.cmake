# kcross-harness's exit codes and refusals (cmake -P; HARNESS, EMULATOR):
#   1  a benchmark failed its check: forced with KCROSS_TEST_FAIL, the failed
#      result carries the reason, every other result and the end record are
#      written, the end record counts 1 failed;
#   2  bad input, one line on stderr: non-integer --samples/--cpu, invalid
#      forcings (KCROSS_TIMER, KCROSS_VDSO, KCROSS_SYSCALL, KCROSS_RSEQ,
#      KCROSS_TEST_FAIL, KCROSS_TEST_DELAY); an empty forcing is no forcing;
#   3  output that cannot be written (> /dev/full), one line on stderr;
#   more threads than allowed CPUs: flag threads-share-cpus (with taskset).
# A part this machine cannot do prints "SKIP: <reason>" (ctest: skipped).
cmake_minimum_required(VERSION 3.20)   # quoted strings are never variable names

function(harness out_var rc_var err_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${ENV_ARGS} ${EMULATOR} ${HARNESS} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  string(STRIP "${err}" err)
  set(${err_var} "${err}" PARENT_SCOPE)
endfunction()

# The JSON records of `out`, one list element each (';' hidden meanwhile).
function(records out var)
  string(REPLACE ";" "<semicolon>" lines "${out}")
  string(REPLACE "\n" ";" lines "${lines}")
  set(${var} "${lines}" PARENT_SCOPE)
endfunction()

set(skips "")

# ---- 1: forced failure, by name and by suite/name
foreach(glob "getppid-inline" "syscall/getppid-inl*")
  set(ENV_ARGS "KCROSS_TEST_FAIL=${glob}")
  harness(out rc err run --quick --samples 3 --bench "getppid-*" --json)
  if(NOT rc EQUAL 1)
    message(FATAL_ERROR "KCROSS_TEST_FAIL=${glob}: exit ${rc}, want 1\n${err}")
  endif()
  records("${out}" lines)
  set(nfailed 0)
  set(ok 0)
  set(results 0)
  set(end "")
  foreach(line IN LISTS lines)
    string(REPLACE "<semicolon>" ";" line "${line}")
    if(line STREQUAL "")
      continue()
    endif()
    string(JSON type GET "${line}" type)
    if(type STREQUAL "result")
      math(EXPR results "${results} + 1")
      string(JSON name GET "${line}" name)
      string(JSON status GET "${line}" status)
      if(name STREQUAL "getppid-inline")
        string(JSON reason GET "${line}" reason)
        if(NOT status STREQUAL "failed" OR
           NOT reason STREQUAL "forced failure (KCROSS_TEST_FAIL, for tests)")
          message(FATAL_ERROR "forced result: status ${status}, reason '${reason}'")
        endif()
        math(EXPR nfailed "${nfailed} + 1")
      elseif(status STREQUAL "failed")
        message(FATAL_ERROR "${name} failed, only getppid-inline should: ${line}")
      elseif(status STREQUAL "ok")
        string(JSON nsamples LENGTH "${line}" samples)
        if(NOT nsamples EQUAL 3)
          message(FATAL_ERROR "${name}: ${nsamples} samples, want 3")
        endif()
        math(EXPR ok "${ok} + 1")
      endif()
    elseif(type STREQUAL "end")
      set(end "${line}")
    endif()
  endforeach()
  if(NOT nfailed EQUAL 1 OR results LESS 4 OR ok LESS 3)
    message(FATAL_ERROR "KCROSS_TEST_FAIL=${glob}: ${results} results, ${ok} ok, ${nfailed} failed")
  endif()
  if(end STREQUAL "")
    message(FATAL_ERROR "KCROSS_TEST_FAIL=${glob}: no end record")
  endif()
  string(JSON end_failed GET "${end}" failed)
  string(JSON end_ok GET "${end}" ok)
  if(NOT end_failed EQUAL 1 OR NOT end_ok EQUAL ok)
    message(FATAL_ERROR "end record ${end}: want failed 1, ok ${ok}")
  endif()
  message(STATUS "KCROSS_TEST_FAIL=${glob}: exit 1, ${ok} ok, 1 failed, end record written")
endforeach()

# ---- 2: refusals, one line, exit 2
set(cases
  "run --samples 3.7" "run --cpu 1.5" "run --samples 3e1" "run --cpu 0x1"
  "KCROSS_TIMER=bogus run" "KCROSS_VDSO=off run" "KCROSS_SYSCALL=bogus run"
  "KCROSS_RSEQ=0 run" "KCROSS_RSEQ=OFF list"
  "KCROSS_TEST_FAIL=no-such-benchmark run" "KCROSS_TIMER=bogus list"
  "run --bench gettid-inline" "list --bench gettid-inline" "run --suite syscall --suite cpuid"
  "run --suite syscall,nosuch" "run --suite syscall," "list --suite ,cpuid"
  "run --batch-multiple 0" "run --batch-multiple 2.5"
  "KCROSS_TEST_DELAY=getppid-inline run" "KCROSS_TEST_DELAY=:5 run"
  "KCROSS_TEST_DELAY=getppid-inline: run" "KCROSS_TEST_DELAY=getppid-inline:0 run"
  "KCROSS_TEST_DELAY=getppid-inline:-3 run" "KCROSS_TEST_DELAY=getppid-inline:ten run"
  "KCROSS_TEST_DELAY=getppid-inline:5ns run" "KCROSS_TEST_DELAY=getppid-inline:nan run"
  "KCROSS_TEST_DELAY=getppid-inline:1e7 run" "KCROSS_TEST_DELAY=no-such-benchmark:5 run"
  "KCROSS_TEST_DELAY=getppid-inline:5x sysinfo")
foreach(case IN LISTS cases)
  separate_arguments(words UNIX_COMMAND "${case}")
  set(ENV_ARGS "")
  list(GET words 0 first)
  if(first MATCHES "^KCROSS_")
    set(ENV_ARGS "${first}")
    list(REMOVE_AT words 0)
  endif()
  harness(out rc err ${words} --quick --bench getppid-inline)
  if(NOT rc EQUAL 2 OR err MATCHES "\n" OR NOT err MATCHES "^kcross-harness: ")
    message(FATAL_ERROR "'${case}' gave exit ${rc}, stderr '${err}'")
  endif()
  message(STATUS "'${case}': exit 2, ${err}")
endforeach()
set(ENV_ARGS "")

# --suite takes a comma-separated list: the rows of both suites, nothing else.
harness(out rc err list --suite cpuid,syscall)
if(NOT rc EQUAL 0 OR NOT out MATCHES "(^|\n)syscall +getppid-inline " OR NOT out MATCHES
   "(^|\n)cpuid +rseq-load " OR out MATCHES "(^|\n)percpu")
  message(FATAL_ERROR "list --suite cpuid,syscall: exit ${rc}, ${out}")
endif()

# --batch-multiple K: every batch a multiple of K iterations, K in the plan.
harness(out rc err run --quick --samples 3 --bench getppid-inline --batch-multiple 1000 --json)
records("${out}" recs)
foreach(line IN LISTS recs)
  string(REPLACE "<semicolon>" ";" line "${line}")
  if(line STREQUAL "")
    continue()
  endif()
  string(JSON type GET "${line}" type)
  if(type STREQUAL "plan")
    string(JSON k GET "${line}" batch_multiple)
  elseif(type STREQUAL "result")
    string(JSON iters GET "${line}" iters)
  endif()
endforeach()
math(EXPR rest "${iters} % 1000")
if(NOT rc EQUAL 0 OR NOT k EQUAL 1000 OR NOT rest EQUAL 0 OR iters EQUAL 0)
  message(FATAL_ERROR "--batch-multiple 1000: exit ${rc}, plan ${k}, iters ${iters}")
endif()

# ctxsw rows run with the harness's perf events closed (they slow every context
# switch on the system); the rows after them get the events back.  Without /proc
# (the cross tiers run real /proc too) the events stay, as the count's fallback.
harness(out rc err run --quick --samples 3 --suite ctxsw,uctx --bench "[yk]*-*" --json)
records("${out}" recs)
set(closed 0)
set(after 0)
foreach(line IN LISTS recs)
  string(REPLACE "<semicolon>" ";" line "${line}")
  if(line STREQUAL "" OR NOT line MATCHES "\"type\":\"result\"")
    continue()
  endif()
  string(JSON suite GET "${line}" suite)
  string(JSON status GET "${line}" status)
  if(NOT status STREQUAL "ok")
    continue()
  endif()
  string(JSON why ERROR_VARIABLE none GET "${line}" counters_unavailable context-switches)
  string(JSON open ERROR_VARIABLE closed_err GET "${line}" counters context-switches)
  if(suite STREQUAL "ctxsw")
    # No event may be open while a ctxsw row runs (where /proc counts instead).
    if(closed_err STREQUAL "NOTFOUND" AND EXISTS /proc/self/task)
      message(FATAL_ERROR "a ctxsw row ran with the harness's perf events open: ${line}")
    endif()
    math(EXPR closed "${closed} + 1")
  elseif(why MATCHES "^closed while")
    message(FATAL_ERROR "a uctx row after ctxsw still ran without its perf events: ${line}")
  else()
    math(EXPR after "${after} + 1")
  endif()
endforeach()
if(NOT rc EQUAL 0 OR after EQUAL 0 OR closed EQUAL 0)
  message(FATAL_ERROR "ctxsw then uctx: exit ${rc}, ${closed} ctxsw rows, ${after} uctx after")
endif()

# An empty forcing is no forcing: the same as unset.
foreach(var KCROSS_SYSCALL KCROSS_VDSO KCROSS_RSEQ KCROSS_TIMER KCROSS_TEST_FAIL
        KCROSS_TEST_DELAY)
  set(ENV_ARGS "${var}=")
  harness(out rc err run --quick --samples 3 --bench getppid-dispatch --json)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\"status\":\"ok\"")
    message(FATAL_ERROR "${var}= (empty): exit ${rc}, ${err}")
  endif()
  set(ENV_ARGS "")
endforeach()
set(ENV_ARGS "")
harness(unset_out rc err sysinfo --json)
set(ENV_ARGS "KCROSS_SYSCALL=")
harness(empty_out rc err sysinfo --json)
string(JSON m_unset GET "${unset_out}" syscall mechanism)
string(JSON m_empty GET "${empty_out}" syscall mechanism)
string(JSON f_unset GET "${unset_out}" syscall forced)
string(JSON f_empty GET "${empty_out}" syscall forced)
if(NOT m_unset STREQUAL m_empty OR NOT f_unset STREQUAL f_empty)
  message(FATAL_ERROR "KCROSS_SYSCALL= gave mechanism ${m_empty} forced '${f_empty}', "
                      "unset ${m_unset} forced '${f_unset}'")
endif()
message(STATUS "empty forcings behave as unset (mechanism ${m_empty})")

# ---- 3: output that cannot be written
set(ENV_ARGS "")
if(EXISTS /dev/full)
  foreach(args "run;--quick;--bench;getppid-inline;--json" "list" "sysinfo;--json")
    execute_process(COMMAND ${EMULATOR} ${HARNESS} ${args} OUTPUT_FILE /dev/full
                    RESULT_VARIABLE rc ERROR_VARIABLE err)
    string(STRIP "${err}" err)
    if(NOT rc EQUAL 3 OR err MATCHES "\n" OR NOT err MATCHES "^kcross-harness: cannot write output: ")
      message(FATAL_ERROR "'${args}' > /dev/full: exit ${rc}, stderr '${err}'")
    endif()
    message(STATUS "'${args}' > /dev/full: exit 3, ${err}")
  endforeach()
else()
  list(APPEND skips "no /dev/full")
endif()

# ---- threads sharing CPUs: on one CPU, x2N runs 2 threads
find_program(TASKSET taskset)
if(TASKSET)
  execute_process(COMMAND ${TASKSET} -c 0 ${EMULATOR} ${HARNESS} run --quick --samples 3
                          --min-batch-ms 0.2 --bench counter-atomic-x2N --json
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "\"flag\":\"threads-share-cpus\"")
    message(FATAL_ERROR "taskset -c 0 counter-atomic-x2N: exit ${rc}, no threads-share-cpus\n${out}\n${err}")
  endif()
  message(STATUS "taskset -c 0: counter-atomic-x2N flagged threads-share-cpus")
else()
  list(APPEND skips "no taskset")
endif()

if(skips)
  message("SKIP: parts not checked: ${skips}")
endif()
