# Chapter 04's figures from bench/dispatch.sh's CSV files:
#     gnuplot -e "dir='bench/results/04-dispatch'" bench/dispatch.gp
# 04-dispatch-eta.svg: the redundancy of one training epoch against the batch size, per dataset:
#   eta_1 (dispatch) of TGN and JODIE, eta_2 (aggregation, the same for both).
# 04-dispatch-bytes.svg: memory bytes sent per training epoch on Wikipedia (hash placement)
#   against the rank count, per mode, with the lower bound and the paper's App. C formulas
#   (dashed) evaluated with each run's own counts; TGN left, JODIE right, log-log.
if (!exists("dir")) dir = "bench/results/04-dispatch"
set datafile separator ","
set terminal svg size 1100,420 font "sans,11" background rgb "white"

set output "chapters/04-dispatch-eta.svg"
set multiplot layout 1,2
set xlabel "batch size (events)"
set logscale x
set xtics (200, 600, 1200, 2000)
set grid
set yrange [0:1]
set key bottom right font ",9"
pick(data, model, c) = (strcol(1) eq data && strcol(2) eq model) ? column(c) : 1/0
set title "eta_1, dispatch (1 - unique / occurrences)"
plot for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "tgn", 7)) \
         with linespoints title d." tgn" noenhanced, \
     for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "jodie", 7)) \
         with linespoints dashtype 2 title d." jodie" noenhanced
set title "eta_2, aggregation (1 - written / positive endpoints)"
plot for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "tgn", 10)) \
         with linespoints title d noenhanced
unset multiplot

set output "chapters/04-dispatch-bytes.svg"
set multiplot layout 1,2
unset yrange
set logscale xy
set xlabel "ranks"
set ylabel "memory bytes sent per training epoch"
set xtics (2, 4, 8, 16, 32, 64)
set key top left font ",9"
# One series = the rows of one model and mode (hash placement) picked out by awk: in the file
# they are far apart (other modes and placements in between), and gnuplot would break a line at
# every row it skips.
series(model, mode) = sprintf("< awk -F, '$1 == \"wikipedia\" && $2 == \"%s\" && $3 == \"hash\" && $5 == \"%s\"' %s/bytes.csv", \
                              model, mode, dir)
do for [m in "tgn jodie"] {
  set title "Wikipedia, ".m.", hash placement, batch 600, widths 8"
  plot for [mode in "naive depcomm sven depcache"] series(m, mode) using 4:26 with linespoints lw 2 title mode, \
       series(m, "sven") using 4:27 with lines lw 1 lc rgb "black" title "lower bound", \
       for [mode in "depcomm sven depcache"] series(m, mode) using 4:28 with lines dashtype 2 title mode." (App. C)"
}
unset multiplot
