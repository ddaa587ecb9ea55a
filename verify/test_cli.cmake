# The command line end to end (cmake -P; TWOFOLD, SOURCE_DIR and WORK come from ctest).
#  1. `twofold info --markdown NAME` for every bundled dataset prints exactly the row in
#     datasets/README.md's statistics table, so the table cannot drift from the data.
#  2. Bad input exits with status 2 and one line on stderr; --help exits 0.

file(READ "${SOURCE_DIR}/datasets/README.md" readme)
set(names chickenpox pedalme england_covid twitter_tennis montevideo_bus los
          wikipedia collegemsg enron bitcoin_otc bitcoin_alpha)
foreach(name IN LISTS names)
  execute_process(COMMAND ${TWOFOLD} info --markdown ${name}
                  RESULT_VARIABLE status OUTPUT_VARIABLE row ERROR_VARIABLE error)
  string(STRIP "${row}" row)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "twofold info ${name} failed (${status}): ${error}")
  endif()
  string(FIND "${readme}" "${row}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "datasets/README.md lacks the row twofold info prints:\n${row}")
  endif()
  message(STATUS "table row matches: ${row}")
endforeach()

# expect_failure(EXPECTED_TEXT ARG...): exit status 2, one stderr line containing the text.
function(expect_failure expected)
  execute_process(COMMAND ${TWOFOLD} ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
  string(STRIP "${error}" error)
  if(NOT status EQUAL 2)
    message(FATAL_ERROR "twofold ${ARGN}: exit status ${status}, expected 2 (stderr: ${error})")
  endif()
  string(FIND "${error}" "\n" newline)
  string(FIND "${error}" "${expected}" found)
  if(NOT newline EQUAL -1 OR found EQUAL -1)
    message(FATAL_ERROR "twofold ${ARGN}: expected one stderr line containing '${expected}', got:\n${error}")
  endif()
  message(STATUS "exit 2 as expected: ${error}")
endfunction()

expect_failure("No such file" info /nonexistent/graph.json)
expect_failure("which dataset" info)
expect_failure("unknown command" frobnicate)
expect_failure("needs a value" info --lags)
expect_failure("expected a whole number" info --lags zero chickenpox)
expect_failure("is generated, its features are not a series' lags" train --model tgcn --data powerlaw:nodes=50,edges=200,snapshots=6 --lags 3)
expect_failure("has no lagged features" info --lags 2 twitter_tennis)
expect_failure("is an event stream, it has no lagged features" info --lags 2 wikipedia)
expect_failure("unknown option" info --colour chickenpox)
expect_failure("too large for memory" --memory-limit 1M info twitter_tennis)
expect_failure("expected a size" --memory-limit lots info chickenpox)
expect_failure("unknown parameter" info powerlaw:nodes=10,colour=red)
expect_failure("option --model: \"gcn\", expected tgcn, gconvgru, gclstm, evolvegcn, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn, cdgcn, gatlstm, dysat, tgn, jodie or apan" train --model gcn
               --data chickenpox)
expect_failure("--model and --data are required" train --model tgcn)
expect_failure("is an event stream" train --model tgcn --data wikipedia)
expect_failure("option --lr: \"fast\", expected a number in (0, 1000)" train --model tgcn --data chickenpox --lr fast)
expect_failure("no such checkpoint" train --model tgcn --data chickenpox --load /nonexistent/checkpoint)
expect_failure("expected a whole number in 1..16" train --model gconvgru --data chickenpox --k 0)
expect_failure("--incremental applies to tgcn, gconvgru, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn and cdgcn, not gclstm" train --model gclstm --data chickenpox --impl opt --incremental)
expect_failure("--incremental applies to tgcn, gconvgru, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn and cdgcn, not evolvegcn" train --model evolvegcn --data chickenpox
               --impl opt --incremental)
expect_failure("not dysat (it serves the aggregation of X_t; GC-LSTM has none, its input term being X_t W, EvolveGCN convolves with a weight that evolves, attention (GAT-LSTM, DySAT) is not a fixed linear operator (its weights are computed from W X_t)"
               train --model dysat --data chickenpox --impl opt --incremental)
expect_failure("--k applies to gconvgru, gclstm, gconvlstm, gcrnm1 and dcrnn, not tgcn" train --model tgcn --data chickenpox --k 3)
expect_failure("use --k 2 or more" train --model gconvgru --k 1 --data chickenpox --impl opt --incremental)
# the model table says which models stack pairs (--layers) and which --split vertex trains
expect_failure("train: --layers applies to gcrnm1 and cdgcn, not wdgcn" train --model wdgcn --data chickenpox --layers 2)
# link prediction on snapshots: each part of the split needs a snapshot and its successor; one trainer
expect_failure("--task link: 3 snapshots split at 0.8 give 2 to train and 1 to test; each part needs 2 or more"
               train --model tgcn --data powerlaw:nodes=20,edges=40,snapshots=3 --task link)
# ... and an edge between two vertices to score in each part (edge-less data once trained on nothing: AP nan)
expect_failure("--task link: the train part's scored snapshots 1..3 hold no edge between two vertices to score"
               train --model tgcn --data powerlaw:nodes=20,edges=0,snapshots=6 --task link)
expect_failure("--task link: the train part's scored snapshots 1..3 hold no edge between two vertices to score"
               train --model gatlstm --impl opt --data powerlaw:nodes=20,edges=0,snapshots=6 --task link)
expect_failure("train: --task link trains with the data-parallel trainer alone" train --model tgcn --data chickenpox
               --task link --impl opt --schedule greedy)
# node classification: labelled data only, labels in both parts of the split, one trainer; a label file's
# line that is not `snapshot vertex class` is named with its line
expect_failure("--task classify: the data has no class labels" train --model tgcn --data chickenpox --task classify)
expect_failure("train: --task classify trains with the data-parallel trainer alone" train --model tgcn
               --data communities:nodes=40,snapshots=6 --task classify --impl opt --schedule greedy)
file(WRITE "${WORK}/labels_train_only.txt" "# snapshot vertex class\n0 1 2\n0 2 0\n1 3 1\n")
expect_failure("--task classify: the test snapshots 413..516 hold no labelled vertex" train --model tgcn
               --data chickenpox --task classify --labels ${WORK}/labels_train_only.txt)
file(WRITE "${WORK}/labels_bad.txt" "0 1 2\n0 2 zero\n")
expect_failure("labels_bad.txt:2: class \"zero\", expected a whole number" train --model tgcn --data chickenpox
               --task classify --labels ${WORK}/labels_bad.txt)
file(WRITE "${WORK}/labels_range.txt" "0 1 2\n517 2 0\n")
expect_failure("labels_range.txt:2: snapshot 517, expected 0..516 (the data has 517 snapshots)" train --model tgcn
               --data chickenpox --task classify --labels ${WORK}/labels_range.txt)
expect_failure("communities: change=1.5, expected a fraction in [0, 1]" info communities:change=1.5)
expect_failure("unknown parameter" info communities:nodes=10,colour=red)
expect_failure("option --layers: \"0\", expected a whole number in 1..16" train --model gcrnm1 --data chickenpox --layers 0)
# every snapshot model of the table takes --split vertex (DCRNN last, its backward walk on the reversed
# graph); DGC's stale rows do not reach DCRNN's backward walk, whose shares cross ranks as partial sums
foreach(mode cache exchange)
  execute_process(COMMAND ${TWOFOLD} train --model dcrnn --data chickenpox --impl opt --split vertex --partition hash
                  --mode ${mode} --epochs 1 RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
  if(NOT status EQUAL 0 OR NOT out MATCHES "model dcrnn .*${mode} mode" OR NOT out MATCHES "final test MSE")
    message(FATAL_ERROR "twofold train --model dcrnn --split vertex --mode ${mode}: status ${status}\n${out}${error}")
  endif()
  message(STATUS "dcrnn --split vertex --mode ${mode} trains")
endforeach()
expect_failure("train: stale embeddings do not take dcrnn yet: its backward walk crosses ranks as partial sums"
               train --model dcrnn --data chickenpox --stale-embeddings adaptive --replicas 2)
expect_failure("train: stale embeddings do not take dysat yet: its split exchanges X_t for the attention layer"
               train --model dysat --data chickenpox --stale-embeddings adaptive --replicas 2)
expect_failure("train: --incremental needs --impl opt" train --model tgcn --data chickenpox --incremental)
# --minibatch, --fanout: ReInc's sampled mini-batches (ref/minibatch.h)
expect_failure("option --minibatch: \"0\", expected a whole number in 1..2147483647" train --model tgcn --data chickenpox
               --minibatch 0)
expect_failure("option --fanout: \"25,0\", expected 1 to 4 whole numbers >= 1 separated by commas, one per hop" train
               --model tgcn --data chickenpox --minibatch 100 --fanout 25,0)
expect_failure("option --fanout: \"25,\", expected" train --model tgcn --data chickenpox --minibatch 100 --fanout 25,)
expect_failure("option --fanout: \"1,2,3,4,5\", expected" train --model tgcn --data chickenpox --minibatch 100
               --fanout 1,2,3,4,5)
expect_failure("train: --fanout configures --minibatch: add it" train --model tgcn --data chickenpox --fanout 25,10)
expect_failure("train: --minibatch applies to tgcn" train --model tgn --data wikipedia --minibatch 100)
expect_failure("train: --minibatch trains with its own epochs (sampled graphs, loss over the targets): drop --split vertex"
               train --model tgcn --data chickenpox --impl opt --minibatch 100 --split vertex --partition hash)
expect_failure("train: --minibatch trains with its own epochs (sampled graphs, loss over the targets): drop --task link"
               train --model tgcn --data chickenpox --minibatch 100 --task link)
expect_failure("train: --minibatch trains with its own epochs (sampled graphs, loss over the targets): drop --schedule"
               train --model tgcn --data chickenpox --impl opt --minibatch 100 --schedule greedy)
expect_failure("train: --incremental needs --impl opt" train --model gconvgru --data chickenpox --incremental)
expect_failure("train: --cache configures --incremental: add it" train --model tgcn --data chickenpox --impl opt --cache 0.5)
expect_failure("option --cache: \"2\", expected a number in [0, 1]" train --model tgcn --data chickenpox --impl opt
               --incremental --cache 2)
expect_failure("expected reinc or lru" train --model tgcn --data chickenpox --impl opt --incremental --cache-policy lfu)
expect_failure("degrees=2, expected 0 or 1" info powerlaw:nodes=10,degrees=2)
expect_failure("expected allreduce or average" train --model tgcn --data chickenpox --sync gossip)
expect_failure("train: --every configures --sync average: add it" train --model tgcn --data chickenpox --every 4)
expect_failure("expected a whole number" train --model tgcn --data chickenpox --sync average --every 0)
expect_failure("expected 0 or 1 (Sven bounds staleness to one step)" train --model tgcn --data chickenpox --staleness 2)
expect_failure("train: --staleness needs --sync allreduce" train --model tgcn --data chickenpox --sync average
               --staleness 1)
expect_failure("expected adam or sgd" train --model tgcn --data chickenpox --optimizer adamw)
expect_failure("train: --replicas needs --impl ref" train --model tgcn --data chickenpox --impl opt --sync average --replicas 2)
expect_failure("--sync average or --stale-embeddings simulate: add one" train --model tgcn --data chickenpox --replicas 2)
expect_failure("option --stale-embeddings: \"sign\", expected off, zero, static:C (C a fraction of D_r in [0, 1]), adaptive or adaptive-printed"
               train --model gconvgru --data chickenpox --stale-embeddings sign)
expect_failure("option --stale-embeddings: \"static:2\", expected off, zero, static:C (C a fraction of D_r in [0, 1])"
               train --model gconvgru --data chickenpox --stale-embeddings static:2)
expect_failure("use --split vertex --mode exchange (or --impl ref" train --model gconvgru --data chickenpox --impl opt
               --stale-embeddings adaptive)
expect_failure("stale embeddings change what the exchange mode sends" train --model gconvgru --data chickenpox
               --impl opt --split vertex --partition hash --mode cache --stale-embeddings adaptive)
expect_failure("keeps caches a checkpoint does not hold" train --model gconvgru --data chickenpox --impl opt
               --split vertex --partition hash --stale-embeddings zero --load none.ckpt)
expect_failure("choose one kind of staleness" train --model gconvgru --data chickenpox --stale-embeddings zero
               --sync average)
expect_failure("train: --straggler needs --impl opt" train --model tgcn --data chickenpox --straggler 1:5)
expect_failure("expected RANK:MS or RANK:MS:P" train --model tgcn --data chickenpox --impl opt --straggler 1:abc)
expect_failure("rank 5, but 1 rank(s) run" train --model tgcn --data chickenpox --impl opt --straggler 5:100)
expect_failure("save from a synchronous run" train --model tgcn --data chickenpox --sync average --replicas 2
               --save ${WORK}/never)
expect_failure("option --model: \"gnn\", expected tgcn, gconvgru, gclstm, evolvegcn, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn, cdgcn, gatlstm, dysat, tgn, jodie or apan" train --model gnn
               --data wikipedia)
expect_failure("is a snapshot sequence; model tgn needs an event stream" train --model tgn --data chickenpox)
expect_failure("too few to split 70/15/15" train --model jodie --data events:nodes=5,events=3)
expect_failure("shape 20 x 4; expected 59835 x F" train --model tgn --data collegemsg
               --edge-features ${SOURCE_DIR}/verify/golden/loaders/chickenpox_features_last.npy)
expect_failure("train: --hidden applies to tgcn, gconvgru, gclstm, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn, cdgcn, gatlstm and dysat, not jodie" train --model jodie
               --data collegemsg --hidden 8)
expect_failure("expected all or destinations" train --model tgn --data collegemsg --negatives items)

# twofold partition (chapter 06): bad input, then a split with its metrics and a saved owner array.
expect_failure("option --method: \"random\", expected hash, pts, pss, pss-ts, metis, dynahb, dgc, dgc-st, reflexbicut or interval"
               partition --data chickenpox --ranks 2 --method random)
expect_failure("expected a whole number in 1.." partition --data chickenpox --ranks 0 --method hash)
expect_failure("cannot split 20 vertices into 64 parts" partition --data chickenpox --ranks 64 --method metis)
expect_failure("places an event model's memory" partition --data chickenpox --ranks 2 --method reflexbicut)
# DCRNN's cache closes over in- and out-edges (its backward walk reads out-neighbours)
execute_process(COMMAND ${TWOFOLD} partition --data chickenpox --ranks 2 --method hash --model dcrnn
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
if(NOT status EQUAL 0 OR NOT out MATCHES "cache mode: depth [0-9]+ \\(in- and out-edges of all snapshots\\)")
  message(FATAL_ERROR "twofold partition --model dcrnn: status ${status}\n${out}${error}")
endif()
expect_failure("is an event stream (use reflexbicut" partition --data collegemsg --ranks 2 --method dynahb)
expect_failure("--save /nonexistent/x.npy: the directory /nonexistent does not exist" partition --data chickenpox --ranks 2 --method hash --save /nonexistent/x.npy)
expect_failure("--data, --ranks and --method are required" partition --data chickenpox --method hash)
expect_failure("cannot split 20 vertices into 21 parts" partition --data chickenpox --ranks 21 --method dgc)
expect_failure("option --model: \"jodie\", expected tgcn, gconvgru, gclstm, evolvegcn, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn, cdgcn, gatlstm or dysat" partition --data chickenpox
               --ranks 2 --method dgc --model jodie)

# twofold train --split vertex (chapter 06): what it needs and what it refuses.
expect_failure("train: --split vertex needs --impl opt" train --model tgcn --data chickenpox --split vertex --partition hash)
expect_failure("train: --mode configures --split vertex: add it" train --model tgcn --data chickenpox --impl opt --mode cache)
expect_failure("needs --partition" train --model tgcn --data chickenpox --impl opt --split vertex)
expect_failure("--split window --blocks" train --model tgcn --data chickenpox --impl opt --split vertex --partition pss)
expect_failure("no hook between steps" train --model tgcn --data chickenpox --impl opt --split vertex --partition dgc-st)
expect_failure("separable from the recurrence" train --model gclstm --data chickenpox --impl opt --split vertex
               --partition pss-ts)
expect_failure("drop --blocks" train --model tgcn --data chickenpox --impl opt --split vertex --partition hash --blocks)
expect_failure("drop --incremental" train --model tgcn --data chickenpox --impl opt --split vertex --partition hash
               --incremental)
expect_failure("expected window or vertex" train --model tgcn --data chickenpox --impl opt --split diagonal)
expect_failure("expected cache or exchange" train --model tgcn --data chickenpox --impl opt --split vertex
               --partition hash --mode ram)
expect_failure("drop --device cuda" train --model tgcn --data chickenpox --impl opt --split vertex --partition hash
               --device cuda)
expect_failure("takes synchronous Adam steps" train --model tgcn --data chickenpox --impl opt --split vertex
               --partition hash --schedule greedy)
expect_failure("is an event stream; model tgcn needs snapshots" train --model tgcn --data collegemsg --impl opt
               --split vertex --partition hash)

execute_process(COMMAND ${TWOFOLD} info --help RESULT_VARIABLE status OUTPUT_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "usage: twofold info")
  message(FATAL_ERROR "twofold info --help: status ${status}, output:\n${out}")
endif()
execute_process(COMMAND ${TWOFOLD} info chickenpox RESULT_VARIABLE status OUTPUT_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "vertices +20\n" OR NOT out MATCHES "snapshots +517\n")
  message(FATAL_ERROR "twofold info chickenpox: status ${status}, output:\n${out}")
endif()
message(STATUS "twofold info chickenpox:\n${out}")

# Train, save, resume, dump: a resumed run continues from the saved epoch and ends where an
# uninterrupted one does (the checkpoint test in test_train.c checks the bits; here the CLI).
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(train_args train --model gconvgru --data pedalme --hidden 4 --window 4 --train-ratio 0.5)
execute_process(COMMAND ${TWOFOLD} ${train_args} --epochs 4 RESULT_VARIABLE status OUTPUT_VARIABLE straight)
execute_process(COMMAND ${TWOFOLD} ${train_args} --epochs 2 --save ${WORK}/checkpoint RESULT_VARIABLE status1)
execute_process(COMMAND ${TWOFOLD} ${train_args} --epochs 4 --load ${WORK}/checkpoint --dump-outputs ${WORK}/outputs
                RESULT_VARIABLE status2 OUTPUT_VARIABLE resumed)
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR NOT status2 EQUAL 0)
  message(FATAL_ERROR "train/save/load failed: ${status} ${status1} ${status2}\n${straight}\n${resumed}")
endif()
string(REGEX MATCH "final test MSE [0-9.]+" straight_final "${straight}")
string(REGEX MATCH "final test MSE [0-9.]+" resumed_final "${resumed}")
if(NOT resumed MATCHES "resuming after epoch 2" OR NOT straight_final STREQUAL resumed_final
   OR NOT EXISTS ${WORK}/outputs/predictions.npy OR NOT EXISTS ${WORK}/checkpoint/recurrent.conv_x_z.lins.0.weight.npy)
  message(FATAL_ERROR "resume differs or files missing:\n${straight}\n---\n${resumed}")
endif()
message(STATUS "uninterrupted: ${straight_final}; resumed after epoch 2: ${resumed_final}")
# --epochs is the total to reach: a checkpoint already there trains nothing, and says so.
execute_process(COMMAND ${TWOFOLD} ${train_args} --epochs 2 --load ${WORK}/checkpoint
                RESULT_VARIABLE status3 OUTPUT_VARIABLE reached)
if(NOT status3 EQUAL 0 OR NOT reached MATCHES "no epoch to train" OR reached MATCHES "epoch +3")
  message(FATAL_ERROR "--epochs 2 --load of an epoch-2 checkpoint (${status3}):\n${reached}")
endif()
string(REGEX MATCH "note: [^\n]*" reached_note "${reached}")
message(STATUS "${reached_note}")
# ... and --epochs 0 without --load (the parameters of a fresh model) has no checkpoint to speak of.
execute_process(COMMAND ${TWOFOLD} ${train_args} --epochs 0 RESULT_VARIABLE status4 OUTPUT_VARIABLE fresh)
if(NOT status4 EQUAL 0 OR fresh MATCHES "checkpoint")
  message(FATAL_ERROR "--epochs 0 without --load (${status4}):\n${fresh}")
endif()

# --minibatch resumes too: an epoch's targets and sampled graphs are drawn from keys of the seed,
# the epoch and the mini-batch (ref/minibatch.h), and the served twin's cache and engine live for
# one mini-batch, so nothing but the parameters, Adam and the epoch carries over: 3 epochs straight
# equal 1 + save + load + 2, on the reference and on the twin serving the inputs. The checkpoint
# records N and the fan-outs: a resume with another sample, or on whole graphs, is refused.
set(mb_args train --model gconvlstm --data powerlaw:nodes=60,edges=300,snapshots=8,churn=0.05,seed=3 --hidden 4
            --window 3 --stride 1)
set(mb_sample --minibatch 25 --fanout 3,2)
foreach(impl ref opt)
  set(mb_impl --impl ${impl})
  if(impl STREQUAL "opt")
    list(APPEND mb_impl --incremental)
  endif()
  execute_process(COMMAND ${TWOFOLD} ${mb_args} ${mb_sample} ${mb_impl} --epochs 3 RESULT_VARIABLE status
                  OUTPUT_VARIABLE straight ERROR_VARIABLE error)
  execute_process(COMMAND ${TWOFOLD} ${mb_args} ${mb_sample} ${mb_impl} --epochs 1 --save ${WORK}/mb_${impl}
                  RESULT_VARIABLE status1 ERROR_VARIABLE error1)
  execute_process(COMMAND ${TWOFOLD} ${mb_args} ${mb_sample} ${mb_impl} --epochs 3 --load ${WORK}/mb_${impl}
                  RESULT_VARIABLE status2 OUTPUT_VARIABLE resumed ERROR_VARIABLE error2)
  if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR NOT status2 EQUAL 0)
    message(FATAL_ERROR "--minibatch ${impl} train/save/load failed: ${status} ${status1} ${status2}\n${straight}"
                        "${error}${error1}\n${resumed}${error2}")
  endif()
  string(REGEX MATCH "epoch +3  train loss [0-9.]+  test MSE [0-9.]+" straight_epoch "${straight}")
  string(REGEX MATCH "epoch +3  train loss [0-9.]+  test MSE [0-9.]+" resumed_epoch "${resumed}")
  string(REGEX MATCH "final test MSE [0-9.]+" straight_final "${straight}")
  string(REGEX MATCH "final test MSE [0-9.]+" resumed_final "${resumed}")
  if(NOT resumed MATCHES "resuming after epoch 1" OR NOT resumed MATCHES "mini-batches: 3 per epoch"
     OR straight_final STREQUAL "" OR straight_epoch STREQUAL "" OR NOT straight_final STREQUAL resumed_final
     OR NOT straight_epoch STREQUAL resumed_epoch)
    message(FATAL_ERROR "--minibatch ${impl}: the resumed run differs:\n${straight}\n---\n${resumed}")
  endif()
  message(STATUS "--minibatch ${impl} uninterrupted: ${straight_epoch}; resumed after epoch 1: ${resumed_epoch}")
endforeach()
expect_failure("saved with fan-out hop 2 2; this run has fan-out hop 2 1" ${mb_args} --minibatch 25 --fanout 3,1
               --epochs 3 --load ${WORK}/mb_ref)
expect_failure("saved with mini-batch size 25, fan-out hop 1 3, fan-out hop 2 2; this run has mini-batch size 0, fan-out hop 1 0, fan-out hop 2 0"
               ${mb_args} --epochs 3 --load ${WORK}/mb_ref)
execute_process(COMMAND ${TWOFOLD} ${mb_args} --epochs 1 --save ${WORK}/mb_whole RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "whole-graph train --save for the --minibatch refusal failed: ${status}")
endif()
expect_failure("saved with mini-batch size 0, fan-out hop 1 0, fan-out hop 2 0; this run has mini-batch size 25"
               ${mb_args} ${mb_sample} --epochs 3 --load ${WORK}/mb_whole)

# The same for an event model: 3 epochs straight equal 1 + save + load + 2, and loading a
# finished checkpoint with nothing left to train evaluates it.
set(event_args train --model tgn --data events:nodes=40,events=400 --memory-dim 4 --time-dim 4 --embedding-dim 4
               --batch 50)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 RESULT_VARIABLE status OUTPUT_VARIABLE straight)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 1 --save ${WORK}/event_checkpoint RESULT_VARIABLE status1)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --load ${WORK}/event_checkpoint --save ${WORK}/event_done
                RESULT_VARIABLE status2 OUTPUT_VARIABLE resumed)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --load ${WORK}/event_done
                RESULT_VARIABLE status3 OUTPUT_VARIABLE evaluated)
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR NOT status2 EQUAL 0 OR NOT status3 EQUAL 0)
  message(FATAL_ERROR "event train/save/load failed: ${status} ${status1} ${status2} ${status3}\n${straight}\n${resumed}")
