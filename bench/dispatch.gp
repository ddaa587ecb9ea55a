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
pick(data, model, column) = (strcol(1) eq data && strcol(2) eq model) ? column(column) : 1/0
set title "eta_1, dispatch (1 - unique / occurrences)"
plot for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "tgn", 7)) \
         with linespoints title d." tgn", \
     for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "jodie", 7)) \
         with linespoints dashtype 2 title d." jodie"
set title "eta_2, aggregation (1 - written / positive endpoints)"
plot for [d in "wikipedia collegemsg enron bitcoin_otc"] dir."/eta.csv" using 3:(pick(d, "tgn", 10)) \
         with linespoints title d
unset multiplot

set output "chapters/04-dispatch-bytes.svg"
set multiplot layout 1,2
unset yrange
set logscale xy
set xlabel "ranks"
set ylabel "memory bytes sent per training epoch"
set xtics (2, 4, 8, 16, 32, 64)
set key top left font ",9"
row(model, mode, column) = (strcol(1) eq "wikipedia" && strcol(2) eq model && strcol(3) eq "hash" && \
                            strcol(5) eq mode) ? column(column) : 1/0
do for [m in "tgn jodie"] {
  set title "Wikipedia, ".m.", hash placement, batch 600, widths 8"
  plot for [mode in "naive depcomm sven depcache"] dir."/bytes.csv" using 4:(row(m, mode, 26)) \
           with linespoints lw 2 title mode, \
       dir."/bytes.csv" using 4:(row(m, "sven", 27)) with lines lw 1 lc rgb "black" title "lower bound", \
       for [mode in "depcomm sven depcache"] dir."/bytes.csv" using 4:(row(m, mode, 28)) \
           with lines dashtype 2 title mode." (App. C)"
}
unset multiplot
