#!/usr/bin/env bash
# PyTorch Geometric Temporal's published T-GCN example on chickenpox (0.2 train split, 50 epochs, one
# step per epoch on the whole split, state carried from zero), five seeds on each side: the peer as
# published (its broadcast loss) and with the elementwise MSE (bench/peer/peer_tgcn_example.py), then
# twofold's reference with the same settings. Needs the peer's Python (PYTHON, default python3, with
# torch and PyTorch Geometric Temporal; bench/peer/README.md). One thread each side.
cd "$(dirname "$0")/../../.." || exit 2
python=${PYTHON:-python3}
echo "\$ PYTHONPATH=bench/peer/shim python3 bench/peer/peer_tgcn_example.py"
OMP_NUM_THREADS=1 PYTHONPATH=bench/peer/shim "$python" bench/peer/peer_tgcn_example.py || exit 1
echo
echo "\$ for s in 1 2 3 4 5; do build/twofold train --model tgcn --data chickenpox --train-ratio 0.2 --epochs 50 --seed \$s | tail -1; done"
for s in 1 2 3 4 5; do
    OMP_NUM_THREADS=1 build/twofold train --model tgcn --data chickenpox --train-ratio 0.2 --epochs 50 --seed $s | tail -1 || exit 1
done