endif()
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" straight_final "${straight}")
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" resumed_final "${resumed}")
if(NOT resumed MATCHES "resuming after epoch 1" OR straight_final STREQUAL "" OR NOT straight_final STREQUAL resumed_final
   OR NOT evaluated MATCHES "evaluation after 3 epochs" OR NOT EXISTS ${WORK}/event_done/edge_predictor.out_fc.weight.npy)
  message(FATAL_ERROR "event resume differs or files missing:\n${straight}\n---\n${resumed}\n---\n${evaluated}")
endif()
message(STATUS "event model uninterrupted: ${straight_final}; resumed after epoch 1: ${resumed_final}")

# The distributed twin of event training (chapter 04) as one process: the same final line as the
# reference, bit for bit (one rank sums every gradient in the reference's order); and its options.
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --impl opt --dispatch sven --placement range
                RESULT_VARIABLE status OUTPUT_VARIABLE distributed)
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" distributed_final "${distributed}")
if(NOT status EQUAL 0 OR NOT distributed_final STREQUAL straight_final OR NOT distributed MATCHES "sven on 1 rank")
  message(FATAL_ERROR "train --impl opt on one rank differs from the reference:\n${straight}\n---\n${distributed}")
endif()
message(STATUS "event model --impl opt on 1 rank: ${distributed_final}")
# A batch larger than the whole stream is one batch per split, as in the reference: the twin must
# size its buffers by the events that exist, not by the option (it asked for 12 GiB here once).
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 1 --batch 100000000 RESULT_VARIABLE status
                OUTPUT_VARIABLE whole_ref)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 1 --batch 100000000 --impl opt RESULT_VARIABLE status1
                OUTPUT_VARIABLE whole_opt ERROR_VARIABLE whole_error)
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" whole_ref_final "${whole_ref}")
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" whole_opt_final "${whole_opt}")
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR whole_ref_final STREQUAL "" OR NOT whole_opt_final STREQUAL whole_ref_final)
  message(FATAL_ERROR "--batch beyond the stream: ref and --impl opt differ:\n${whole_ref}\n---\n${whole_opt}${whole_error}")
