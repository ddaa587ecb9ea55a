"""Train a snapshot model in PyTorch Geometric Temporal exactly as `twofold train` does, and time
its epochs: the peer for bench/train.sh.

Same model (the library's cell + Linear(ReLU(H))), same data (the arrays `twofold export` wrote,
or the library's own loader on a bundled file), same temporal split, windows of W snapshots from
a zero state, B windows per Adam step with their gradients averaged, test MSE in windows of W
over the present vertices. With --init, the initial parameters are twofold's
(`twofold train ... --epochs 0 --save DIR` writes them under PyTorch's names), so both sides
train the same model from the same point and must end at nearly the same test MSE. Prints one
line per epoch in twofold's format, so bench/train.sh parses both the same way.

    build/twofold export --data twitter_tennis --out /tmp/tennis
    build/twofold train --model tgcn --data twitter_tennis --hidden 32 --epochs 0 --save /tmp/init
    PYTHONPATH=bench/peer/shim python3 bench/peer/peer_train_time.py --model tgcn \\
        --data-dir /tmp/tennis --init /tmp/init --epochs 5 --window 8 --batch 4 --hidden 32 --threads 1
"""
import argparse
import os
import time

import numpy as np
import torch

from pygt_common import RecurrentGCN, load_dataset, load_export, window_loss


def windows(count, length):
    return [(first, min(length, count - first)) for first in range(0, count, length)]


def load_initial_parameters(model, directory):
    """twofold's parameters, NAME.npy under PyTorch's state_dict names, into the model."""
    state = {}
    for key, value in model.state_dict().items():
        path = os.path.join(directory, key + ".npy")
        if not os.path.exists(path):
            raise SystemExit(f"--init {directory}: no {key}.npy (is it a checkpoint of the same model and --hidden?)")
        state[key] = torch.from_numpy(np.load(path))
        if state[key].shape != value.shape:
            raise SystemExit(f"--init {directory}: {key}.npy has shape {tuple(state[key].shape)}, "
                             f"the model's is {tuple(value.shape)}")
    model.load_state_dict(state)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="tgcn")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--data", default=None, help="chickenpox or twitter_tennis, by the library's loader")
    source.add_argument("--data-dir", default=None, help="a directory `twofold export` wrote")
    parser.add_argument("--init", default=None, help="twofold's initial parameters (a --save directory)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--window", type=int, default=8)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--hidden", type=int, default=32)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--train-ratio", type=float, default=0.8)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    a = parser.parse_args()
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    if a.data_dir:
        snapshots, manifest = load_export(a.data_dir)
        name, targets = manifest["name"], manifest["targets"]
    else:
        name, targets = a.data or "chickenpox", 1
        snapshots = load_dataset(name)
    train_count = int(a.train_ratio * len(snapshots))
    train, test = snapshots[:train_count], snapshots[train_count:]
    model = RecurrentGCN(a.model, snapshots[0].x.shape[1], a.hidden, a.k, targets)
    if a.init:
        load_initial_parameters(model, a.init)
    optimizer = torch.optim.Adam(model.parameters(), lr=a.lr)
    train_windows = windows(len(train), a.window)
    initial = f"twofold's from {a.init}" if a.init else "torch's (seed 1)"
    print(f"peer: torch {torch.__version__}, {torch.get_num_threads()} thread(s); {a.model} on {name}, "
          f"{len(train_windows)} windows of {a.window}, {a.batch} per step; initial parameters {initial}")
    started = time.perf_counter()
    for epoch in range(1, a.epochs + 1):
        epoch_started = time.perf_counter()
        loss_sum = 0.0
        for start in range(0, len(train_windows), a.batch):
            step = train_windows[start:start + a.batch]
            optimizer.zero_grad()
            for first, count in step:
                loss = window_loss(model.window(train[first:first + count]), train[first:first + count])
                (loss / len(step)).backward()
                loss_sum += loss.item()
            optimizer.step()
        with torch.no_grad():
            total = 0.0
            for first, count in windows(len(test), a.window):
                total += window_loss(model.window(test[first:first + count]), test[first:first + count]).item() * count
        print(f"epoch {epoch:4d}  train loss {loss_sum / len(train_windows):.6f}  test MSE {total / len(test):.6f}  "
              f"({time.perf_counter() - epoch_started:.3f} s)", flush=True)
    print(f"final test MSE {total / len(test):.6f} after {a.epochs} epochs ({time.perf_counter() - started:.2f} s)")


if __name__ == "__main__":
    main()
