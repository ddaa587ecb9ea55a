# `twofold verify`'s model x technique matrix (verify/techniques/matrix.h): every model of the table
# through every entry that runs a model, on DATA (TECHNIQUES: the entries, empty for all).
#  - no cell and no row says WRONG, both footers count #wrong 0, and every model has its line (with
#    every entry, a cell that ran);
#  - with BREAK set, the twin of that entry is spoiled on purpose (TWOFOLD_BREAK_TWIN): the exit
#    status must be 1 and the line of the model BROKEN_MODEL must say WRONG (a check that can fail).
# Run: cmake -DTWOFOLD=... -DDATA=... [-DTECHNIQUES=a;b] [-DBREAK=entry -DBROKEN_MODEL=model] -P this
if(NOT DEFINED TECHNIQUES)
  set(TECHNIQUES "")
endif()
execute_process(COMMAND ${TWOFOLD} verify ${TECHNIQUES} --data ${DATA}
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
message(STATUS "twofold verify ${TECHNIQUES} --data ${DATA} (exit ${status}):\n${out}${error}")
if(NOT status EQUAL 0 OR out MATCHES "WRONG[: \n]" OR NOT out MATCHES "# matrix: [^\n]*#wrong 0\n")
  message(FATAL_ERROR "the matrix on ${DATA}: exit status ${status}, expected 0 with no WRONG cell")
endif()
file(READ ${SOURCE_DIR}/ref/models/model.c table)
string(REGEX MATCH "model_names\\[MODEL_COUNT \\+ 1\\] = {([^}]*)}" names "${table}")
string(REGEX MATCHALL "\"[a-z0-9]+\"" models "${CMAKE_MATCH_1}")
list(LENGTH models count)
if(count LESS 9)
  message(FATAL_ERROR "read ${count} model names from ref/models/model.c, expected at least 9")
endif()
foreach(quoted ${models})
  string(REPLACE "\"" "" model ${quoted})
  # every model has its line; with every entry (TECHNIQUES empty) a cell that ran: `train` takes them all
  if(NOT out MATCHES "\n  ${model} +[^\n]*([0-9]/[0-9]|n/a|not yet)")
    message(FATAL_ERROR "the matrix has no line for ${model}")
  endif()
  if(TECHNIQUES STREQUAL "" AND NOT out MATCHES "\n  ${model} +[^\n]*[0-9]/[0-9]")
    message(FATAL_ERROR "the matrix has no cell that ran for ${model}")
  endif()
endforeach()
message(STATUS "${count} models, each with its line")
if(DEFINED BREAK)
  set(ENV{TWOFOLD_BREAK_TWIN} ${BREAK})
  execute_process(COMMAND ${TWOFOLD} verify ${BREAK} --data ${DATA} RESULT_VARIABLE status OUTPUT_VARIABLE out)
  unset(ENV{TWOFOLD_BREAK_TWIN})
  message(STATUS "TWOFOLD_BREAK_TWIN=${BREAK} twofold verify ${BREAK} --data ${DATA} (exit ${status}):\n${out}")
  if(NOT status EQUAL 1 OR NOT out MATCHES "\n  ${BROKEN_MODEL} +[^\n]*WRONG")
    message(FATAL_ERROR "a spoiled ${BREAK} twin: exit status ${status}, expected 1 and ${BROKEN_MODEL}'s cell WRONG")
  endif()
endif()