endif()
message(STATUS "--batch 100000000 on 400 events, --impl opt: ${whole_opt_final} (the reference's)")
# Valid JSON near float's range overflows training (Adam's second moment passes FLT_MAX while the
# loss, summed in double, stays finite): the run stops at that epoch with one line and leaves an
# earlier checkpoint in the --save directory as it was (it once saved a state its --load refused).
set(huge_rows "")
foreach(t RANGE 11)
  list(APPEND huge_rows "[3e38, -3e38, 3e38]")
endforeach()
list(JOIN huge_rows ", " huge_rows)
file(WRITE "${WORK}/huge.json" "{\"edges\": [[0, 1], [1, 2], [2, 0]], \"weights\": [1, 1, 1], \"FX\": [${huge_rows}]}")
file(REMOVE_RECURSE "${WORK}/kept")
execute_process(COMMAND ${TWOFOLD} train --model tgcn --data ${WORK}/huge.json --lags 2 --epochs 0
                        --save ${WORK}/kept RESULT_VARIABLE status OUTPUT_QUIET ERROR_VARIABLE error)
if(NOT status EQUAL 0 OR NOT EXISTS "${WORK}/kept/trainer.npy")
  message(FATAL_ERROR "the untrained checkpoint of huge.json was not saved (${status}): ${error}")
