"""Peer cross-check of twofold's DySAT: the model written here in plain PyTorch from DySAT's equations.

PyTorch Geometric Temporal has no DySAT, so this script builds it from the paper's two layers as
chapters/01a-snapshot-models.md states them, with PyTorch Geometric's own GATConv for the structural part:

    Z_t   = ELU(GATConv(X_t, edge_index_t))             two heads averaged (concat=False)
    U_t   = Z_t + P_t                                    sinusoidal position t of the window
    Q, K, V = U Wq, U Wk, U Wv                           raw [H][H] matrices, no bias
    e_ts  = <Q_t, K_s> / sqrt(H),  s <= t (causal)       per vertex
    H_t   = sum_s softmax_s(e_t.) V_s + Z_t              the residual, without the position
    y_t   = Linear(ReLU(H_t))                            the head every twofold model has

Then, as bench/peer/peer_models.py does for the library's models (both through golden_steps.py's
write_case): twofold's initial parameters
(`twofold train --model dysat ... --epochs 0 --save`) loaded by name, STEPS torch.optim.Adam steps
(lr 0.01), step s on the window of `count` snapshots from first + s * count, twofold's window loss,
and the same files written into OUT/CASE/ (outputs, loss, grad.NAME, adam.NAME of step 1; losses and
steps.NAME of every step), which verify/test_models_peer.c compares with ref/ step by step
(max |a - b| / max(1, |b|) <= 1e-5).

Run from the repository root after building (needs numpy, torch, torch-geometric and, for the
bundled loader, torch-geometric-temporal with the shim; never a CI dependency):
    PYTHONPATH=bench/peer/shim python3 bench/peer/peer_dysat.py --twofold build/twofold \\
        --out verify/golden/models
"""
import argparse
import math
import sys

import numpy as np
import torch
from torch_geometric.nn import GATConv

from golden_steps import write_case

HEADS = 2

# (case name, bundled dataset, hidden, first snapshot, snapshots per window): small, so that the
# committed files stay a few kilobytes and the Valgrind run short.
CASES = [("dysat_chickenpox", "chickenpox", 8, 0, 8)]


def positions(count, width):
    """p_j[2i] = sin(j / 10000^(2i/W)), p_j[2i+1] = cos(...), in double, rounded once to float32."""
    table = np.zeros((count, width))
    for j in range(count):
        for i in range(width):
            angle = j / 10000.0 ** ((i - i % 2) / width)
            table[j, i] = math.sin(angle) if i % 2 == 0 else math.cos(angle)
    return torch.from_numpy(table.astype(np.float32))


class Temporal(torch.nn.Module):
    """DySAT's temporal self-attention, one head, causal mask, positions in q, k, v, residual z."""

    def __init__(self, width):
        super().__init__()
        self.query = torch.nn.Parameter(torch.empty(width, width))
        self.key = torch.nn.Parameter(torch.empty(width, width))
        self.value = torch.nn.Parameter(torch.empty(width, width))

    def forward(self, z):  # z [T][N][W]
        count, _, width = z.shape
        u = z + positions(count, width)[:, None, :]
        q, k, v = u @ self.query, u @ self.key, u @ self.value
        scores = torch.einsum("tnc,snc->nts", q, k) / math.sqrt(width)
        causal = torch.ones(count, count, dtype=torch.bool).tril()
        scores = scores.masked_fill(~causal, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return torch.einsum("nts,snc->tnc", weights, v) + z  # the residual carries no position


class DySAT(torch.nn.Module):
    def __init__(self, features, hidden, targets=1):
        super().__init__()
        self.structural = GATConv(features, hidden, heads=HEADS, concat=False)
        self.temporal = Temporal(hidden)
        self.linear = torch.nn.Linear(hidden, targets)

    def window(self, snapshots):
        z = torch.stack([torch.nn.functional.elu(self.structural(s.x, s.edge_index)) for s in snapshots])
        return self.linear(torch.relu(self.temporal(z)))


def run_case(twofold, out, case):
    name, data, hidden, first, count = case
    write_case(twofold, out, name, data, first, count, ["--model", "dysat", "--hidden", str(hidden)],
               lambda features: DySAT(features, hidden))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--twofold", default="build/twofold", help="the twofold program")
    parser.add_argument("--out", default="verify/golden/models", help="where the golden cases go")
    arguments = parser.parse_args()
    print(f"torch {torch.__version__}")
    for case in CASES:
        run_case(arguments.twofold, arguments.out, case)


if __name__ == "__main__":
    sys.exit(main())
