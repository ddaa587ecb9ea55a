# Chapter 05a's figure from the committed CSV file:
#     gnuplot -e "dir='bench/results/05-async'" bench/async.gp
# 05a-stale-updates-straggler.svg (bench/async.sh's straggler.csv): training loss against wall-clock
#   time per mode, under jitter spread over the ranks (left) and under one persistent straggler (right).
# (Chapter 05b's DGC figures: bench/async_dgc.gp.)
if (!exists("dir")) dir = "bench/results/05-async"
if (!exists("chapters")) chapters = "chapters"
if (!exists("format")) format = "svg"   # -e "format='png'" for a quick look (pngcairo, .png files)
extension = format eq "svg" ? ".svg" : ".png"
set datafile separator ","
set grid
set key top right font ",9"

# ---- straggler --------------------------------------------------------------------------------
if (format eq "svg") { set terminal svg size 1100,400 font "sans,11" background rgb "white" noenhanced } else { set terminal pngcairo size 1100,400 font "sans,10" noenhanced }
set output chapters."/05a-stale-updates-straggler".extension
modes = "sync stale-1 average-1 average-4 average-16"
colors = "#000000 #d95f02 #7570b3 #e7298a #1b9e77"
set multiplot layout 1,2
set xlabel "wall-clock seconds (cumulative epochs)"
set ylabel "training loss"
set title "jitter: each rank sleeps MS in a step with P = 0.25"
plot for [i=1:5] dir."/straggler.csv" using \
     ((strcol(1) eq word(modes, i) && strstrt(strcol(2), "each") > 0) ? $6 : 1/0):7 \
     with linespoints pt 7 ps 0.8 lc rgb word(colors, i) title word(modes, i)
set title "one persistent straggler: rank 1 sleeps MS in every step"
plot for [i=1:5] dir."/straggler.csv" using \
     ((strcol(1) eq word(modes, i) && strstrt(strcol(2), "each") == 0 && strcol(2) ne "none") ? $6 : 1/0):7 \
     with linespoints pt 7 ps 0.8 lc rgb word(colors, i) title word(modes, i)
unset multiplot