endif()
file(SHA256 "${WORK}/kept/trainer.npy" kept_before)
expect_failure("epoch 1: training diverged" train --model tgcn --data ${WORK}/huge.json --lags 2 --epochs 3
               --save ${WORK}/kept)
file(SHA256 "${WORK}/kept/trainer.npy" kept_after)
if(NOT kept_after STREQUAL kept_before)
  message(FATAL_ERROR "a diverged run replaced the checkpoint it was told to --save over")
endif()
message(STATUS "diverged run left ${WORK}/kept as it was")
# A value-less --impl or --device at the end of the line was read as a string (a crash once).
expect_failure("option --impl needs a value" train --model tgcn --data chickenpox --impl)
expect_failure("option --device needs a value" train --model tgcn --data chickenpox --device)
# The snapshot trainer bounds --stride and --batch by the windows that exist: a stride past the
# train part is the one window the default stride gives (it overflowed into a NaN loss once), and
# a batch of 10^12 windows is one step (it looped over every empty slot once).
set(window_args train --model tgcn --data chickenpox --epochs 2 --hidden 4)
execute_process(COMMAND ${TWOFOLD} ${window_args} RESULT_VARIABLE status OUTPUT_VARIABLE plain_run)
execute_process(COMMAND ${TWOFOLD} ${window_args} --stride 9223372036854775807 --batch 1000000000000
                RESULT_VARIABLE status1 OUTPUT_VARIABLE bounded_run ERROR_VARIABLE bounded_error)
