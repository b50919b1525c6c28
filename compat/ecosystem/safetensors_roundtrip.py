# compat: rtol=1e-6 atol=1e-7 timeout=300 requires=safetensors
"""safetensors as its users use it: save_file/load_file, save/load (bytes), safe_open with
get_tensor and get_slice, metadata, save_model/load_model with tied weights, the errors for
shared and non-contiguous tensors, the bytes written (header and data as PyTorch's), and a
file written by real PyTorch (data/safetensors_torch.safetensors, see
data/make_safetensors_fixture.py)."""

import hashlib
import json
import os
import struct
import tempfile

import numpy as np
import torch
from safetensors import safe_open
from safetensors.torch import load, load_file, load_model, save, save_file, save_model

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(0)


def describe_bytes(name, blob):
    """The header (keys sorted: its metadata order is a hash map's) and the data's sha256."""
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    print(f"{name}: header={json.dumps(header, sort_keys=True)[:160]}...")
    print(f"{name}: data sha256={hashlib.sha256(blob[8 + n:]).hexdigest()[:16]} "
          f"len={len(blob) - 8 - n}")


def show(name, t):
    v = t.detach().to(torch.float64) if t.dtype != torch.bool else t.to(torch.int64)
    print(f"{name}: {t.dtype} {list(t.shape)} sum={v.sum().item():.7g} "
          f"first={[round(float(x), 6) for x in v.reshape(-1)[:3].tolist()]}")


tensors = {
    "w": torch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32)),
    "ids": torch.arange(5, dtype=torch.int64) - 2,
    "half": torch.tensor([1.5, -2.5, 1024.0], dtype=torch.float16),
    "bf": torch.tensor([1.0, -2.0, 0.375], dtype=torch.bfloat16),
    "flag": torch.tensor([True, False, True]),
    "row": torch.from_numpy(rng.standard_normal((4, 6)).astype(np.float32))[1],  # a view
    "empty": torch.zeros(0, 3),
}

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "t.safetensors")
    save_file(tensors, path, metadata={"format": "pt", "step": "3"})
    describe_bytes("file", open(path, "rb").read())
    back = load_file(path)
    for k in sorted(back):
        show("load_file " + k, back[k])
    with safe_open(path, framework="pt") as f:
        print("keys:", sorted(f.keys()), "metadata:", sorted(f.metadata().items()))
        sl = f.get_slice("w")
        print("slice shape/dtype:", sl.get_shape(), sl.get_dtype())
        show("w[1:3, ::2]", sl[1:3, ::2])
        show("w[-1]", sl[-1])
        show("get_tensor ids", f.get_tensor("ids"))

    blob = save(tensors)
    describe_bytes("save()", blob)
    for k, t in sorted(load(blob).items()):
        show("load " + k, t)

    # A model with tied weights: save_model keeps one copy, load_model restores both.
    class Tied(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(7, 4)
            self.proj = torch.nn.Linear(4, 7)
            self.proj.weight = self.emb.weight

    model = Tied()
    with torch.no_grad():
        for _name, p in sorted(model.named_parameters()):
            p.copy_(torch.from_numpy(rng.standard_normal(p.shape).astype(np.float32)))
    mpath = os.path.join(d, "m.safetensors")
    save_model(model, mpath)
    with safe_open(mpath, framework="pt") as f:
        print("saved model keys:", sorted(f.keys()))
    fresh = Tied()
    print("load_model:", load_model(fresh, mpath))
    print("tied after load:", fresh.proj.weight is fresh.emb.weight,
          torch.equal(fresh.emb.weight, model.emb.weight),
          torch.equal(fresh.proj.bias, model.proj.bias))

    for what, bad in (("shared", {"a": tensors["w"], "b": tensors["w"][0]}),
                      ("non-contiguous", {"a": tensors["w"].t()})):
        try:
            save_file(bad, path)
            print(what, "saved?!")
        except (RuntimeError, ValueError) as e:
            print(what, type(e).__name__, " ".join(str(e).split())[:70])

# Written by real PyTorch's safetensors, read here.
fixture = os.path.join(HERE, "data", "safetensors_torch.safetensors")
with safe_open(fixture, framework="pt") as f:
    print("fixture metadata:", sorted(f.metadata().items()))
    for k in sorted(f.keys()):
        show("fixture " + k, f.get_tensor(k))
    show("fixture embed[2:5, 1:3]", f.get_slice("embed.weight")[2:5, 1:3])
loaded = load_file(fixture)
print("fixture load_file:", sorted((k, str(v.dtype), list(v.shape)) for k, v in loaded.items()))
