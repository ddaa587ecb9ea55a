"""Golden files for the loader tests, written by PyTorch Geometric Temporal's own loaders.

The oracle for twofold's snapshot loaders is the library they imitate. This script runs
torch_geometric_temporal's dataset loaders on the files bundled in datasets/ (it replaces
their download with a read of the local gzip copy) and writes, for each dataset, small
.npy files that verify/test_loaders.c compares against:

  NAME_features_head.npy  float32 [3][N][F]  features of snapshots 0, 1, 2
  NAME_features_last.npy  float32 [N][F]     features of the last snapshot
  NAME_targets.npy        float32 [S][N]     every target (only for S*N <= 200000)
  NAME_targets_head.npy   float32 [3][N]     targets of snapshots 0, 1, 2
  NAME_edge_counts.npy    int64   [S]        edges per snapshot
  NAME_edges_first.npy    int64   [2][E]     edge_index of snapshot 0, library order
  NAME_weights_first.npy  float32 [E]        edge_weight of snapshot 0
  NAME_feature_sums.npy   float32 [S]        sum of each snapshot's features (float64 sum)

For the event files and the T-GCN pair, which that library does not load, it writes the
same kind of summary from a plain-Python reading of the files (NAME_summary.npy etc.).

Run (needs numpy, torch, torch-geometric, torch-geometric-temporal; not a CI dependency):
    python3 verify/golden/make_loader_golden.py
torch_geometric_temporal 0.56 imports torch_sparse for EvolveGCN; if it is not installed,
put bench/peer/shim on PYTHONPATH (a stand-in that only satisfies the import).
"""
import gzip
import io
import os
import sys
import urllib.request

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATASETS = os.path.join(HERE, "..", "..", "datasets")


def local_urlopen(url, *args, **kwargs):
    name = os.path.basename(url)
    with gzip.open(os.path.join(DATASETS, name + ".gz"), "rb") as f:
        return io.BytesIO(f.read())


urllib.request.urlopen = local_urlopen

import torch_geometric_temporal.dataset as pygt  # noqa: E402  (after the patch)


def write(prefix, name, array):
    np.save(os.path.join(HERE, "loaders", f"{prefix}_{name}.npy"), np.ascontiguousarray(array))


def dump(prefix, signal):
    snapshots = list(signal)
    features = [s.x.numpy().astype(np.float32) for s in snapshots]
    targets = [s.y.numpy().astype(np.float32).reshape(-1) for s in snapshots]
    write(prefix, "features_head", np.stack(features[:3]))
    write(prefix, "features_last", features[-1])
    write(prefix, "targets_head", np.stack(targets[:3]))
    if len(targets) * targets[0].size <= 200000:
        write(prefix, "targets", np.stack(targets))
    write(prefix, "edge_counts", np.array([s.edge_index.shape[1] for s in snapshots], dtype=np.int64))
    write(prefix, "edges_first", snapshots[0].edge_index.numpy().astype(np.int64))
    write(prefix, "weights_first", snapshots[0].edge_attr.numpy().astype(np.float32))
    write(prefix, "feature_sums", np.array([f.astype(np.float64).sum() for f in features], dtype=np.float32))
    print(f"{prefix}: {len(snapshots)} snapshots, x {features[0].shape}, {snapshots[0].edge_index.shape[1]} edges at t=0")


def read_lines(name):
    with gzip.open(os.path.join(DATASETS, name), "rt") as f:
        return [line.rstrip("\n") for line in f if line.strip()]


def dump_events(prefix, file_name, has_header):
    """Plain-Python reading of an event file: the independent oracle for load_events_*."""
    lines = read_lines(file_name)
    if has_header:
        lines = lines[1:]
        rows = [line.split(",") for line in lines]
    else:
        rows = [line.split() for line in lines]
    src = [int(r[0]) for r in rows]
    dst = [int(r[1]) for r in rows]
    time_column = 3 if has_header else 2
    times = [float(r[time_column]) for r in rows]
    summary = [len(rows), len(set(src) | set(dst)), len(set(zip(src, dst))), max(src + dst) + 1]
    write(prefix, "summary", np.array(summary, dtype=np.int64))
    write(prefix, "head", np.array([src[:5], dst[:5]], dtype=np.int64))
    write(prefix, "times", np.array([times[0], times[1], times[-1]], dtype=np.float32))
    print(f"{prefix}: {summary[0]} events, {summary[1]} active vertices, {summary[2]} pairs")


def dump_tgcn(prefix, lags=12):
    """T-GCN-PyTorch's normalization (divide by the maximum), written out with numpy."""
    speed = np.array([[float(v) for v in line.split(",")] for line in read_lines("los_speed.csv.gz")[1:]])
    adjacency = np.array([[float(v) for v in line.split(",")] for line in read_lines("los_adj.csv.gz")])
    scaled = speed / speed.max()
    write(prefix, "features_head", np.stack([scaled[i:i + lags, :].T for i in range(3)]).astype(np.float32))
    write(prefix, "targets_head", np.stack([scaled[i + lags, :] for i in range(3)]).astype(np.float32))
    write(prefix, "summary", np.array([speed.shape[0] - lags, speed.shape[1], int((adjacency != 0).sum())], dtype=np.int64))
    print(f"{prefix}: {speed.shape[0] - lags} snapshots, {int((adjacency != 0).sum())} edges")


def main():
    os.makedirs(os.path.join(HERE, "loaders"), exist_ok=True)
    dump_events("wikipedia", "wikipedia.txt.gz", False)
    dump_events("collegemsg", "collegemsg.txt.gz", False)
    dump_events("enron", "enron.txt.gz", False)
    dump_events("bitcoin_otc", "bitcoin_otc.csv.gz", True)
    dump_events("bitcoin_alpha", "bitcoin_alpha.csv.gz", True)
    dump_tgcn("los")
    dump("chickenpox", pygt.ChickenpoxDatasetLoader().get_dataset())
    dump("pedalme", pygt.PedalMeDatasetLoader().get_dataset())
    dump("england_covid", pygt.EnglandCovidDatasetLoader().get_dataset())
    dump("twitter_tennis", pygt.TwitterTennisDatasetLoader().get_dataset())
    dump("montevideo_bus", pygt.MontevideoBusDatasetLoader().get_dataset())
    print("torch_geometric_temporal", getattr(sys.modules["torch_geometric_temporal"], "__version__", "?"))


if __name__ == "__main__":
    main()