string(REGEX MATCH "final test MSE [0-9.]+" plain_final "${plain_run}")
string(REGEX MATCH "final test MSE [0-9.]+" bounded_final "${bounded_run}")
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR plain_final STREQUAL "" OR NOT bounded_final STREQUAL plain_final)
  message(FATAL_ERROR "--stride/--batch beyond the windows changed the run:\n${plain_run}\n---\n${bounded_run}${bounded_error}")
endif()
message(STATUS "--stride 2^63-1 --batch 10^12 on chickenpox: ${bounded_final} (the default's)")
expect_failure("expected sven, naive, depcache or depcomm" ${event_args} --impl opt --dispatch spin)
expect_failure("train: --dispatch needs --impl opt" ${event_args} --dispatch sven)
# Sven's pipelining (chapter 05) as one process: prefetching gives the reference's final line bit
# for bit, and staleness 1 under --impl opt (prefetch 2) the reference's staleness-1 line.
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --impl opt --prefetch 2 RESULT_VARIABLE status
                OUTPUT_VARIABLE prefetched)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --staleness 1 RESULT_VARIABLE status1
                OUTPUT_VARIABLE delayed_ref)
execute_process(COMMAND ${TWOFOLD} ${event_args} --epochs 3 --impl opt --prefetch 2 --staleness 1
                RESULT_VARIABLE status2 OUTPUT_VARIABLE delayed_opt)
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" prefetched_final "${prefetched}")
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" delayed_ref_final "${delayed_ref}")
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" delayed_opt_final "${delayed_opt}")
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR NOT status2 EQUAL 0 OR NOT prefetched_final STREQUAL straight_final
   OR delayed_ref_final STREQUAL "" OR NOT delayed_opt_final STREQUAL delayed_ref_final
   OR NOT prefetched MATCHES "pipeline: prefetch 2, micro-batches 1, staleness 0")
  message(FATAL_ERROR "pipelined event training differs:\n${prefetched}\n---\n${delayed_ref}\n---\n${delayed_opt}")
