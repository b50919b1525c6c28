"""Writes tests/data/torch_checkpoint.pt with real PyTorch (run once; the file is committed).

    python tests/data/make_torch_checkpoint.py

tests/test_serialization.py loads it without torch installed and checks the values
below, which are defined by formulas here, not by any jtorch output.
"""

import collections
import os

import torch


def build():
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    lin = torch.nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.arange(6, dtype=torch.float32).reshape(2, 3) / 10)
        lin.bias.copy_(torch.tensor([0.5, -0.5]))
    opt = torch.optim.SGD(lin.parameters(), lr=0.1, momentum=0.9)
    lin(torch.ones(1, 3)).sum().backward()
    opt.step()
    return {
        "x": x,
        "x_col": x[:, 1],  # a view sharing x's storage
        "x_t": x.t(),  # non-contiguous
        "ints": torch.tensor([1, -2, 3], dtype=torch.int64),
        "half": torch.tensor([0.5, 1.5], dtype=torch.float16),
        "bf16": torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
        "cplx": torch.tensor([1 + 2j, -3j], dtype=torch.complex64),
        "mask": torch.tensor([True, False]),
        "model": lin.state_dict(),
        "optimizer": opt.state_dict(),
        "epoch": 7,
        "name": "tiny",
        "nested": collections.OrderedDict(a=[1.5, (2, 3)]),
    }


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(__file__), "torch_checkpoint.pt")
    torch.save(build(), out)
    print("wrote", out)
