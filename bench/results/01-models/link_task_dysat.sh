#!/usr/bin/env bash
# DySAT's link prediction on twitter_tennis (--task link, hidden 16, windows of 8, 5 epochs, the opt
# twin on one rank, seed 1) beside the snapshot models that read the same data the same way: T-GCN,
# WD-GCN (a GCN then an LSTM per vertex) and GAT-LSTM (DySAT's GAT then an LSTM per vertex). Prints
# each model's epochs and the table chapter 01 quotes. The machine is shared: the load average is
# printed before and after (read the losses, AP and AUC, not the times).
cd "$(dirname "$0")/../../.."
echo "load before: $(uptime | sed 's/.*load average/load average/')"
table="| model | train BCE, epoch 5 | test AP, epoch 1 | test AP, epoch 5 | test AUC, epoch 5 |\n|---|---|---|---|---|"
for model in dysat gatlstm wdgcn tgcn; do
  echo "\$ twofold train --model $model --data twitter_tennis --task link --hidden 16 --window 8 --epochs 5 --impl opt"
  out=$(build/twofold train --model "$model" --data twitter_tennis --task link --hidden 16 --window 8 --epochs 5 \
        --impl opt 2>&1)
  echo "$out"
  first=$(echo "$out" | grep -E "^epoch +1 ")
  last=$(echo "$out" | grep -E "^epoch +5 ")
  field() { echo "$1" | sed -E "s/.*$2 ([0-9.]+).*/\1/"; }
  table="$table\n| $model | $(field "$last" "train BCE") | $(field "$first" AP) | $(field "$last" AP) | $(field "$last" AUC) |"
  echo
done
echo "load after: $(uptime | sed 's/.*load average/load average/')"
echo
echo -e "$table"