endif()
message(STATUS "event model --prefetch 2: ${prefetched_final}; --staleness 1 ref and opt: ${delayed_opt_final}")
expect_failure("option --prefetch" ${event_args} --impl opt --prefetch 5)
expect_failure("option --staleness: \"2\", expected 0 or 1" ${event_args} --staleness 2)
expect_failure("train: --prefetch needs --impl opt" ${event_args} --prefetch 1)
expect_failure("option --micro-batches" ${event_args} --impl opt --micro-batches 9)
expect_failure("train: --micro-batches needs --impl opt --dispatch sven" ${event_args} --impl opt --dispatch naive
               --micro-batches 2)
expect_failure("train: --micro-batches needs --impl opt --dispatch sven" ${event_args} --micro-batches 2)
expect_failure("train: --placement needs --impl opt" ${event_args} --placement hash)
# APAN on the dispatch layer (its M-mail rows and neighbour deliveries; verify/test_dispatch_mpi.c holds
# it bitwise to the reference): as one process, with micro-batches, it ends where the reference does.
execute_process(COMMAND ${TWOFOLD} train --model apan --data events:nodes=40,events=400 --epochs 1
                RESULT_VARIABLE status OUTPUT_VARIABLE apan_ref)
execute_process(COMMAND ${TWOFOLD} train --model apan --data events:nodes=40,events=400 --epochs 1 --impl opt
                --micro-batches 2 RESULT_VARIABLE status1 OUTPUT_VARIABLE apan_opt)
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" apan_ref_final "${apan_ref}")
string(REGEX MATCH "final test AP [0-9.]+ AUC [0-9.]+" apan_opt_final "${apan_opt}")
if(NOT status EQUAL 0 OR NOT status1 EQUAL 0 OR apan_ref_final STREQUAL "" OR NOT apan_opt_final STREQUAL apan_ref_final)
  message(FATAL_ERROR "apan under --impl opt differs from the reference:\n${apan_ref}\n---\n${apan_opt}")
endif()
message(STATUS "apan --impl opt --micro-batches 2: ${apan_opt_final} (the reference's)")
expect_failure("train: --mails applies to apan, not tgn (TGN's and JODIE's mailboxes hold one mail)" ${event_args}
               --mails 3)
expect_failure("model apan: --memory-update vertex consumes one message per vertex" train --model apan
               --data events:nodes=40,events=400 --epochs 1 --memory-update vertex)
expect_failure("option --placement: \"diagonal\", expected range, interval, interval:G with a whole G >= 1, hash, random"
               ${event_args} --impl opt --placement diagonal)
expect_failure("option --placement: \"interval:0\", expected range, interval, interval:G with a whole G >= 1"
               ${event_args} --impl opt --placement interval:0)
expect_failure("/nonexistent.npy: cannot open" ${event_args} --impl opt --placement file:/nonexistent.npy)
expect_failure("a placement is an int64 array of shape [40]" ${event_args} --impl opt
               --placement file:${WORK}/event_checkpoint/trainer.npy)
expect_failure("option --impl: \"gpu\", expected ref or opt" ${event_args} --impl gpu)

# An outside tester's pass over the option tables (verify/ERRORS.md, "Option tables"): numbers that
# strtod takes but nobody writes, a value forgotten before the next option, empty values and
# arguments, two models: each is one line naming the option, exit 2.
set(tgcn_args train --model tgcn --data chickenpox --epochs 1)
expect_failure("option --lr: \"0x10\", expected a number in (0, 1000)" ${tgcn_args} --lr 0x10)
expect_failure("option --lr: \" 0.1\", expected a number in (0, 1000)" ${tgcn_args} --lr " 0.1")
expect_failure("option --lr: \"0x1p-4\"" ${tgcn_args} --lr 0x1p-4)
expect_failure("option --lr: \"nan\"" ${tgcn_args} --lr nan)
expect_failure("option --lr: \"inf\"" ${tgcn_args} --lr inf)
expect_failure("option --epochs: \"1e3\", expected a whole number in 0..100000000" ${tgcn_args} --epochs 1e3)
expect_failure("option --hidden: \"99999999999999999999\"" ${tgcn_args} --hidden 99999999999999999999)
expect_failure("option --impl: \"OPT\", expected ref or opt" ${tgcn_args} --impl OPT)
expect_failure("train: unknown option --epoch (see twofold train --help)" ${tgcn_args} --epoch 3)
expect_failure("option --data needs a value (--epochs that follows it is an option)" train --model tgcn --data
               --epochs 3)
