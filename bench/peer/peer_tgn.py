"""PyTorch Geometric's TGN on twofold's event data and split: the peer of bench/train_events.sh.

The model is the library's own parts, assembled as its TGN example assembles them: TGNMemory with
IdentityMessage and LastAggregator (memory updated once per batch, per vertex, from its last
message), a TransformerConv of 2 heads from each root's sampled neighbours to it (edge
attributes: the time encoding of t_root - t_e and the edge features), and the link predictor
twofold's decoder also is (ReLU(W_src z_u + W_dst z_v), then a linear score). Two things are
twofold's (and TGL's and the TGN paper's) rather than the example's, because they decide the
race at TGL's settings: the neighbours, the 10 most recent events of a root strictly before its
own time, from the whole stream (RecentNeighbours; the example's LastNeighborLoader holds only
earlier batches' events), with each root embedded at its event's time as twofold's entries are;
and the time encoder's initial frequencies (init_time_encoder()). What is twofold's too: the
events (a bundled name read from datasets/, or a file of "src dst time [features]" lines), the
70/15/15 split in time, batches of B consecutive events, one negative destination per event drawn
uniformly from the vertices of the stream, BCE on positives plus BCE on negatives, Adam, every
epoch starting from an empty memory and running training, validation and test (continuing the
memory), widths, heads and neighbours. The update rule is twofold's `--memory-update vertex`
(under twofold's default, entry, it differs: per batch entry and query time). What differs from
twofold's TGN then is when a message is built (here from the memories when it is consumed, in
twofold from the updated memories when it is written), the attention's details (TransformerConv's
root weight and skip where TGL's layer has ReLU, LayerNorm and phi(0) in the query; one time
encoder shared by memory and attention), the other initial parameters and the negatives' random
stream: so the check is the test AP, not the bits.

    python bench/peer/peer_tgn.py --data wikipedia --epochs 3 --width 32 --batch 200 --threads 1

Prints one line per epoch in twofold's format ("epoch   E  train loss ... (T s)") and
"final test AP ..." at the end.
"""
import argparse
import gzip
import os
import time

import numpy as np
import torch
import torch_geometric
from torch.nn import Linear
from torch_geometric.nn import TransformerConv
from torch_geometric.nn.models.tgn import IdentityMessage, LastAggregator, TGNMemory


def read_events(spec):
    """src, dst (int64), t (float64), features [events][d_e] (float32, d_e may be 0)."""
    path = spec
    if not os.path.exists(path):
        here = os.path.join(os.path.dirname(__file__), "..", "..", "datasets", spec + ".txt.gz")
        if not os.path.exists(here):
            raise SystemExit(f"peer_tgn.py: {spec}: neither a file nor a bundled .txt.gz event stream")
        path = here
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        rows = [line.split() for line in f if line.strip() and not line.startswith("#")]
    table = np.array(rows, dtype=np.float64)
    return (table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2],
            table[:, 3:].astype(np.float32))


def init_time_encoder(time_enc):
    """The TGN paper's and TGL's initialisation, twofold's too (ref/nn/time_encoding.c): frequencies
    1 / 10 ** linspace(0, 9, d), phases 0, so that cos(w dt) resolves intervals from seconds to
    decades from the first batch. TimeEncoder's own (a Linear(1, d)'s uniform draw) puts every
    frequency near 1 rad/s, noise for intervals of hours. At lr 1e-3 over whole epochs training
    repairs that; at TGL's lr 1e-4 over a few epochs less so (chapter 01b, "The race")."""
    with torch.no_grad():
        d = time_enc.out_channels
        time_enc.lin.weight.copy_(torch.from_numpy(1 / 10 ** np.linspace(0, 9, d, dtype=np.float32)).view(d, 1))
        time_enc.lin.bias.zero_()


