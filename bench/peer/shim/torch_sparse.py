"""Stand-in for the torch_sparse package, which torch_geometric_temporal 0.56 imports at
start-up (for EvolveGCN-H's SparseTensor type) but which has no wheel for recent torch.
twofold's scripts never use sparse tensors from it; anything that tries fails loudly."""


class SparseTensor:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("torch_sparse is not installed; this is twofold's import shim")


def matmul(*args, **kwargs):
    raise NotImplementedError("torch_sparse is not installed; this is twofold's import shim")
