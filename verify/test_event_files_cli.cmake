# Event files end to end (verify/ERRORS.md, Event files; cmake -P, TWOFOLD and WORK from ctest):
#  1. TGN's ml_*.csv layout (an unnamed index, u, i, ts, label, idx) loads with no edge feature:
#     before the fix `twofold info` printed "feature width 2", the index columns taken as
#     features. --edge-columns takes exactly what it names.
#  2. JODIE's layout, SNAP's # comments, a header in capitals and a UTF-8 byte order mark load.
#  3. Bad --edge-columns, and memory errors on a file, exit 2 with one line naming the file.
#  4, 5. --edge-columns with --edge-features, and times beyond float range.

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# 60 events between users 1..5 and items 6..10; idx is the event's number, as in TGN's files.
set(ml ",u,i,ts,label,idx\n")
foreach(n RANGE 0 59)
  math(EXPR user "1 + ${n} % 5")
  math(EXPR item "6 + (${n} * 3) % 5")
  math(EXPR idx "${n} + 1")
  string(APPEND ml "${n},${user},${item},${n}.0,0,${idx}\n")
endforeach()
file(WRITE "${WORK}/ml_x.csv" "${ml}")
file(WRITE "${WORK}/jodie.csv" "user_id,item_id,timestamp,state_label,comma_separated_list_of_features\n"
                               "0,0,0.0,0,0.1,0.2,0.3\n2,1,1.0,1,0.4,0.5,0.6\n1,0,2.0,0,0.7,0.8,0.9\n")
file(WRITE "${WORK}/snap.txt" "# Directed graph: CollegeMsg.txt\n# FromNodeId\tToNodeId\tTime\n1 2 10\n2 3 11\n")
file(WRITE "${WORK}/upper.csv" "FROM,To,TIME,Feature\n1,2,0,0.5\n2,3,1,0.25\n")
string(ASCII 239 187 191 bom)
file(WRITE "${WORK}/bom.csv" "${bom}from,to,time\n1,2,0\n2,3,1\n")
# One stray vertex id near 2^31: node memory for every id up to it.
file(WRITE "${WORK}/big.txt" "0 2147483646 0\n1 2 1\n2 3 2\n3 4 3\n4 5 4\n5 6 5\n6 7 6\n7 8 7\n8 9 8\n9 10 9\n")
# A T-GCN speed header of 2000 sensors: its first block of rows is 16 MB of doubles.
string(REPEAT "s," 1999 header)
file(WRITE "${WORK}/wide_speed.csv" "${header}s\n")
file(WRITE "${WORK}/wide_adj.csv" "0\n")
file(WRITE "${WORK}/zero_speed.csv" "a,b\n0,0\n0,0\n0,0\n")
file(WRITE "${WORK}/zero_adj.csv" "0,1\n1,0\n")

# expect_output(TEXT... -- ARG...): exit status 0 and stdout containing every TEXT; prints stdout.
function(expect_output)
  list(FIND ARGN "--" split)
  list(SUBLIST ARGN 0 ${split} texts)
  math(EXPR first "${split} + 1")
  list(SUBLIST ARGN ${first} -1 arguments)
  execute_process(COMMAND ${TWOFOLD} ${arguments} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE status
                  OUTPUT_VARIABLE out ERROR_VARIABLE error)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "twofold ${arguments}: exit status ${status}, expected 0: ${error}")
  endif()
  foreach(text IN LISTS texts)
    string(FIND "${out}" "${text}" found)
    if(found EQUAL -1)
      message(FATAL_ERROR "twofold ${arguments}: stdout lacks '${text}':\n${out}")
    endif()
  endforeach()
  message(STATUS "twofold ${arguments}:\n${out}")
endfunction()