class RecentNeighbours:
    """The k most recent events of a vertex strictly before a time, from the whole stream: the
    neighbours twofold's temporal CSR gives (and TGL's sampler), events earlier in the same batch
    included. PyTorch Geometric's LastNeighborLoader holds only the events of earlier batches:
    at batches of 600 that hides most of what the attention sees in twofold (chapter 01b, "The race")."""

    def __init__(self, src, dst, t, nodes, k):
        n = len(src)
        vertex, other = torch.cat([src, dst]), torch.cat([dst, src])
        event, time = torch.cat([torch.arange(n), torch.arange(n)]), torch.cat([t, t]).double()
        self.span = float(time.max()) + 1.0  # key = vertex * span + time orders by vertex, then time
        key = vertex.double() * self.span + time
        order = torch.argsort(key, stable=True)
        self.key, self.other, self.event = key[order], other[order], event[order]
        self.start = torch.searchsorted(self.key, torch.arange(nodes).double() * self.span)
        self.k = k

    def __call__(self, roots, times):
        """(root index, neighbour vertex, event) of every sampled neighbour of roots at times."""
        end = torch.searchsorted(self.key, roots.double() * self.span + times.double())  # first at or after
        slot = end[:, None] - self.k + torch.arange(self.k)[None, :]
        found = slot >= self.start[roots][:, None]
        root = torch.arange(len(roots))[:, None].expand_as(slot)[found]
        slot = slot[found]
        return root, self.other[slot], self.event[slot]


class Attention(torch.nn.Module):
    """TransformerConv from the sampled neighbours to their roots, edge attributes [phi(t - t_e) || e]."""

    def __init__(self, width, edge_width, time_enc, heads):
        super().__init__()
        self.time_enc = time_enc
        self.conv = TransformerConv(width, width // heads, heads=heads, dropout=0.0,
                                    edge_dim=edge_width + time_enc.out_channels)

    def forward(self, root_memory, neighbour_memory, root, delta, msg):
        edge_attr = torch.cat([self.time_enc(delta.to(root_memory.dtype)), msg], dim=-1)
        edge_index = torch.stack([torch.arange(len(root)), root])
        return self.conv((neighbour_memory, root_memory), edge_index, edge_attr)


