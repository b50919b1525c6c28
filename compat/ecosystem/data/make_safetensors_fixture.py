"""Writes `safetensors_torch.safetensors`, read by `../safetensors_roundtrip.py`.

Run with real PyTorch and safetensors (not under jtorch): `python make_safetensors_fixture.py`.
The values are formulas, so the reading side can print them and the two runs compare.
"""

import os

import torch
from safetensors.torch import save_file

HERE = os.path.dirname(os.path.abspath(__file__))

tensors = {
    "embed.weight": (torch.arange(24, dtype=torch.float32).reshape(6, 4) / 7.0 - 1.5),
    "norm.weight": torch.linspace(0.5, 2.0, 4, dtype=torch.float32).to(torch.bfloat16),
    "scale": torch.tensor([0.25, -1.5, 3.0], dtype=torch.float16),
    "positions": torch.arange(10, dtype=torch.int64) * 3 - 7,
    "mask": torch.tensor([[True, False, True], [False, False, True]]),
    "counts": torch.arange(5, dtype=torch.int32),
    "bytes": torch.arange(250, 256, dtype=torch.uint8),
    "double": torch.tensor([1e-300, 2.5, -1e300], dtype=torch.float64),
    "scalar": torch.tensor(4.5),
}
save_file(tensors, os.path.join(HERE, "safetensors_torch.safetensors"),
          metadata={"format": "pt", "written_by": "torch " + torch.__version__.split("+")[0]})
