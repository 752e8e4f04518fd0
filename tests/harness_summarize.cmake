# `kcross-harness summarize`: the JSON object has exactly the documented
# keys and the figures of the statistics rule on a vector computed by hand;
# text mode and standard input work; every kind of bad input exits 2 with
# one line on stderr and nothing on stdout; an unwritable stdout exits 3.
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/x "16\n10\n# a comment\n15\n  11  \n\n14\n12\n13\n")   # 10..16
file(WRITE ${WORK}/o2 "2\n1.9\n2.1\n")        # median 2 > IQR/2 = 1.5, 2*2 < 13
file(WRITE ${WORK}/o6 "6.5\n")                 # 2*6.5 = 13: half the median or more
file(WRITE ${WORK}/few "1\n2\n3\n4\n5\n")
file(WRITE ${WORK}/empty "")
file(WRITE ${WORK}/word "1\n2\nabc\n")
file(WRITE ${WORK}/nan "1\nnan\n")
file(WRITE ${WORK}/inf "1\n-inf\n")
file(WRITE ${WORK}/big "1\n1e400\n")
file(WRITE ${WORK}/neg "1\n2\n-3\n")
file(WRITE ${WORK}/hex "0x10\n")

function(summarize out_var rc_var)
  execute_process(COMMAND ${EMULATOR} ${HARNESS} summarize ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0 AND NOT err STREQUAL "")
    message(FATAL_ERROR "summarize ${ARGN}: exit 0 but stderr '${err}'")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
  set(${rc_var} "${rc}" PARENT_SCOPE)
  set(last_err "${err}" PARENT_SCOPE)
endfunction()

function(expect json key want)
  string(JSON got GET "${json}" ${key})
  if(want STREQUAL "null")
    string(JSON got TYPE "${json}" ${key})
    set(want NULL)
  endif()
  if(NOT got STREQUAL "${want}")
    message(FATAL_ERROR "summarize: ${key} is '${got}', want '${want}'\n${json}")
  endif()
endfunction()

summarize(out rc --json ${WORK}/x ${WORK}/o2)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "summarize --json x o2: exit ${rc}: ${last_err}")
endif()
string(JSON nkeys LENGTH "${out}")
if(NOT nkeys EQUAL 14)
  message(FATAL_ERROR "summarize --json: ${nkeys} keys, want 14: ${out}")
endif()
expect("${out}" n 7)
expect("${out}" median 11)             # corrected: 8..14
expect("${out}" q1 9.5)
expect("${out}" q3 12.5)
expect("${out}" min 8)
expect("${out}" spread 0.27272727272727271)
expect("${out}" ci_low 8)
expect("${out}" ci_high 14)
expect("${out}" ci_low_rank 1)
expect("${out}" ci_high_rank 7)
expect("${out}" ci_confidence 0.984375)
expect("${out}" overhead_median 2)
expect("${out}" subtracted ON)         # CMake renders JSON true as ON
expect("${out}" overhead_reason subtracted)

summarize(out rc --json ${WORK}/x ${WORK}/o6)
expect("${out}" subtracted OFF)
expect("${out}" overhead_reason "half the median or more")
expect("${out}" median 13)

summarize(out rc --json ${WORK}/x)
expect("${out}" overhead_reason null)
expect("${out}" overhead_median null)
expect("${out}" median 13)

execute_process(COMMAND ${EMULATOR} ${HARNESS} summarize - ${WORK}/o2 INPUT_FILE ${WORK}/x
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^n 7  median 11\\*.*overhead 2: subtracted\n$")
  message(FATAL_ERROR "summarize - o2 (text, stdin): exit ${rc}, '${out}' '${err}'")
endif()

foreach(args "${WORK}/few" "${WORK}/empty" "${WORK}/word" "${WORK}/nan" "${WORK}/inf"
             "${WORK}/big" "${WORK}/neg" "${WORK}/hex" "${WORK}/no-such-file"
             "${WORK}/x;${WORK}/empty" "${WORK}/x;${WORK}/word" "${WORK}/x;${WORK}/no-such-file"
             "" "--frob;${WORK}/x" "${WORK}/x;${WORK}/o2;${WORK}/o2" "-;-")
  summarize(out rc ${args})
  string(STRIP "${last_err}" err)
  if(NOT rc EQUAL 2 OR NOT out STREQUAL "" OR err MATCHES "\n"
     OR NOT err MATCHES "^kcross-harness: summarize: ")
    message(FATAL_ERROR "summarize '${args}': exit ${rc}, stdout '${out}', stderr '${err}' "
                        "(want exit 2, one line on stderr)")
  endif()
  message(STATUS "summarize '${args}': ${err}")
endforeach()

if(EXISTS /dev/full)
  execute_process(COMMAND ${EMULATOR} ${HARNESS} summarize --json ${WORK}/x
                  OUTPUT_FILE /dev/full RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(STRIP "${err}" err)
  if(NOT rc EQUAL 3 OR err MATCHES "\n" OR NOT err MATCHES "^kcross-harness: summarize: ")
    message(FATAL_ERROR "summarize > /dev/full: exit ${rc}, stderr '${err}' (want 3, one line)")
  endif()
endif()
