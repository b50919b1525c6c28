"""`torch.utils.flop_counter.FlopCounterMode`: the same counts as PyTorch's, by op and by
module, for the calls that decompose into matrix products and convolutions."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402
from jtorch.utils.flop_counter import FlopCounterMode as JMode  # noqa: E402


def _calls(lib):
    q = lib.ones(2, 4, 5, 8)
    F = lib.nn.functional
    return {
        "sdpa on cpu": lambda: F.scaled_dot_product_attention(q, q, q),
        "einsum": lambda: lib.einsum("ij,jk->ik", lib.ones(3, 4), lib.ones(4, 5)),
        "einsum chain": lambda: lib.einsum(
            "ij,jk,kl->il", lib.ones(3, 4), lib.ones(4, 5), lib.ones(5, 6)
        ),
        "addmm": lambda: lib.addmm(lib.ones(3, 5), lib.ones(3, 4), lib.ones(4, 5)),
        "baddbmm": lambda: lib.baddbmm(lib.ones(2, 3, 5), lib.ones(2, 3, 4), lib.ones(2, 4, 5)),
        "bmm": lambda: lib.bmm(lib.ones(2, 3, 4), lib.ones(2, 4, 5)),
        "conv1d groups": lambda: F.conv1d(lib.ones(1, 2, 10), lib.ones(4, 1, 3), groups=2),
        "conv2d stride": lambda: F.conv2d(lib.ones(2, 3, 9, 9), lib.ones(4, 3, 3, 3), stride=2),
        "conv_transpose2d": lambda: F.conv_transpose2d(lib.ones(1, 2, 5, 5), lib.ones(2, 3, 3, 3)),
        "linear 3d": lambda: F.linear(lib.ones(2, 3, 4), lib.ones(5, 4), lib.ones(5)),
        "linear no bias": lambda: F.linear(lib.ones(2, 3, 4), lib.ones(5, 4)),
        "matmul 3d@2d": lambda: lib.ones(2, 3, 4) @ lib.ones(4, 5),
        "matmul broadcast 1": lambda: lib.ones(2, 3, 4) @ lib.ones(1, 4, 5),
        "matmul batched": lambda: lib.ones(2, 3, 4).matmul(lib.ones(2, 4, 5)),
        "mv": lambda: lib.ones(3, 4) @ lib.ones(4),
        "mha": lambda: lib.nn.MultiheadAttention(8, 2)(
            lib.ones(3, 1, 8), lib.ones(3, 1, 8), lib.ones(3, 1, 8)
        ),
        "mha cross": lambda: lib.nn.MultiheadAttention(8, 2, batch_first=True)(
            lib.ones(1, 3, 8), lib.ones(1, 4, 8), lib.ones(1, 4, 8)
        ),
    }


def _counts(lib, mode_cls, call):
    with mode_cls(display=False) as m:
        call()
    return {
        str(op): n for op, n in m.get_flop_counts().get("Global", {}).items()
    }, m.get_total_flops()


@pytest.mark.parametrize("name", list(_calls(torch)))
def test_op_counts(name):
    from torch.utils.flop_counter import FlopCounterMode

    assert _counts(jtorch, JMode, _calls(jtorch)[name]) == _counts(
        torch, FlopCounterMode, _calls(torch)[name]
    )


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(8, 4)
            self.conv = lib.nn.Conv2d(3, 5, 3, padding=1)
            self.fc2 = lib.nn.Linear(4, 2, bias=False)

        def forward(self, x, img):
            return self.fc2(lib.relu(self.fc(x))).sum() + self.conv(img).sum()

    return Net()


def _module_run(lib, mode_cls, backward: bool):
    net = _net(lib)
    x, img = lib.ones(6, 8), lib.tensor(np.ones((1, 3, 7, 7)), dtype=lib.float32)
    with mode_cls(display=False, depth=3) as m:
        out = net(x, img)
        if backward:
            out.backward()
    counts = {k: {str(op): n for op, n in v.items()} for k, v in m.get_flop_counts().items()}
    return counts, m.get_total_flops()


def test_module_attribution_forward():
    from torch.utils.flop_counter import FlopCounterMode

    assert _module_run(jtorch, JMode, False) == _module_run(torch, FlopCounterMode, False)


def test_backward_totals():
    """Backward FLOPs are PyTorch's in total and per op; PyTorch's module tracker charges
    backward ops to modules in its own way, which jtorch does not copy (the modules whose
    forward made the op are charged)."""
    from torch.utils.flop_counter import FlopCounterMode

    (jc, jt), (tc, tt) = _module_run(jtorch, JMode, True), _module_run(torch, FlopCounterMode, True)
    assert jt == tt
    assert jc["Global"] == tc["Global"]
    assert jc["Net.fc"] == tc["Net.fc"] and jc["Net.fc2"] == tc["Net.fc2"]
