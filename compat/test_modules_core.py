"""Module parity for the core layers (Linear, Bilinear, containers, Flatten, Identity)."""

import numpy as np
import pytest

pytest.importorskip("torch")

from compat.module_parity import Case, check  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


CASES = [
    Case("Linear", lambda nn: nn.Linear(5, 3), (_x(4, 5),)),
    Case("Linear.nobias", lambda nn: nn.Linear(5, 3, bias=False), (_x(2, 3, 5),)),
    Case("Bilinear", lambda nn: nn.Bilinear(3, 4, 2), (_x(5, 3), _x(5, 4))),
    Case("Identity", lambda nn: nn.Identity(7, k=2), (_x(2, 3),)),
    Case("Flatten", lambda nn: nn.Flatten(), (_x(2, 3, 4),)),
    Case("Unflatten", lambda nn: nn.Unflatten(1, (2, 2)), (_x(3, 4),)),
    Case(
        "Sequential.mlp",
        lambda nn: nn.Sequential(
            nn.Linear(4, 8), nn.Flatten(0), nn.Unflatten(0, (2, 8)), nn.Linear(8, 2)
        ),
        (_x(2, 4),),
    ),
    Case(
        "ModuleList",
        lambda nn: nn.ModuleList([nn.Linear(3, 3) for _ in range(3)]),
        (_x(2, 3),),
        forward=lambda m, x: m[2](m[1](m[0](x))),
    ),
    Case(
        "ModuleDict",
        lambda nn: nn.ModuleDict({"b": nn.Linear(3, 2), "a": nn.Identity()}),
        (_x(2, 3),),
        forward=lambda m, x: m["a"](m["b"](x)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_module_parity(case):
    err = check(case)
    assert err is None, err
