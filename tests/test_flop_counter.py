"""FlopCounterMode: FLOPs of matrix products and convolutions (2 per multiply-add), by op and
by module; backward FLOPs charged when gradients flow."""

import pytest

import jtorch
from jtorch.utils.flop_counter import FlopCounterMode, register_flop_formula


def _global(m):
    return {str(op): n for op, n in m.get_flop_counts()["Global"].items()}


def test_matrix_products():
    with FlopCounterMode(display=False) as m:
        jtorch.ones(3, 4) @ jtorch.ones(4, 5)  # 2*3*4*5
        jtorch.bmm(jtorch.ones(2, 3, 4), jtorch.ones(2, 4, 5))  # 2*2*3*4*5
        jtorch.nn.functional.linear(jtorch.ones(6, 4), jtorch.ones(5, 4), jtorch.ones(5))
        jtorch.ones(3) @ jtorch.ones(3)  # a dot: not counted
    assert _global(m) == {"aten.mm": 120, "aten.bmm": 240, "aten.addmm": 240}
    assert m.get_total_flops() == 600


def test_convolution():
    with FlopCounterMode(display=False) as m:
        # out (1, 5, 7, 7): 245 outputs, each 3*3*3 multiply-adds
        jtorch.nn.functional.conv2d(jtorch.ones(1, 3, 7, 7), jtorch.ones(5, 3, 3, 3), padding=1)
    assert _global(m) == {"aten.convolution": 2 * 245 * 27}


def test_modules_and_backward():
    net = jtorch.nn.Sequential(
        jtorch.nn.Linear(8, 4), jtorch.nn.ReLU(), jtorch.nn.Linear(4, 2, bias=False)
    )
    with FlopCounterMode(display=False) as m:
        net(jtorch.ones(6, 8)).sum().backward()
    counts = {k: {str(op): n for op, n in v.items()} for k, v in m.get_flop_counts().items()}
    fwd0, fwd2 = 2 * 6 * 8 * 4, 2 * 6 * 4 * 2
    # backward: the first layer's weight gradient only (its input needs none); both
    # gradients of the second layer
    assert counts["Sequential.0"] == {"aten.addmm": fwd0, "aten.mm": fwd0}
    assert counts["Sequential.2"] == {"aten.mm": fwd2 + 2 * fwd2}
    assert m.get_total_flops() == 2 * fwd0 + 3 * fwd2


def test_nothing_counted_outside_and_custom_formula():
    a = jtorch.ones(2, 2, requires_grad=True)
    with FlopCounterMode(display=False) as m:
        y = a @ a
    y.sum().backward()  # after the mode: not charged
    assert m.get_total_flops() == 16

    @register_flop_formula(jtorch.cumsum)
    def cumsum_flops(x, dim, **kwargs):
        return x.numel()

    with FlopCounterMode(display=False) as m:
        jtorch.cumsum(jtorch.ones(10), 0)
    assert m.get_total_flops() == 10


def test_table_needs_tabulate():
    m = FlopCounterMode(display=False)
    try:
        import tabulate  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            m.get_table()
