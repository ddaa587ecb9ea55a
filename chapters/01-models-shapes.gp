# Chapter 01's picture of ReInc's two shapes of snapshot model, drawn (no data):
#     gnuplot chapters/01-models-shapes.gp        (from the repository root)
# writes chapters/01-models-shapes.svg: two snapshots, t-1 and t, of
#  - a stacked model (GCRN-M1 with its 2 pairs, ref/models/model_gcrnm1.c): a graph convolution G
#    on the pair's input, then an LSTM R whose products are plain matrix products; the state
#    (H, C) of each R goes to the same R of the next snapshot, and never into a G;
#  - an integrated model (GConvLSTM = GCRN-M2, ref/models/model_gconvlstm.c): one Chebyshev basis of
#    X_t and one of H_{t-1}, each computed once and read by all four gates (ReInc's reuse across
#    gates), so the graph work of snapshot t waits for the state of t-1.
# Grey boxes do graph work (a sparse product with the snapshot's operator), white ones do not.
set terminal svg size 1100,520 font "sans,12" background rgb "white" noenhanced
set output "chapters/01-models-shapes.svg"
unset border
unset tics
unset key
set lmargin 0
set rmargin 0
set tmargin 0
set bmargin 0
set xrange [0:110]
set yrange [0:52]
set style arrow 1 head filled size 0.9,20 lw 1.2 lc rgb "#333333"
set style arrow 2 head filled size 0.9,20 lw 1.6 lc rgb "#c0392b" dashtype 2

graph_colour = "#d0d7de"
plain_colour = "#ffffff"
n = 0
# box(x, y, w, h, colour): a rectangle centred at (x, y); each call takes the next object number
box(x, y, w, h, colour) = sprintf("set object %d rect center %g,%g size %g,%g fc rgb '%s' fs solid 1 border lc rgb '#333333'", n = n + 1, x, y, w, h, colour)
text(s, x, y) = sprintf("set label %d \"%s\" at %g,%g center", n = n + 1, s, x, y)
note(s, x, y) = sprintf("set label %d \"%s\" at %g,%g left font 'sans,11' tc rgb '#444444'", n = n + 1, s, x, y)
arrow(x1, y1, x2, y2, style) = sprintf("set arrow from %g,%g to %g,%g as %d", x1, y1, x2, y2, style)

# ---- the stacked shape: GCRN-M1, two pairs, snapshots t-1 (bottom) and t (top) ------------------
eval text("stacked (GCRN-M1, 2 pairs; CD-GCN, WD-GCN, MPNN-LSTM alike)", 26, 50)
do for [row = 0:1] {
    y = 16 + row * 20
    label = row ? "t" : "t-1"
    eval text("X_".label, 4, y)
    eval box(13, y, 7, 5, graph_colour)
    eval text("G_1", 13, y)
    eval box(24, y, 7, 5, plain_colour)
    eval text("R_1", 24, y)
    eval box(35, y, 7, 5, graph_colour)
    eval text("G_2", 35, y)
    eval box(46, y, 7, 5, plain_colour)
    eval text("R_2", 46, y)
    eval arrow(6, y, 9.5, y, 1)
    eval arrow(16.5, y, 20.5, y, 1)
    eval arrow(27.5, y, 31.5, y, 1)
    eval arrow(38.5, y, 42.5, y, 1)
    eval arrow(49.5, y, 52.5, y, 1)
    eval text("head", 55, y)
}
eval arrow(24, 18.5, 24, 33.5, 2)
eval arrow(46, 18.5, 46, 33.5, 2)
eval note("(H_1, C_1)", 25, 26)
eval note("(H_2, C_2)", 47, 26)
eval note("The graph work of a pair reads its input only: G_1 reads X_t, known", 2, 8)
eval note("before training, so it can run ahead of the recurrence and be served", 2, 5.5)
eval note("across windows; nothing is shared between gates (one G per pair).", 2, 3)

# ---- the integrated shape: GConvLSTM (GCRN-M2), snapshots t-1 and t ------------------------------
eval text("integrated (GConvLSTM = GCRN-M2; T-GCN, GConvGRU, DCRNN alike)", 84, 50)
do for [row = 0:1] {
    y = 16 + row * 20
    label = row ? "t" : "t-1"
    eval text("X_".label, 62, y + 4)
    eval box(71, y + 4, 8, 4.5, graph_colour)
    eval text("basis of X", 71, y + 4)
    eval box(71, y - 4, 8, 4.5, graph_colour)
    eval text("basis of H", 71, y - 4)
    eval arrow(64, y + 4, 66.8, y + 4, 1)
    do for [g = 0:3] {
        gy = y + 6 - g * 4
        eval box(86, gy, 9, 3.2, plain_colour)
        eval text(word("gate_i gate_f gate_c gate_o", g + 1), 86, gy)
        eval arrow(75, y + 4, 81.3, gy, 1)
        eval arrow(75, y - 4, 81.3, gy, 1)
    }
    eval box(100, y, 8, 5, plain_colour)
    eval text("C', H'", 100, y)
    eval arrow(90.6, y, 95.8, y, 1)
    eval arrow(104, y, 107, y, 1)
    eval text("head", 108.5, y + 3)
}
eval arrow(100, 18.5, 71, 29.8, 2)
eval note("(H, C) of t-1", 88, 27)
eval note("Each gate convolves X_t and the state H_{t-1}; one basis of each, read by", 60, 8)
eval note("all four gates (ReInc's reuse across gates: 4 sparse products a", 60, 5.5)
eval note("snapshot at K = 3, not 16), and graph work on H waits for t-1.", 60, 3)

plot -1 notitle
