#!/usr/bin/env bash
# Node classification on snapshots (--task classify) for every snapshot model of the model table (as
# `twofold train --help` lists it): planted communities over 20 snapshots, a twentieth of the vertices
# moving to another community before each, a fifth of the vertices unlabelled in each snapshot; 20
# epochs of the opt twin on one rank, seed 1. Prints each model's first and last epoch and the final
# line, then the table chapter 01 quotes. The machine is shared: the load average is printed before
# and after (read the accuracies, not the times).
cd "$(dirname "$0")/../../.."
data=communities:nodes=300,snapshots=20,classes=4,change=0.05,homophily=0.8,noise=1,labelled=0.8,seed=1
models=$(build/twofold train --help | awk '/^  --model M/ { on = 1; sub(/^  --model M/, "") }
  on && /^ +\(chapter 01\)/ { on = 0 }
  on { sub(/^ +/, ""); print $1 }')
echo "load before: $(uptime | sed 's/.*load average/load average/')"
table="| model | test CE | test accuracy |\n|---|---|---|"
for model in $models; do
  echo "\$ twofold train --model $model --data $data --task classify --epochs 20 --impl opt"
  out=$(build/twofold train --model "$model" --data "$data" --task classify --epochs 20 --impl opt 2>&1)
  echo "$out" | grep -E "^(epoch +1 |epoch +20 |final|twofold: error)"
  final=$(echo "$out" | grep "^final")
  ce=$(echo "$final" | sed -E 's/final test CE ([0-9.]+),.*/\1/')
  accuracy=$(echo "$final" | sed -E 's/.*accuracy ([0-9.]+) .*/\1/')
  table="$table\n| $model | $ce | $accuracy |"
  echo
done
echo "load after: $(uptime | sed 's/.*load average/load average/')"
echo
echo -e "$table"
