"""What the golden-file scripts share (peer_models.py for the library's models, peer_dysat.py for
DySAT): a case is twofold's initial parameters loaded into a PyTorch model by name, then STEPS
torch.optim.Adam steps on consecutive windows, every file verify/test_models_peer.c reads written
on the way. The scripts differ only in the model they build and the options twofold needs for it.
"""
import os
import shutil
import subprocess

import numpy as np
import torch

from pygt_common import load_dataset, window_loss

# Adam steps per case, each on the next window of `count` snapshots (must match STEPS in
# verify/test_models_peer.c).
STEPS = 10


def save(directory, name, tensor):
    np.save(os.path.join(directory, name + ".npy"), np.ascontiguousarray(tensor.detach().numpy().astype(np.float32)))


def adam_steps(model, windows, directory):
    """STEPS Adam steps (lr 0.01), one window each: loss (mean over snapshots of the per-snapshot MSE),
    gradients, update; writes step 1's outputs, loss, gradients and parameters after it, and every
    step's loss and parameters (the files verify/test_models_peer.c reads). Returns the losses."""
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    after = {key: [] for key, _ in model.named_parameters()}
    for step, snapshots in enumerate(windows):
        optimizer.zero_grad()
        outputs = model.window(snapshots)
        loss = window_loss(outputs, snapshots)
        loss.backward()
        losses.append(loss.detach().reshape(1))
        if step == 0:
            save(directory, "outputs", outputs)
            save(directory, "loss", loss.reshape(1))
            for key, parameter in model.named_parameters():
                save(directory, "grad." + key, parameter.grad)
        optimizer.step()
        for key, parameter in model.named_parameters():
            after[key].append(parameter.detach().clone())
            if step == 0:
                save(directory, "adam." + key, parameter)
    save(directory, "losses", torch.cat(losses))
    for key, values in after.items():
        save(directory, "steps." + key, torch.stack(values))
    return losses


def write_case(twofold, out, name, data, first, count, model_options, build_model):
    """Writes golden case OUT/NAME: twofold's initial parameters (seed 3) for `twofold train
    --data DATA MODEL_OPTIONS` (MODEL_OPTIONS names the model and its shape), copied into the case
    and loaded by state_dict name into build_model(features), then STEPS Adam steps, step s on the
    window of `count` snapshots from first + s * count; prints one line of what it ran."""
    directory = os.path.join(out, name)
    shutil.rmtree(directory, ignore_errors=True)
    dataset = load_dataset(data)
    if first + STEPS * count > len(dataset):
        raise SystemExit(f"{name}: {STEPS} windows of {count} snapshots from {first} need "
                         f"{first + STEPS * count} snapshots; {data} has {len(dataset)}")
    # twofold's initial parameters, in a scratch checkpoint; only the parameters are kept.
    scratch = directory + ".checkpoint"
    shutil.rmtree(scratch, ignore_errors=True)
    subprocess.run([twofold, "train", "--data", data, *model_options, "--epochs", "0", "--seed", "3",
                    "--save", scratch], check=True, stdout=subprocess.DEVNULL)
    os.makedirs(directory)
    windows = [dataset[first + s * count:first + (s + 1) * count] for s in range(STEPS)]
    model = build_model(windows[0][0].x.shape[1])
    state = {}
    for key, value in model.state_dict().items():
        path = os.path.join(scratch, key + ".npy")
        # the checkpoint's array may be shaped otherwise than the module's tensor (DySAT's GATConv
        # holds its attention vectors as [1][heads][width]): the same values in the same order
        state[key] = torch.from_numpy(np.load(path)).reshape(value.shape)
        shutil.copy(path, directory)
    model.load_state_dict(state)
    shutil.rmtree(scratch)

    losses = adam_steps(model, windows, directory)
    print(f"{name}: {STEPS} steps of {count} snapshots x {windows[0][0].x.shape[0]} vertices, "
          f"losses {losses[0].item():.6f} .. {losses[-1].item():.6f}, "
          f"{sum(p.numel() for p in model.parameters())} parameters")
