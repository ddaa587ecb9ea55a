"""What the peer scripts share: PyTorch Geometric Temporal reading the bundled datasets, or any
dataset `twofold export` wrote, and the models as twofold defines them (the library's cell + the
head of its examples, Linear(ReLU(H))).

Importing this module replaces urllib's urlopen, through which the library's loaders download
their files, with a read of the gzip copy in datasets/.
"""
import gzip
import io
import json
import os
import urllib.request

import numpy as np
import torch
import torch.nn.functional as F

DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets")


def local_urlopen(url, *args, **kwargs):
    with gzip.open(os.path.join(DATASETS, os.path.basename(url) + ".gz"), "rb") as f:
        return io.BytesIO(f.read())


urllib.request.urlopen = local_urlopen

from torch_geometric_temporal.dataset import ChickenpoxDatasetLoader, TwitterTennisDatasetLoader  # noqa: E402
from torch_geometric_temporal.nn.recurrent import (  # noqa: E402
    DCRNN, GCLSTM, TGCN, EvolveGCNO, GConvGRU, GConvLSTM, MPNNLSTM)
from torch_geometric_temporal.signal import DynamicGraphTemporalSignal  # noqa: E402


def load_dataset(name):
    """The snapshots of a bundled dataset, as the library's loader produces them."""
    loaders = {"chickenpox": ChickenpoxDatasetLoader, "twitter_tennis": TwitterTennisDatasetLoader}
    if name not in loaders:
        raise SystemExit(f"peer scripts load {', '.join(loaders)}, not {name}")
    return list(loaders[name]().get_dataset())


def load_export(directory):
    """The snapshots `twofold export --out DIRECTORY` wrote, as the library's signal object
    (DynamicGraphTemporalSignal) yields them: Data with x, edge_index, edge_attr (the weights), y,
    and present (1 for a vertex present at that time, 0 for an absent one, which the loss skips).
    Returns (snapshots, manifest)."""
    with open(os.path.join(directory, "manifest.json")) as f:
        manifest = json.load(f)
    if manifest.get("format") != "twofold export 1":
        raise SystemExit(f"{directory}: not a twofold export (manifest format {manifest.get('format')!r})")
    edge_indices, edge_weights, features, targets, present = [], [], [], [], []
    everyone = np.ones(manifest["nodes"], dtype=np.int64)
    for t in range(manifest["snapshots"]):
        snapshot = os.path.join(directory, f"{t:05d}")
        edge_indices.append(np.load(os.path.join(snapshot, "edge_index.npy")))
        edge_weights.append(np.load(os.path.join(snapshot, "edge_weight.npy")))
        features.append(np.load(os.path.join(snapshot, "x.npy")))
        targets.append(np.load(os.path.join(snapshot, "y.npy")))
        mask = os.path.join(snapshot, "present.npy")
        present.append(np.load(mask) if os.path.exists(mask) else everyone)
    signal = DynamicGraphTemporalSignal(edge_indices, edge_weights, features, targets, present=present)
    return list(signal), manifest


class RecurrentGCN(torch.nn.Module):
    """A library cell and the head of its examples: y^ = Linear(ReLU(H))."""

    def __init__(self, kind, features, hidden, k, targets=1):
        super().__init__()
        self.kind = kind
        if kind == "tgcn":
            self.recurrent = TGCN(features, hidden)
        elif kind == "gconvgru":
            self.recurrent = GConvGRU(features, hidden, k)
        elif kind == "gclstm":
            self.recurrent = GCLSTM(features, hidden, k)
        elif kind == "gconvlstm":
            self.recurrent = GConvLSTM(features, hidden, k)
        elif kind == "dcrnn":
            self.recurrent = DCRNN(features, hidden, k)
        elif kind == "mpnnlstm":
            # The library's layers without its batch norm and dropout, which twofold leaves out
            # (ref/models/model_mpnnlstm.c says why); window() runs them a snapshot at a time.
            self.recurrent = MPNNLSTM(features, hidden, 1, 1, 0.0)
            self.recurrent._batch_norm_1 = torch.nn.Identity()
            self.recurrent._batch_norm_2 = torch.nn.Identity()
            hidden = 2 * hidden  # the head reads [H1 | H2]
        else:
            self.recurrent = EvolveGCNO(features)
            hidden = features
        self.linear = torch.nn.Linear(hidden, targets)

    def window(self, snapshots):
        """Outputs for consecutive snapshots, state from zero at the first."""
        h = c = None
        states = (None, None)  # MPNN-LSTM's two LSTMs' (h, c)
        if self.kind == "evolvegcn":
            self.recurrent.reinitialize_weight()
        outputs = []
        for s in snapshots:
            if self.kind == "mpnnlstm":
                h, states = self.mpnnlstm_step(s, *states)
            elif self.kind in ("gclstm", "gconvlstm"):
                h, c = self.recurrent(s.x, s.edge_index, s.edge_attr, h, c)
            elif self.kind == "evolvegcn":
                h = self.recurrent(s.x, s.edge_index, s.edge_attr)
            elif self.kind == "dcrnn":
                h = self.recurrent(s.x, *edges_by_source(s), h)
            else:
                h = self.recurrent(s.x, s.edge_index, s.edge_attr, h)
            outputs.append(self.linear(F.relu(h)))
        return torch.stack(outputs)


    def mpnnlstm_step(self, s, states_1, states_2):
        """One snapshot of MPNN-LSTM as twofold runs it, with the library's own layers: the two GCN
        layers, their outputs side by side into LSTM 1, its output into LSTM 2, each LSTM from its
        state (h, c) at the previous snapshot. Returns (h = [H1 | H2], the two states)."""
        r = self.recurrent
        first = F.relu(r._convolution_1(s.x, s.edge_index, s.edge_attr))
        second = F.relu(r._convolution_2(first, s.edge_index, s.edge_attr))
        joined = torch.cat([first, second], dim=1).unsqueeze(0)  # a sequence of one, the vertices as batch
        out_1, states_1 = r._recurrent_1(joined, states_1)
        _, states_2 = r._recurrent_2(out_1, states_2)
        return torch.cat([states_1[0][0], states_2[0][0]], dim=1), (states_1, states_2)


def edges_by_source(s):
    """The snapshot's edges ordered by (source, target), the same graph. The library's DConv pairs its
    backward walk's normalization, listed in the order of edge_index, with the reversed edges, listed in
    that sorted order (dense_to_sparse of A^T): only with edge_index so sorted, on a symmetric graph, is
    its backward walk DCRNN's (chapters/01a-snapshot-models.md)."""
    n = s.x.shape[0]
    order = torch.argsort(s.edge_index[0] * n + s.edge_index[1])
    weights = s.edge_attr[order] if s.edge_attr is not None else None
    return s.edge_index[:, order], weights


def snapshot_mse(output, s):
    """The MSE over the vertices present in snapshot s (all of them without s.present); 0 when none
    is, as twofold's ref_mse_loss()."""
    difference = output.reshape(s.y.shape[0], -1) - s.y.reshape(s.y.shape[0], -1)
    present = getattr(s, "present", None)
    if present is not None and not bool(present.all()):
        difference = difference[present.bool()]
        if difference.numel() == 0:
            return output.sum() * 0
    return torch.mean(difference ** 2)


def window_loss(outputs, snapshots):
    """twofold's window loss: the mean over snapshots of the per-snapshot MSE."""
    return torch.stack([snapshot_mse(outputs[t], s) for t, s in enumerate(snapshots)]).mean()