expect_failure("option --model needs a value (--data that follows it is an option)" train --model --data chickenpox)
expect_failure("option --out needs a value (--data that follows it is an option)" export --out --data chickenpox)
expect_failure("option --data needs a value (it was empty)" train --model tgcn --data=)
expect_failure("option --data needs a value (it was empty)" verify train --data=)
expect_failure("option --gantt needs a value (it was empty)" schedule --ranks 2 --times 1,2 --gantt=)
expect_failure("train: --model given twice, tgcn and tgn: give one" ${tgcn_args} --model tgn)
expect_failure("train: unknown option --bogus" ${tgcn_args} --bogus --help)  # --help after a bad option: the option
expect_failure("option --memory-limit: \"0x100000\", expected a size" --memory-limit 0x100000 info --list)
expect_failure("option --memory-limit: \" 8G\", expected a size" --memory-limit " 8G" info --list)
expect_failure("option --straggler: \"0:0x10\"" ${tgcn_args} --impl opt --straggler 0:0x10)
expect_failure("option --stale-embeddings: \"static:0x1\"" ${tgcn_args} --stale-embeddings static:0x1)
expect_failure("option --cost: \"linear:nan,1,1\"" ${tgcn_args} --impl opt --schedule lpt --cost linear:nan,1,1)
# Options of another model are refused, not taken and ignored: JODIE has no attention, EvolveGCN-O
# no state width of its own; the ILP's limits need the ILP.
set(jodie_args train --model jodie --data events:nodes=40,events=400 --memory-dim 4 --time-dim 4 --epochs 1)
expect_failure("train: --heads applies to tgn and apan, not jodie (JODIE has no attention" ${jodie_args} --heads 2)
# a reason about other models misled: --heads on GAT-LSTM gave JODIE's missing attention, --mails on
# T-GCN TGN's one-mail mailbox; the line ends after the models now
foreach(refusal "gatlstm;--heads;--heads applies to tgn and apan, not gatlstm" "tgcn;--mails;--mails applies to apan, not tgcn")
  list(GET refusal 0 model)
  list(GET refusal 1 option)
  list(GET refusal 2 expected)
  execute_process(COMMAND ${TWOFOLD} train --model ${model} --data chickenpox ${option} 2 RESULT_VARIABLE status
                  ERROR_VARIABLE error)
  string(STRIP "${error}" error)
  if(NOT status EQUAL 2 OR NOT error MATCHES "${expected}$")
    message(FATAL_ERROR "${model} ${option}: exit ${status}, expected 2 and a line ending '${expected}', got: ${error}")
  endif()
  message(STATUS "exit 2 as expected: ${error}")
endforeach()
expect_failure("train: --neighbours applies to tgn and apan, not jodie" ${jodie_args} --neighbours 3)
expect_failure("train: --embedding-dim applies to tgn, not jodie" ${jodie_args} --embedding-dim 8)
expect_failure("train: --hidden applies to tgcn, gconvgru, gclstm, tgcn2, wdgcn, gconvlstm, mpnnlstm, gcrnm1, dcrnn, cdgcn, gatlstm and dysat, not evolvegcn" train --model evolvegcn
               --data chickenpox --hidden 7)
expect_failure("train: --ilp-seconds configures --schedule ilp: add it" ${tgcn_args} --impl opt --schedule lpt
               --ilp-seconds 3)
# The other subcommands' tables: an option for the other kind of data or for what was not asked is
# refused, and a bad list is refused before the data is loaded and timed (/nonexistent proves it).
expect_failure("option --times: \"0x10,2\", expected a positive number at position 1" schedule --ranks 2 --times 0x10,2)
expect_failure("option --sim-ranks: \"x\", expected rank counts" schedule --ranks 2 --data /nonexistent --simulate
               --sim-ranks x)
expect_failure("schedule: --hidden configures --data: add it" schedule --ranks 2 --times 1,2 --hidden 8)
expect_failure("schedule: --ilp-seconds and --ilp-gap configure --method ilp (or all); --method lpt runs no ILP"
               schedule --ranks 2 --times 1,2 --method lpt --ilp-gap 0.5)
expect_failure("partition: --batch applies to event streams; chickenpox is a snapshot sequence" partition
               --data chickenpox --ranks 2 --method hash --batch 5)
expect_failure("partition: --layers applies to snapshot sequences; collegemsg is an event stream" partition
               --data collegemsg --ranks 2 --method hash --layers 3)
expect_failure("info: --list lists the bundled datasets and takes nothing else; drop chickenpox" info --list chickenpox)
# An empty argument (an unset variable in a script) is named as one, not "unexpected argument  (see".
foreach(command info demo train)
  execute_process(COMMAND ${TWOFOLD} ${command} "" RESULT_VARIABLE status ERROR_VARIABLE error OUTPUT_QUIET)
  if(NOT status EQUAL 2 OR NOT error MATCHES "^twofold: error: ${command}: an empty argument \"\" \\(see [^\n]*\n$")
    message(FATAL_ERROR "twofold ${command} \"\": exit status ${status}, stderr: ${error}")
  endif()
  message(STATUS "exit 2 as expected: ${error}")
endforeach()

#  3. `twofold verify`: the technique table's checks on the user's data. Bad arguments exit 2;
#     a technique that does not apply is skipped, not failed; a twin spoiled on purpose
#     (TWOFOLD_BREAK_TWIN) must make the row say WRONG and the exit status 1, so the check is
#     seen to be able to fail.
expect_failure("verify: --data is required" verify incremental)
expect_failure("no technique called \"reinc\"" verify reinc --data chickenpox)
expect_failure("unknown option --speed" verify --speed --data chickenpox)
expect_failure("expected a whole number" verify --ranks many --data chickenpox)
expect_failure("No such file" verify incremental --data /nonexistent/graph.json)
expect_failure("this run has 1 rank(s)" verify incremental --data chickenpox --ranks 2)
expect_failure("demo: no technique called \"reinc\"" demo reinc)  # demo takes names as verify does
expect_failure("demo: unknown option --speed" demo --speed)

