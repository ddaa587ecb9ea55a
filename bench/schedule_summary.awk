# Summary of bench/schedule.sh's imbalance.csv (awk -F, -f bench/schedule_summary.awk FILE):
# per method, the predicted and measured busy imbalance (median and range over every data set,
# rank count and repeat), and the spread of the measurement itself: the greedy and ILP rows of
# one run that carry the same schedule (the same predicted imbalance: the ILP kept the greedy
# start) are the same schedule measured twice.
function median(list, n,    i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && list[j - 1] > list[j]; j--) { t = list[j]; list[j] = list[j - 1]; list[j - 1] = t }
    return n % 2 ? list[(n + 1) / 2] : (list[n / 2] + list[n / 2 + 1]) / 2
}
NR > 1 {
    key = $1 "," $2 "," $3
    m = $4; n[m]++
    predicted[m, n[m]] = $5; measured[m, n[m]] = $6
    if (m == "greedy") { greedy_predicted[key] = $5; greedy_measured[key] = $6 }
    if (m == "ilp") { ilp_predicted[key] = $5; ilp_measured[key] = $6 }
}
END {
    printf "%-11s %5s %18s %18s %18s %18s\n", "method", "runs", "predicted median", "predicted range", "measured median", "measured range"
    split("roundrobin lpt greedy ilp", order, " ")
    for (k = 1; k <= 4; k++) {
        m = order[k]; lo_p = lo_m = 1e9; hi_p = hi_m = 0
        for (i = 1; i <= n[m]; i++) {
            p[i] = predicted[m, i]; q[i] = measured[m, i]
            if (p[i] < lo_p) lo_p = p[i]; if (p[i] > hi_p) hi_p = p[i]
            if (q[i] < lo_m) lo_m = q[i]; if (q[i] > hi_m) hi_m = q[i]
        }
        printf "%-11s %5d %18.4f %8.4f .. %6.4f %18.4f %8.4f .. %6.4f\n", m, n[m], median(p, n[m]), lo_p, hi_p, median(q, n[m]), lo_m, hi_m
    }
    same = 0
    for (key in greedy_predicted)
        if (key in ilp_predicted && ilp_predicted[key] == greedy_predicted[key]) {
            d = greedy_measured[key] - ilp_measured[key]; if (d < 0) d = -d
            spread[++same] = d
            if (d > widest) widest = d
        }
    if (same)
        printf "the same schedule measured twice (greedy and ILP rows of one run with equal predictions): %d pairs, measured imbalance differs by median %.4f, at most %.4f\n", same, median(spread, same), widest
}