# expect_failure(TEXT ARG...): exit status 2 and one stderr line containing TEXT.
function(expect_failure expected)
  execute_process(COMMAND ${TWOFOLD} ${ARGN} WORKING_DIRECTORY "${WORK}" RESULT_VARIABLE status
                  OUTPUT_VARIABLE out ERROR_VARIABLE error)
  string(STRIP "${error}" error)
  string(FIND "${error}" "\n" newline)
  string(FIND "${error}" "${expected}" found)
  if(NOT status EQUAL 2 OR NOT newline EQUAL -1 OR found EQUAL -1)
    message(FATAL_ERROR "twofold ${ARGN}: exit ${status}, expected 2 and one stderr line with '${expected}', got:\n"
                        "${error}")
  endif()
  message(STATUS "exit 2 as expected: ${error}")
endfunction()

# 1. Index columns are not features; --edge-columns chooses.
expect_output("ml_x.csv: edge feature columns: none; ignored columns: (unnamed column 1), idx"
              "events          60" "feature width   0 (edge features)" -- info ml_x.csv)
expect_output("ml_x.csv: edge feature columns: idx; ignored columns: (unnamed column 1)"
              "feature width   1 (edge features)" -- info --edge-columns idx ml_x.csv)
expect_output("ignored columns: (unnamed column 1), idx" "60 events, 0 edge features"
              -- train --model tgn --data ml_x.csv --epochs 1 --batch 10)

# 2. The layouts users bring.
expect_output("item ids follow the 3 user ids" "items from id 3" "vertices        5 active, ids 0..4"
              "feature width   3 (edge features)" -- info jodie.csv)
expect_output("events          2" "time            10 .. 11" -- info snap.txt)
expect_output("edge feature columns: Feature;" "feature width   1 (edge features)" -- info upper.csv)
expect_output("events          2" -- info bom.csv)

# 3. One line, exit 2, naming the file.
expect_failure("option --edge-columns: ml_x.csv has no column \"bogus\"" info --edge-columns bogus ml_x.csv)
expect_failure("column \"ts\" of ml_x.csv is the time column" train --model tgn --data ml_x.csv --edge-columns ts)
expect_failure("wikipedia.txt.gz is not an event CSV" info --edge-columns idx wikipedia)
expect_failure("option --edge-columns needs a value" info ml_x.csv --edge-columns)
expect_failure("big.txt (vertex ids 0..2147483646): too large for memory"
               --memory-limit 100M train --model tgn --data big.txt --epochs 1)
expect_failure("wide_speed.csv (2000 columns): too large for memory" --memory-limit 10M info wide_speed.csv)
expect_failure("zero_speed.csv: no positive reading" info zero_speed.csv)

# 4. --edge-columns with --edge-features: the .npy was used while the
#    loader's line said the named column was taken (with --edge-features none: "edge feature
#    columns: idx", then "0 edge features", exit 0); now refused before anything is read.
expect_failure("train: give one of --edge-columns and --edge-features"
               train --model tgn --data ml_x.csv --edge-columns idx --edge-features none --epochs 1)
expect_failure("train: give one of --edge-columns and --edge-features"
               train --model tgn --data ml_x.csv --edge-columns idx --edge-features feats.npy --epochs 1)
# 5. Times beyond float's range: before, 1e39 gave a silent test AP of
#    0.5000 and a first event at -1e300 "training diverged"; now the file's line is named.
#    20 events each, enough to split: only the time is wrong.
set(far "")
set(early "from,to,time\n0,5,-1e300\n")
foreach(n RANGE 0 18)
  math(EXPR u "${n} % 5")
  math(EXPR v "5 + ${n} % 3")
  string(APPEND far "${u} ${v} ${n}\n")
  if(n GREATER 0)
    string(APPEND early "${u},${v},${n}\n")
  endif()
endforeach()
string(APPEND far "1 6 1e39\n")
string(APPEND early "1,6,19\n")
file(WRITE "${WORK}/far.txt" "${far}")
file(WRITE "${WORK}/early.csv" "${early}")
expect_failure("far.txt:20: timestamp \"1e39\" is beyond" train --model tgn --data far.txt --epochs 1)
expect_failure("early.csv:2: timestamp \"-1e300\" is beyond" train --model tgn --data early.csv --epochs 1)
