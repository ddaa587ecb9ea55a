"""Golden files for twofold's graph attention layer (ref/nn/graph_attention.h) from PyTorch
Geometric's own GATConv.

For each case below the script draws a small graph and its inputs from a fixed seed (with a
stored self-loop, a duplicated edge and a vertex without in-edges, the cases GATConv's self-loop
handling and softmax must get right), builds torch_geometric.nn.GATConv with the case's heads
and concat, sets its parameters to drawn values (the bias too, which GATConv starts at zero),
and writes to verify/golden/gat/CASE/:

    x.npy [N][F], edge_index.npy [2][E] (int64, row 0 the sources), r.npy [N][width],
    att_src.npy, att_dst.npy, bias.npy, lin.weight.npy   (the parameters, PyG's names)
    out.npy [N][width]                                     GATConv(x, edge_index)
    grad.x.npy, grad.att_src.npy, ...                      gradients of sum(r * out)

verify/test_models_peer.c runs twofold's layer on the same arrays and compares.

    python bench/peer/peer_gatconv.py      (from the repository root; needs torch-geometric only)
"""
import os

import numpy as np
import torch
from torch_geometric.nn import GATConv

# name, vertices, input width, heads, channels per head, concat
CASES = [
    ("concat", 7, 5, 3, 4, True),
    ("mean", 7, 5, 2, 3, False),
]


def draw_graph(rng, n):
    """Random in-edges plus the awkward ones: a stored loop on 1, 2 -> 3 twice, nothing into n - 1."""
    edges = [(int(rng.integers(n)), int(rng.integers(n - 1))) for _ in range(12)]
    edges += [(1, 1), (2, 3), (2, 3)]
    return np.array(edges, dtype=np.int64).T  # [2][E]: sources, destinations


def write_case(root, name, n, features, heads, channels, concat):
    rng = np.random.default_rng(29)
    torch.manual_seed(29)
    edge_index = draw_graph(rng, n)
    width = heads * channels if concat else channels
    x = rng.uniform(-1, 1, (n, features)).astype(np.float32)
    r = rng.uniform(-1, 1, (n, width)).astype(np.float32)
    conv = GATConv(features, channels, heads=heads, concat=concat)
    values = {}
    with torch.no_grad():
        for key, parameter in conv.named_parameters():
            drawn = rng.uniform(-1, 1, tuple(parameter.shape)).astype(np.float32)
            parameter.copy_(torch.from_numpy(drawn))
            values[key] = drawn
    x_t = torch.from_numpy(x).requires_grad_(True)
    out = conv(x_t, torch.from_numpy(edge_index))
    (out * torch.from_numpy(r)).sum().backward()
    directory = os.path.join(root, name)
    os.makedirs(directory, exist_ok=True)
    arrays = {"x": x, "edge_index": edge_index, "r": r, "out": out.detach().numpy(),
              "grad.x": x_t.grad.numpy()}
    for key, parameter in conv.named_parameters():
        arrays[key] = values[key]
        arrays["grad." + key] = parameter.grad.numpy()
    for key, array in arrays.items():
        np.save(os.path.join(directory, key + ".npy"), array)
    print(name, "parameters:", ", ".join(f"{k} {tuple(v.shape)}" for k, v in values.items()))


def main():
    root = os.path.join("verify", "golden", "gat")
    for case in CASES:
        write_case(root, *case)


if __name__ == "__main__":
    main()
