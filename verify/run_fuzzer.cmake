# Runs one libFuzzer target for a few seconds from its seed corpus; ctest's fuzz_* tests call
#   cmake -DFUZZER=<binary> -DCORPUS=<seed dir> -DWORK=<scratch dir> -DSECONDS=<n> -P run_fuzzer.cmake
# and the test fails if the fuzzer reports anything (crash, leak, sanitizer error, timeout,
# out of memory, or an abort from the target's own error-message checks).

foreach(variable FUZZER CORPUS WORK SECONDS)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${variable}=... is required")
  endif()
endforeach()
if(NOT IS_DIRECTORY "${CORPUS}")
  message(FATAL_ERROR "run_fuzzer.cmake: seed corpus ${CORPUS} is not a directory")
endif()

# libFuzzer adds every new interesting input to its corpus directory. Work on a fresh copy
# so the seeds in the source tree are never written to and each run starts from them alone.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus")
file(COPY "${CORPUS}/" DESTINATION "${WORK}/corpus")

# -seed=1 makes a run repeatable; -artifact_prefix puts a crashing input beside the corpus
# copy (the prefix is a path start, hence the trailing slash).
execute_process(
  COMMAND "${FUZZER}" "${WORK}/corpus" -max_total_time=${SECONDS} -seed=1 -rss_limit_mb=2048
          -max_len=65536 -artifact_prefix=${WORK}/ -print_final_stats=1
  RESULT_VARIABLE exit_code
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)

# A clean run: show the summary (the INITED line is the seeds' coverage, DONE the final
# one: cov = code edges, ft = features; then the execution count). A failed run: show the
# end of the output, where the sanitizer's report and stack trace are. Cut as text, not as
# a CMake list, because the output holds ';' and '[' that a list would mangle.
if(exit_code EQUAL 0)
  string(REGEX MATCHALL "[^\n]*(INITED|DONE|stat::)[^\n]*" summary "${output}")
  list(JOIN summary "\n" summary)
  message("${summary}")
else()
  string(LENGTH "${output}" output_length)
  set(tail "${output}")
  if(output_length GREATER 6000)
    math(EXPR tail_start "${output_length} - 6000")
    string(SUBSTRING "${output}" ${tail_start} -1 tail)
  endif()
  message("${tail}")
endif()

if(NOT exit_code EQUAL 0)
  file(GLOB artifacts "${WORK}/crash-*" "${WORK}/leak-*" "${WORK}/oom-*" "${WORK}/timeout-*"
       "${WORK}/slow-unit-*")
  if(artifacts)
    message(FATAL_ERROR "${FUZZER} failed (exit code ${exit_code}); reproduce with: ${FUZZER} ${artifacts}")
  endif()
  message(FATAL_ERROR "${FUZZER} failed (exit code ${exit_code}) without writing an input")
endif()
