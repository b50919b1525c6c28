"""NumPy's argument spellings PyTorch's parser accepts (`axis` for `dim`, `keepdims` for
`keepdim`) and Python's types as dtypes, expression by expression against PyTorch."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402

CASES = [
    "torch.sum(x, axis=0)",
    "x.sum(axis=1, keepdims=True)",
    "torch.prod(x, 1, keepdims=True)",
    "torch.mean(x, axis=1)",
    "x.max(axis=0).values",
    "torch.cat([x, x], axis=0)",
    "x.argmax(axis=1)",
    "x.std(axis=0)",
    "torch.softmax(x, axis=1)",
    "x.squeeze(axis=0)",
    "x.cumsum(axis=1)",
    "x.unsqueeze(axis=0)",
    "torch.amax(x, axis=(0, 1))",
    "x.logsumexp(axis=0, keepdims=True)",
    "torch.var(x, axis=1, keepdims=False)",
    "x.sum(dim=0, axis=0)",
    "torch.softmax(x, 1, axis=1)",
    "x.mean(axis=0, keepdims=True)",
    "x.all(axis=0)",
    "torch.flip(x, [0]).sum(axis=-1)",
    "torch.stack([x, x], axis=1)",
]


def _run(lib, expr):
    x = lib.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    try:
        out = eval(expr, {"torch": lib, "x": x})
    except Exception as e:  # noqa: BLE001 - compared by type and message
        return ("raises", type(e).__name__, str(e))
    return ("ok", str(out.dtype), tuple(out.shape), np.asarray(out.tolist()).tolist())


@pytest.mark.parametrize("expr", CASES)
def test_aliases_match_pytorch(expr):
    assert _run(jtorch, expr) == _run(torch, expr)
