#!/usr/bin/env bash
# Every snapshot model of the model table (as `twofold train --help` lists it) raced by bench/train.sh on
# chickenpox, 4 epochs each (epochs 2..4 timed): the reference, the opt twin on 1 and 2 ranks, and
# PyTorch Geometric Temporal where it has the model, each validated against the reference first.
# The machine is shared: the load average is printed before and after.
cd "$(dirname "$0")/../../.."
models=$(build/twofold train --help | awk '/^  --model M/ { on = 1; sub(/^  --model M/, "") }
  on && /^ +\(chapter 01\)/ { on = 0 }
  on { sub(/^ +/, ""); print $1 }')
echo "load before: $(uptime | sed 's/.*load average/load average/')"
for model in $models; do
  echo "\$ PYTHON=/work/peer-venv/bin/python bench/train.sh $model chickenpox 4"
  PYTHON=${PYTHON:-python3} bench/train.sh "$model" chickenpox 4 2>&1 | grep -v "^machine"
  echo
done
echo "load after: $(uptime | sed 's/.*load average/load average/')"
