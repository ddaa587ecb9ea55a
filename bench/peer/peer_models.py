"""Peer cross-check of twofold's snapshot models against PyTorch Geometric Temporal.

For each case (model, dataset, shape) this script
  1. asks twofold for a model's initial parameters
     (`twofold train ... --epochs 0 --save DIR`, PyTorch state_dict names as NAME.npy),
  2. builds the same model in PyTorch Geometric Temporal (the library's cell + the head of its
     examples, Linear(ReLU(H))) and loads those parameters,
  3. takes STEPS (10) torch.optim.Adam steps (lr 0.01, torch's defaults otherwise): step s
     (0-based) runs the window of `count` snapshots starting at first + s * count, from a zero
     state, on the library's own loader output, with twofold's window loss (mean over
     snapshots of the per-snapshot MSE), back-propagates and steps,
  4. writes, as float32 .npy files,
       - of step 1: the outputs (outputs.npy), the loss (loss.npy), every parameter's
         gradient (grad.NAME.npy) and every parameter after the step (adam.NAME.npy);
       - of every step: the loss of its window before its update (losses.npy, [STEPS]) and
         every parameter after it (steps.NAME.npy, [STEPS, *shape]: row s after step s + 1),
into OUT/CASE/, which verify/test_models_peer.c compares with twofold's ref/ running the same
steps (max |a - b| / max(1, |b|) <= 1e-5 for every value of every step). Ten steps, not one,
because a difference in how Adam rounds its constants hides in one step and shows as drift
over several (chapter 01, "Peer check against PyTorch Geometric Temporal").

Run from the repository root after building (needs numpy, torch, torch-geometric and
torch-geometric-temporal; it is never a CI dependency):
    PYTHONPATH=bench/peer/shim python3 bench/peer/peer_models.py --twofold build/twofold \\
        --out verify/golden/models
(bench/peer/shim stands in for torch_sparse, which torch-geometric-temporal 0.56 imports but
these models never use.)
"""
import argparse
import os
import sys

import torch

from golden_steps import write_case
from pygt_common import RecurrentGCN

# (case name, twofold model, bundled dataset, hidden, Chebyshev K, first snapshot, snapshots)
CASES = [
    ("tgcn_chickenpox", "tgcn", "chickenpox", 8, 2, 0, 8),
    ("tgcn_twitter_tennis", "tgcn", "twitter_tennis", 8, 2, 0, 8),
    ("gconvgru_chickenpox", "gconvgru", "chickenpox", 8, 2, 0, 8),
    ("gconvgru_chickenpox_k1", "gconvgru", "chickenpox", 8, 1, 0, 8),
    ("gconvgru_twitter_tennis", "gconvgru", "twitter_tennis", 8, 2, 0, 8),
    ("gclstm_chickenpox", "gclstm", "chickenpox", 8, 2, 0, 8),
    ("gclstm_chickenpox_k1", "gclstm", "chickenpox", 8, 1, 0, 8),
    ("gclstm_twitter_tennis", "gclstm", "twitter_tennis", 8, 2, 0, 8),
    ("evolvegcn_chickenpox", "evolvegcn", "chickenpox", 8, 2, 0, 8),
    ("evolvegcn_twitter_tennis", "evolvegcn", "twitter_tennis", 8, 2, 0, 8),
    ("gconvlstm_chickenpox", "gconvlstm", "chickenpox", 8, 2, 0, 8),
    ("gconvlstm_chickenpox_k1", "gconvlstm", "chickenpox", 8, 1, 0, 8),
    ("mpnnlstm_chickenpox", "mpnnlstm", "chickenpox", 8, 2, 0, 8),
    # K = 3: the diffusion's T_2 = 2 W T_1 - T_0 on both walks (the library's recurrence is DCRNN's up to K = 3)
    ("dcrnn_chickenpox_k3", "dcrnn", "chickenpox", 8, 3, 0, 8),
    # (the models added after the first four: chickenpox only, so that the Valgrind run stays short;
    # twitter_tennis's 1000 vertices doubled this test's time under Valgrind)
]


def run_case(twofold, out, case):
    name, kind, data, hidden, k, first, count = case
    order = ["--k", str(k)] if kind in ("gconvgru", "gclstm", "gconvlstm", "dcrnn") else []  # T-GCN has no Chebyshev order
    # EvolveGCN-O's state is its weight matrix, as wide as the features: twofold refuses --hidden
    width = ["--hidden", str(hidden)] if kind != "evolvegcn" else []
    write_case(twofold, out, name, data, first, count, ["--model", kind, *width, *order],
               lambda features: RecurrentGCN(kind, features, hidden, k))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--twofold", default="build/twofold", help="the twofold program")
    parser.add_argument("--out", default="verify/golden/models", help="where the golden cases go")
    parser.add_argument("--only", nargs="*", metavar="CASE",
                        help="write these cases only (the others' golden files stay as they are)")
    arguments = parser.parse_args()
    torch.manual_seed(0)
    import torch_geometric_temporal
    print(f"torch {torch.__version__}, torch_geometric_temporal {torch_geometric_temporal.__version__}")
    os.makedirs(arguments.out, exist_ok=True)
    unknown = set(arguments.only or []) - {case[0] for case in CASES}
    if unknown:
        raise SystemExit(f"no case {', '.join(sorted(unknown))}")
    for case in CASES:
        if not arguments.only or case[0] in arguments.only:
            run_case(arguments.twofold, arguments.out, case)


if __name__ == "__main__":
    sys.exit(main())