# expect_verify(EXIT_STATUS MUST_CONTAIN ARG...): run twofold verify, check the exit status and
# that the output contains a text.
function(expect_verify expected_status must_contain)
  execute_process(COMMAND ${TWOFOLD} verify ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
  message(STATUS "twofold verify ${ARGN} (exit ${status}):\n${out}${error}")
  if(NOT status EQUAL expected_status)
    message(FATAL_ERROR "twofold verify ${ARGN}: exit status ${status}, expected ${expected_status}")
  endif()
  string(FIND "${out}" "${must_contain}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "twofold verify ${ARGN}: the output lacks '${must_contain}'")
  endif()
endfunction()

expect_verify(0 "#wrong 0" incremental fusion --data pedalme)
expect_verify(0 "needs a snapshot sequence; bitcoin_alpha is an event stream" incremental --data bitcoin_alpha)
expect_verify(0 "#wrong 0" partition --data pedalme)  # chapter 06 on one rank: every partitioner, both modes
set(ENV{TWOFOLD_BREAK_TWIN} incremental)
expect_verify(1 "WRONG: not equal to the reference" incremental --data pedalme)
set(ENV{TWOFOLD_BREAK_TWIN} partition)
expect_verify(1 "#wrong 11" partition --data pedalme)
set(ENV{TWOFOLD_BREAK_TWIN} all)
expect_verify(1 "#wrong 4" fusion --data pedalme)  # temporal: its four cells; spatial: pedalme has fewer vertices than 16 chunks
unset(ENV{TWOFOLD_BREAK_TWIN})

# twofold partition: the metrics, and --save writes int64 [20] (a 128-byte .npy header + 20 x 8 bytes).
execute_process(COMMAND ${TWOFOLD} partition --data chickenpox --ranks 2 --method dynahb --save ${WORK}/owners.npy
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE error)
file(SIZE ${WORK}/owners.npy saved_size)
file(READ ${WORK}/owners.npy saved_header OFFSET 10 LIMIT 100)
if(NOT status EQUAL 0 OR NOT out MATCHES "edge cut: " OR NOT out MATCHES "imbalance: DynaHB load"
   OR NOT saved_size EQUAL 288 OR NOT saved_header MATCHES "'descr': '<i8'.*'shape': \\(20,\\)")
  message(FATAL_ERROR "twofold partition: status ${status}, saved ${saved_size} bytes, output:\n${out}${error}")
endif()
message(STATUS "twofold partition chickenpox dynahb:\n${out}")
# twofold schedule and train --schedule (chapter 07): bad input is one line and exit 2.
expect_failure("--data or --times is required" schedule --ranks 2)
expect_failure("exclude each other" schedule --data chickenpox --times 1,2 --ranks 2)
expect_failure("schedule: --ranks is required" schedule --times 1,2)
expect_failure("expected a positive number at position 2" schedule --times 1,-2 --ranks 2)
expect_failure("expected a whole number in 1..1048576" schedule --times 1,2 --ranks 0)
expect_failure("expected roundrobin, lpt, greedy, ilp or all" schedule --times 1,2 --ranks 2 --method foo)
expect_failure("expected a whole number in 1..64" schedule --times 1,2 --ranks 2 --per-rank 0)
expect_failure("use --method ilp" schedule --times 1,2 --ranks 2 --method greedy --per-rank 3)
expect_failure("expected measured or linear:A,B,C" schedule --data chickenpox --ranks 2 --cost linear:1,x,2)
expect_failure("--times gives them" schedule --times 1,2 --ranks 2 --cost measured)
expect_failure("--run trains on data: give --data" schedule --times 1,2 --ranks 2 --run)
expect_failure("this run has 1 rank(s): start it as mpiexec -n 2" schedule --data chickenpox --ranks 2 --run)
expect_failure("expected a number in [0.001, 86400" schedule --times 1,2 --ranks 2 --ilp-seconds 0)
expect_failure("expected a number in [0, 1)" schedule --times 1,2 --ranks 2 --ilp-gap 1)
expect_failure("--method lpt decides its own" schedule --times 1,2 --ranks 2 --method lpt --batch 2)
expect_failure("shorter than one window" schedule --data chickenpox --ranks 2 --simulate --snapshots 2)
expect_failure("needs a snapshot sequence" schedule --data wikipedia --ranks 2 --cost linear:1,1,1)
expect_failure("schedule: --snapshots configures --simulate: add it" schedule --data chickenpox --ranks 2 --snapshots 100)
expect_failure("train: --schedule needs --impl opt" train --model tgcn --data chickenpox
               --schedule greedy)
expect_failure("expected roundrobin, lpt, greedy or ilp" train --model tgcn --data chickenpox --impl opt
               --schedule best)
expect_failure("train: --per-rank configures --schedule: add it" train --model tgcn --data chickenpox --impl opt --per-rank 3)
expect_failure("use --schedule ilp" train --model tgcn --data chickenpox --impl opt --schedule greedy --per-rank 3)
expect_failure("drop --schedule" train --model tgcn --data chickenpox --impl opt --incremental --schedule lpt)
# The chapter's worked example: greedy 19, the ILP the optimum 16 = sum t / G.
execute_process(COMMAND ${TWOFOLD} schedule --times 8,7,7,5,4,1 --ranks 2 RESULT_VARIABLE status OUTPUT_VARIABLE out)
if(NOT status EQUAL 0 OR NOT out MATCHES "greedy +3 +19 +19" OR NOT out MATCHES "ilp +2 +16 +16 +\\+0.00 %")
  message(FATAL_ERROR "twofold schedule --times 8,7,7,5,4,1 --ranks 2: status ${status}, output:\n${out}")
endif()
message(STATUS "twofold schedule, the worked example:\n${out}")
expect_verify(0 "#wrong 0" schedule --data pedalme)
# twofold train --batching hybrid (DynaHB's hybrid batches)
expect_failure("expected snapshot or hybrid" train --model tgcn --data chickenpox --batching other)
expect_failure("use --model tgcn or wdgcn, not gclstm" train --model gclstm --data chickenpox --batching hybrid)
expect_failure("drop one of --schedule and --batching hybrid" train --model tgcn --data chickenpox --impl opt
               --schedule lpt --batching hybrid)
expect_failure("train: --adjust configures --batching hybrid: add it" train --model tgcn --data chickenpox --adjust dqn)
expect_failure("expected fixed or dqn" train --model tgcn --data chickenpox --batching hybrid --adjust best)
expect_failure("train: --adjust-every configures --adjust dqn: add it" train --model tgcn --data chickenpox --batching hybrid --adjust-every 5)
expect_failure("expected a whole number in 1..2147483647" train --model tgcn --data chickenpox --batching hybrid
               --targets 0)
expect_failure("expected 10..20" train --model tgcn --data chickenpox --batching hybrid --targets 21)
expect_failure("expected 10..20" train --model tgcn --data chickenpox --batching hybrid --targets 9)
expect_failure("expected a whole number in 0..9" train --model tgcn --data chickenpox --batching hybrid --reservoir -1)
expect_failure("at most (1 with --adjust fixed)" train --model tgcn --data chickenpox --batching hybrid --reservoir 2)
expect_failure("drop --incremental" train --model tgcn --data chickenpox --impl opt --incremental --batching hybrid)
expect_verify(0 "#wrong 0" schedule_hybrid --data pedalme)
expect_failure("take synchronous steps" train --model tgcn --data chickenpox --impl opt --schedule lpt --sync average)
