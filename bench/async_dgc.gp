# Chapter 05b's figures from the committed CSV files:
#     gnuplot -e "dir='bench/results/05-async'" bench/async_dgc.gp
# 05b-stale-embeddings-dgc.svg (build/bench/bench async's dgc.csv): exchange bytes saved by each theta
#   schedule against the rank count (GConvGRU, left), and the test MSE's change against the bytes
#   saved, every model and R (right).
# 05b-stale-embeddings-theta.svg (dgc_theta.csv): theta_r / D_r per epoch for both signs of Eq. 6, from
#   the losses of GConvGRU's adaptive run on 4 ranks.
if (!exists("dir")) dir = "bench/results/05-async"
if (!exists("chapters")) chapters = "chapters"
if (!exists("format")) format = "svg"   # -e "format='png'" for a quick look (pngcairo, .png files)
extension = format eq "svg" ? ".svg" : ".png"
set datafile separator ","
set grid
set key top right font ",9"

# ---- DGC bytes and accuracy -------------------------------------------------------------------
if (format eq "svg") { set terminal svg size 1100,460 font "sans,11" background rgb "white" noenhanced } else { set terminal pngcairo size 1100,460 font "sans,10" noenhanced }
set output chapters."/05b-stale-embeddings-dgc".extension
schedules = "zero static:0.3 static:0.5 static:0.7 adaptive adaptive-printed"
scolors = "#999999 #a6cee3 #1f78b4 #08306b #1b9e77 #d95f02"
set multiplot layout 1,2
set title "GConvGRU: exchange bytes saved"
set xlabel "ranks R (owner = vertex mod R)"
set ylabel "saved %"
set logscale x 2
set key below horizontal maxrows 2  # outside the plot: inside, it covered the points
# a schedule's rows are not adjacent in the file: each curve reads its own rows, in the order of R
rows(model, schedule) = sprintf("< awk -F, '$1 == \"%s\" && $3 == \"%s\"' %s/dgc.csv", model, schedule, dir)
plot for [i=1:6] rows("gconvgru", word(schedules, i)) using 2:(100 * (1 - $6 / $5)) \
     with linespoints pt 7 ps 0.8 lc rgb word(scolors, i) title word(schedules, i)
unset logscale x
set title "cost: test MSE change against bytes saved (GConvGRU, GC-LSTM; every R)"
set xlabel "saved %"
set ylabel "test MSE change against no reuse, %"
plot for [i=1:6] dir."/dgc.csv" using \
     ((strcol(1) ne "tgcn" && strcol(3) eq word(schedules, i)) ? 100 * (1 - $6 / $5) : 1/0):(100 * ($14 - $15) / $15) \
     with points pt 7 ps 0.8 lc rgb word(scolors, i) title word(schedules, i)
unset multiplot

# ---- theta ------------------------------------------------------------------------------------
if (format eq "svg") { set terminal svg size 600,380 font "sans,11" background rgb "white" noenhanced } else { set terminal pngcairo size 600,380 font "sans,10" noenhanced }
set output chapters."/05b-stale-embeddings-theta".extension
set title "theta_r / D_r from the run's own losses (GConvGRU, 4 ranks)"
set xlabel "epoch r"
set ylabel "theta_r / D_r"
set yrange [0.2:0.8]
set key inside bottom right
plot dir."/dgc_theta.csv" using ((strcol(1) eq "gconvgru" && $2 == 4 && strcol(3) eq "adaptive" && $4 > 1) ? $4 : 1/0):8 \
         with linespoints pt 7 lc rgb "#d95f02" title "Eq. 6 as printed: 1/(1+exp(norm))", \
     "" using ((strcol(1) eq "gconvgru" && $2 == 4 && strcol(3) eq "adaptive" && $4 > 1) ? $4 : 1/0):7 \
         with linespoints pt 7 lc rgb "#1b9e77" title "the text's: 1/(1+exp(-norm))", \
     0.5 with lines dt 2 lc rgb "#999999" notitle
