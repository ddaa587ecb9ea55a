"""Peer cross-check of twofold's snapshot models against PyTorch Geometric Temporal.

For each case (model, dataset, shape) this script
  1. asks twofold for a model's initial parameters
     (`twofold train ... --epochs 0 --save DIR`, PyTorch state_dict names as NAME.npy),
  2. builds the same model in PyTorch Geometric Temporal (the library's cell + the head of its
     examples, Linear(ReLU(H))) and loads those parameters,
  3. runs one window of snapshots from a zero state on the library's own loader output,
     with twofold's window loss (mean over snapshots of the per-snapshot MSE),
  4. writes the outputs, the loss, every parameter's gradient, and the parameters after one
     torch.optim.Adam step (lr 0.01), as .npy files,
into OUT/CASE/, which verify/test_models_peer.c compares with twofold's ref/ (max relative
error <= 1e-5).

Run from the repository root after building (needs numpy, torch, torch-geometric and
torch-geometric-temporal; it is never a CI dependency):
    PYTHONPATH=bench/peer/shim python3 bench/peer/peer_models.py --twofold build/twofold \\
        --out verify/golden/models
(bench/peer/shim stands in for torch_sparse, which torch-geometric-temporal 0.56 imports but
these models never use.)
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

from pygt_common import RecurrentGCN, load_dataset, window_loss

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
]


def save(directory, name, tensor):
    np.save(os.path.join(directory, name + ".npy"), np.ascontiguousarray(tensor.detach().numpy().astype(np.float32)))


def run_case(twofold, out, case):
    name, kind, data, hidden, k, first, count = case
    directory = os.path.join(out, name)
    shutil.rmtree(directory, ignore_errors=True)
    # 1. twofold's initial parameters (seed 3), in a scratch checkpoint; keep only the parameters.
    scratch = directory + ".checkpoint"
    shutil.rmtree(scratch, ignore_errors=True)
    subprocess.run([twofold, "train", "--model", kind, "--data", data, "--hidden", str(hidden), "--k", str(k),
                    "--epochs", "0", "--seed", "3", "--save", scratch], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(directory)
    snapshots = load_dataset(data)[first:first + count]
    model = RecurrentGCN(kind, snapshots[0].x.shape[1], hidden, k)
    state = {}
    for key in model.state_dict():
        path = os.path.join(scratch, key + ".npy")
        state[key] = torch.from_numpy(np.load(path))
        shutil.copy(path, directory)
    model.load_state_dict(state)
    shutil.rmtree(scratch)

    # 2. one window: outputs, loss (mean over snapshots of the per-snapshot MSE), gradients.
    outputs = model.window(snapshots)
    loss = window_loss(outputs, snapshots)
    loss.backward()
    save(directory, "outputs", outputs)
    save(directory, "loss", loss.reshape(1))
    for key, parameter in model.named_parameters():
        save(directory, "grad." + key, parameter.grad)

    # 3. one Adam step from those gradients.
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    optimizer.step()
    for key, parameter in model.named_parameters():
        save(directory, "adam." + key, parameter)
    print(f"{name}: {len(snapshots)} snapshots x {snapshots[0].x.shape[0]} vertices, loss {loss.item():.6f}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--twofold", default="build/twofold", help="the twofold program")
    parser.add_argument("--out", default="verify/golden/models", help="where the golden cases go")
    arguments = parser.parse_args()
    torch.manual_seed(0)
    import torch_geometric_temporal
    print(f"torch {torch.__version__}, torch_geometric_temporal {torch_geometric_temporal.__version__}")
    os.makedirs(arguments.out, exist_ok=True)
    for case in CASES:
        run_case(arguments.twofold, arguments.out, case)


if __name__ == "__main__":
    sys.exit(main())
