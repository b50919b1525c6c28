"""The Module system against PyTorch: state_dict layout, load_state_dict reports and errors,
reprs of nested models, traversal and hooks."""

import collections

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _net(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(4)
            self.register_buffer("scale", lib.ones(1))
            self.register_buffer("cache", lib.zeros(2), persistent=False)

        def forward(self, x):
            return lib.relu(self.bn(self.conv(x))) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([Block(), Block()])
            self.shared = nn.Linear(4, 4)
            self.head = nn.Sequential(
                collections.OrderedDict(
                    pool=nn.AdaptiveAvgPool2d(1), flat=nn.Flatten(), fc=self.shared
                )
            )
            self.emb = nn.Embedding(10, 4, padding_idx=0)
            self.gamma = nn.Parameter(lib.zeros(3))

        def forward(self, x):
            return self.head(self.blocks[0](x))

    return Net()


def _run(fn):
    out = {}
    for name, lib in (("torch", torch), ("jtorch", jtorch)):
        try:
            out[name] = fn(lib)
        except Exception as e:  # noqa: BLE001 - the exception is the result compared
            out[name] = (type(e).__name__, str(e))
    return out["torch"], out["jtorch"]


def test_state_dict_keys_shapes_and_metadata():
    t, j = _run(
        lambda lib: [
            (k, tuple(v.shape), str(v.dtype)[6:]) for k, v in _net(lib).state_dict().items()
        ]
    )
    assert t == j
    t, j = _run(lambda lib: dict(_net(lib).state_dict()._metadata))
    assert t == j


def test_reprs_and_traversal():
    t, j = _run(lambda lib: repr(_net(lib)))
    assert t == j
    t, j = _run(
        lambda lib: (
            [n for n, _ in _net(lib).named_modules()],
            [n for n, _ in _net(lib).named_parameters()],
            [n for n, _ in _net(lib).named_buffers()],
            [n for n, _ in _net(lib).named_children()],
            [n for n, _ in _net(lib).named_parameters(remove_duplicate=False)],
        )
    )
    assert t == j


def _load(lib, mutate, strict=True):
    src = {k: v.detach().numpy() for k, v in _net(torch).state_dict().items()}
    mutate(src)
    sd = {k: lib.tensor(v) for k, v in src.items()}
    res = _net(lib).load_state_dict(sd, strict=strict)
    return (sorted(res.missing_keys), sorted(res.unexpected_keys), repr(res))


@pytest.mark.parametrize("case", ["ok", "missing", "unexpected", "shape", "nonstrict"])
def test_load_state_dict_reports_and_errors(case):
    def mutate(sd):
        if case == "missing":
            sd.pop("shared.weight")
            sd.pop("blocks.1.bn.running_var")
        elif case in ("unexpected", "nonstrict"):
            sd["blocks.0.extra"] = np.zeros(1, np.float32)
            sd["nothere.weight"] = np.zeros(1, np.float32)
            if case == "nonstrict":
                sd.pop("gamma")
        elif case == "shape":
            sd["emb.weight"] = np.zeros((3, 4), np.float32)

    t, j = _run(lambda lib: _load(lib, mutate, strict=case != "nonstrict"))
    assert t == j


def test_forward_hooks_and_train_eval():
    def run(lib):
        lib.manual_seed(0)
        m = _net(lib)
        seen = []
        h1 = m.head.register_forward_pre_hook(lambda mod, args: seen.append("pre"))
        m.head.register_forward_hook(lambda mod, args, out: seen.append(tuple(out.shape)))
        m.blocks[0].register_forward_hook(
            lambda mod, args, kwargs, out: seen.append(sorted(kwargs)), with_kwargs=True
        )
        x = lib.tensor(np.ones((1, 3, 5, 5), np.float32))
        m(x)
        h1.remove()
        m.eval()
        m(x)
        return seen, [mod.training for mod in m.modules()][:3]

    t, j = _run(run)
    assert t == j
