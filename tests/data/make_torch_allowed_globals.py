"""Writes tests/data/torch_allowed_globals.pt with real PyTorch (run once; the file is committed).

    python tests/data/make_torch_allowed_globals.py

One object of each kind PyTorch's weights-only unpickler accepts, as `torch.save` writes it
(a protocol-2 pickle: `set` is the global `__builtin__.set`, bytes go through
`_codecs.encode`, dtypes without a legacy storage class through `_rebuild_tensor_v3`, tensors
with attributes through `_rebuild_from_type_v2`). tests/test_serialization.py loads it without
torch and checks the values given by the formulas here.
"""

import collections
import os
import warnings

import torch


def build():
    attr = torch.arange(3, dtype=torch.float32)
    attr.note = "kept"
    tagged = torch.nn.Parameter(torch.full((2,), 0.5))
    tagged.tag = 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        typed = torch.arange(3, dtype=torch.float64).storage()
    return {
        "set": {1, 2, 3},
        "empty_set": set(),
        "complex": 1.5 - 2j,
        "bytearray": bytearray(b"\x00\xffjt"),
        "bytes": b"\x00\x01ab",
        "counter": collections.Counter("abca"),
        "ordered": collections.OrderedDict(b=2, a=1),
        "size": torch.Size([2, 3]),
        "device": torch.device("cuda", 1),
        "cpu": torch.device("cpu"),
        "dtypes": [
            torch.float32,
            torch.bfloat16,
            torch.uint16,
            torch.float8_e5m2,
            torch.bool,
            torch.complex128,
        ],
        "layout": torch.strided,
        "uint16": torch.tensor([1, 65535], dtype=torch.uint16),
        "uint32": torch.tensor([7, 2**32 - 1], dtype=torch.uint32),
        "uint64": torch.tensor([2**63 + 5], dtype=torch.uint64),
        "float8_e4m3fn": torch.tensor([0.5, -2.0], dtype=torch.float8_e4m3fn),
        "float8_e5m2": torch.tensor([0.25, 3.0], dtype=torch.float8_e5m2),
        "complex32": torch.tensor([1 + 1j, -0.5j], dtype=torch.complex32),
        "meta": torch.empty(2, 3, device="meta"),
        "param": torch.nn.Parameter(torch.ones(2)),
        "frozen_param": torch.nn.Parameter(torch.zeros(1), requires_grad=False),
        "param_with_state": tagged,
        "tensor_with_attr": attr,
        "requires_grad": torch.ones(2, requires_grad=True),
        "big_int": 2**70,
        "negative": -(2**40),
        "float": 0.25,
        "none": None,
        "bools": (True, False),
        "nested": [(1, "two"), {3: [4.5]}],
        "typed_storage": typed,
        "untyped_storage": torch.tensor([1, 2], dtype=torch.int16).untyped_storage(),
    }


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(__file__), "torch_allowed_globals.pt")
    torch.save(build(), out)
    print("wrote", out)