class Decoder(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.src, self.dst, self.out = Linear(width, width), Linear(width, width), Linear(width, 1)

    def forward(self, z_src, z_dst):
        return self.out((self.src(z_src) + self.dst(z_dst)).relu())


def average_precision(scores, labels):
    order = np.argsort(-scores, kind="mergesort")
    hits = labels[order]
    precision = np.cumsum(hits) / np.arange(1, len(hits) + 1)
    return float((precision * hits).sum() / hits.sum())


def roc_auc(scores, labels):
    ranks = np.empty(len(scores))
    ranks[np.argsort(scores, kind="mergesort")] = np.arange(1, len(scores) + 1)
    positives = labels.sum()
    negatives = len(labels) - positives
    return float((ranks[labels == 1].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", default="wikipedia")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--width", type=int, default=32, help="memory, time and embedding widths")
    p.add_argument("--batch", type=int, default=200)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--neighbours", type=int, default=10)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    print(f"peer: torch {torch.__version__}, torch_geometric {torch_geometric.__version__}, "
          f"{torch.get_num_threads()} thread(s)", flush=True)

    src, dst, t, features = read_events(a.data)
    n, nodes = len(src), int(max(src.max(), dst.max())) + 1
    train_end, validation_end = n * 70 // 100, n * 85 // 100
    candidates = torch.from_numpy(np.unique(np.concatenate([src, dst])))
    src, dst = torch.from_numpy(src), torch.from_numpy(dst)
    t = torch.from_numpy(t).long() if np.all(t == np.floor(t)) else torch.from_numpy(t)
    msg = torch.from_numpy(features)
    if msg.shape[1] == 0:  # TGNMemory's message store cannot hold 0-wide messages: a zero column adds nothing
        msg = torch.zeros(n, 1)
    d_e = msg.shape[1]

    memory = TGNMemory(nodes, d_e, a.width, a.width, message_module=IdentityMessage(d_e, a.width, a.width),
                       aggregator_module=LastAggregator())
    init_time_encoder(memory.time_enc)
    attention = Attention(a.width, d_e, memory.time_enc, a.heads)
    decoder = Decoder(a.width)
    parameters = set(memory.parameters()) | set(attention.parameters()) | set(decoder.parameters())
    optimizer = torch.optim.Adam(parameters, lr=a.lr)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    neighbours = RecentNeighbours(src, dst, t, nodes, a.neighbours)
    assoc = torch.empty(nodes, dtype=torch.long)
    print(f"model tgn (memory {a.width}, time {a.width}, embedding {a.width}, {a.heads} heads, "
          f"{a.neighbours} neighbours; {sum(q.numel() for q in parameters)} parameters), {n} events, "
          f"{features.shape[1]} edge features; batches of {a.batch}; Adam lr {a.lr}", flush=True)

    def run(first, end, train, generator):
        """Batches [first, end): loss mean, and scores (positives, negatives) when not training."""
        losses, positives, negatives = [], [], []
        for start in range(first, end, a.batch):
            s, d = src[start:min(start + a.batch, end)], dst[start:min(start + a.batch, end)]
            bt, bm = t[start:start + len(s)], msg[start:start + len(s)]
            neg = candidates[torch.randint(len(candidates), (len(s),), generator=generator)]
            roots, root_t = torch.cat([s, d, neg]), torch.cat([bt, bt, bt])  # twofold's entries: one per root
            root, neighbour, e_id = neighbours(roots, root_t)
            n_id = torch.cat([roots, neighbour]).unique()
            assoc[n_id] = torch.arange(n_id.size(0))
            with torch.set_grad_enabled(train):
                z, _ = memory(n_id)
                z = attention(z[assoc[roots]], z[assoc[neighbour]], root, root_t[root] - t[e_id], msg[e_id])
                B = len(s)
                pos = decoder(z[:B], z[B:2 * B])
                negative = decoder(z[:B], z[2 * B:])
                loss = loss_fn(pos, torch.ones_like(pos)) + loss_fn(negative, torch.zeros_like(negative))
            memory.update_state(s, d, bt, bm)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                memory.detach()
            else:
                positives.append(pos.detach().view(-1))
                negatives.append(negative.detach().view(-1))
            losses.append(float(loss))
        return float(np.mean(losses)), positives, negatives

    def metrics(positives, negatives):
        scores = torch.cat(positives + negatives).numpy()
        labels = np.concatenate([np.ones(sum(len(q) for q in positives)), np.zeros(sum(len(q) for q in negatives))])
        return average_precision(scores, labels), roc_auc(scores, labels)

    started_all = time.perf_counter()
    for epoch in range(1, a.epochs + 1):
        started = time.perf_counter()
        memory.reset_state()
        memory.train(), attention.train(), decoder.train()
        train_loss, _, _ = run(0, train_end, True, torch.Generator().manual_seed(a.seed * 1000 + epoch))
        memory.eval(), attention.eval(), decoder.eval()
        _, vp, vn = run(train_end, validation_end, False, torch.Generator().manual_seed(7))
        _, tp, tn = run(validation_end, n, False, torch.Generator().manual_seed(8))
        (vap, vauc), (tap, tauc) = metrics(vp, vn), metrics(tp, tn)
        print(f"epoch {epoch:3d}  train loss {train_loss:.4f}  validation AP {vap:.4f} AUC {vauc:.4f}  "
              f"test AP {tap:.4f} AUC {tauc:.4f}  ({time.perf_counter() - started:.1f} s)", flush=True)
    print(f"final test AP {tap:.4f} AUC {tauc:.4f} after {a.epochs} epochs "
          f"({(time.perf_counter() - started_all) / 60:.1f} min)", flush=True)


if __name__ == "__main__":
    main()
