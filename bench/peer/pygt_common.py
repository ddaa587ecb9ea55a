"""What the peer scripts share: PyTorch Geometric Temporal reading the bundled datasets, and the
models as twofold defines them (the library's cell + the head of its examples, Linear(ReLU(H))).

Importing this module replaces urllib's urlopen, through which the library's loaders download
their files, with a read of the gzip copy in datasets/.
"""
import gzip
import io
import os
import urllib.request

import torch
import torch.nn.functional as F

DATASETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "datasets")


def local_urlopen(url, *args, **kwargs):
    with gzip.open(os.path.join(DATASETS, os.path.basename(url) + ".gz"), "rb") as f:
        return io.BytesIO(f.read())


urllib.request.urlopen = local_urlopen

from torch_geometric_temporal.dataset import ChickenpoxDatasetLoader, TwitterTennisDatasetLoader  # noqa: E402
from torch_geometric_temporal.nn.recurrent import GCLSTM, TGCN, EvolveGCNO, GConvGRU  # noqa: E402


def load_dataset(name):
    """The snapshots of a bundled dataset, as the library's loader produces them."""
    loaders = {"chickenpox": ChickenpoxDatasetLoader, "twitter_tennis": TwitterTennisDatasetLoader}
    if name not in loaders:
        raise SystemExit(f"peer scripts load {', '.join(loaders)}, not {name}")
    return list(loaders[name]().get_dataset())


class RecurrentGCN(torch.nn.Module):
    """A library cell and the head of its examples: y^ = Linear(ReLU(H))."""

    def __init__(self, kind, features, hidden, k):
        super().__init__()
        self.kind = kind
        if kind == "tgcn":
            self.recurrent = TGCN(features, hidden)
        elif kind == "gconvgru":
            self.recurrent = GConvGRU(features, hidden, k)
        elif kind == "gclstm":
            self.recurrent = GCLSTM(features, hidden, k)
        else:
            self.recurrent = EvolveGCNO(features)
            hidden = features
        self.linear = torch.nn.Linear(hidden, 1)

    def window(self, snapshots):
        """Outputs for consecutive snapshots, state from zero at the first."""
        h = c = None
        if self.kind == "evolvegcn":
            self.recurrent.reinitialize_weight()
        outputs = []
        for s in snapshots:
            if self.kind == "gclstm":
                h, c = self.recurrent(s.x, s.edge_index, s.edge_attr, h, c)
            elif self.kind == "evolvegcn":
                h = self.recurrent(s.x, s.edge_index, s.edge_attr)
            else:
                h = self.recurrent(s.x, s.edge_index, s.edge_attr, h)
            outputs.append(self.linear(F.relu(h)))
        return torch.stack(outputs)


def window_loss(outputs, snapshots):
    """twofold's window loss: the mean over snapshots of the per-snapshot MSE."""
    return torch.stack([torch.mean((outputs[t].view(-1) - s.y.view(-1)) ** 2) for t, s in enumerate(snapshots)]).mean()
