"""PyTorch Geometric Temporal's published T-GCN example on chickenpox, run as twofold runs it.

The library's examples/recurrent/tgcn_example.py trains TGCN(4, 32) + Linear(32, 1) on
chickenpox with temporal_signal_split(train_ratio=0.2), Adam lr 0.01, 50 epochs, one step per
epoch on the mean over the training snapshots of torch.mean((y_hat - y) ** 2), the hidden
state carried through the split from zero, and prints the test MSE the same way.

In that expression y_hat is [20, 1] and y is [20], so the difference broadcasts to [20, 20]:
the "MSE" compares every prediction with every vertex's target. This script reports both the
example as published (broadcast) and the elementwise MSE (y_hat.view(-1) - y), which is what
twofold computes, for several seeds; compare with
    build/twofold train --model tgcn --data chickenpox --train-ratio 0.2 --epochs 50 --seed S

Run from the repository root: PYTHONPATH=bench/peer/shim python3 bench/peer/peer_tgcn_example.py
"""
import gzip
import io
import os
import statistics
import time
import urllib.request

import torch
import torch.nn.functional as F

DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets")


def local_urlopen(url, *args, **kwargs):
    with gzip.open(os.path.join(DATASETS, os.path.basename(url) + ".gz"), "rb") as f:
        return io.BytesIO(f.read())


urllib.request.urlopen = local_urlopen

from torch_geometric_temporal.dataset import ChickenpoxDatasetLoader  # noqa: E402
from torch_geometric_temporal.nn.recurrent import TGCN  # noqa: E402
from torch_geometric_temporal.signal import temporal_signal_split  # noqa: E402


class RecurrentGCN(torch.nn.Module):
    def __init__(self, node_features):
        super().__init__()
        self.recurrent = TGCN(node_features, 32)
        self.linear = torch.nn.Linear(32, 1)

    def forward(self, x, edge_index, edge_weight, hidden):
        h = self.recurrent(x, edge_index, edge_weight, hidden)
        return self.linear(F.relu(h)), h


def error(y_hat, y, published):
    return torch.mean((y_hat - y) ** 2) if published else torch.mean((y_hat.view(-1) - y) ** 2)


def run(seed, published, train, test):
    torch.manual_seed(seed)
    model = RecurrentGCN(4)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(50):
        cost, hidden = 0, None
        for time_index, snapshot in enumerate(train):
            y_hat, hidden = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr, hidden)
            cost = cost + error(y_hat, snapshot.y, published)
        (cost / (time_index + 1)).backward()
        optimizer.step()
        optimizer.zero_grad()
    with torch.no_grad():
        cost, hidden = 0, None
        for time_index, snapshot in enumerate(test):
            y_hat, hidden = model(snapshot.x, snapshot.edge_index, snapshot.edge_attr, hidden)
            # Test MSE always elementwise, so the numbers are comparable across both trainings.
            cost = cost + error(y_hat, snapshot.y, False)
        return (cost / (time_index + 1)).item()


def main():
    torch.set_num_threads(1)
    dataset = ChickenpoxDatasetLoader().get_dataset()
    train, test = temporal_signal_split(dataset, train_ratio=0.2)
    train, test = list(train), list(test)
    for published in (True, False):
        started = time.perf_counter()
        results = [run(seed, published, train, test) for seed in range(1, 6)]
        label = "trained on the published (broadcast) loss" if published else "trained on the elementwise MSE"
        print(f"{label}: test MSE per seed {' '.join(f'{r:.4f}' for r in results)}; "
              f"mean {statistics.mean(results):.4f} sd {statistics.stdev(results):.4f} "
              f"({(time.perf_counter() - started) / 5:.2f} s per run, 1 thread)")


if __name__ == "__main__":
    main()
