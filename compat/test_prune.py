"""`torch.nn.utils.prune` parity.

Deterministic methods (L1, Ln-structured, custom masks, identity, global L1, iterative
containers) are compared exactly after copying PyTorch's weights: masks, state_dict keys and
values, hooks, outputs, gradients and `remove()`. Random methods draw from a different
stream, so only how many entries/channels they prune, and the shape of what they prune,
is compared. Errors: same type and message.
"""

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.utils.prune  # noqa: E402,F401  (PyTorch does not import it eagerly)

import jtorch  # noqa: E402

_rng = np.random.default_rng(0)
_W = _rng.standard_normal((4, 5)).astype(np.float32)
_B = _rng.standard_normal(4).astype(np.float32)
_X = _rng.standard_normal((2, 5)).astype(np.float32)
_SCORES = _rng.standard_normal((4, 5)).astype(np.float32)
_MASK = (_rng.random((4, 5)) > 0.3).astype(np.float32)


def _linear(lib):
    m = lib.nn.Linear(5, 4)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(_W))
        m.bias.copy_(lib.tensor(_B))
    return m


def _np(t):
    return t.detach().numpy()


def _same_state(tm, jm):
    ts, js = tm.state_dict(), jm.state_dict()
    assert list(js) == list(ts)
    for k in ts:
        assert str(js[k].dtype) == str(ts[k].dtype), k
        np.testing.assert_array_equal(_np(js[k]), _np(ts[k]), err_msg=k)
    assert [n for n, _ in jm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert [n for n, _ in jm.named_buffers()] == [n for n, _ in tm.named_buffers()]


def _hook_kinds(m):
    kinds = []
    for h in m._forward_pre_hooks.values():
        inner = [type(x).__name__ for x in h] if hasattr(h, "_pruning_methods") else []
        kinds.append((type(h).__name__, h._tensor_name, inner))
    return kinds


# Recipes: (function name, tensor name, kwargs); `scores`/`mask` stand for fixed arrays.
_RECIPES = {
    "l1_float": [("l1_unstructured", "weight", {"amount": 0.3})],
    "iterative": [
        ("l1_unstructured", "weight", {"amount": 5}),
        ("ln_structured", "weight", {"amount": 1, "n": 2, "dim": 0}),
        ("ln_structured", "weight", {"amount": 0.5, "n": 1, "dim": -1}),
        ("l1_unstructured", "weight", {"amount": 0.0}),
        ("identity", "weight", {}),
        ("l1_unstructured", "bias", {"amount": 1}),
    ],
    "scores_and_mask": [
        ("custom_from_mask", "weight", {"mask": "mask"}),
        ("l1_unstructured", "weight", {"amount": 3, "importance_scores": "scores"}),
        (
            "ln_structured",
            "weight",
            {"amount": 1, "n": float("inf"), "dim": 1, "importance_scores": "scores"},
        ),
    ],
    "fro_then_mask": [
        ("ln_structured", "weight", {"amount": 2, "n": "fro", "dim": 0}),
        ("custom_from_mask", "weight", {"mask": "mask"}),
    ],
}


def _run(lib, recipe):
    m = _linear(lib)
    fixed = {"mask": lib.tensor(_MASK), "scores": lib.tensor(_SCORES)}
    for fn, name, kw in recipe:
        kw = {k: fixed[v] if isinstance(v, str) and v in fixed else v for k, v in kw.items()}
        out = getattr(lib.nn.utils.prune, fn)(m, name, **kw)
        assert out is m
    return m


@pytest.mark.parametrize("recipe", list(_RECIPES))
def test_deterministic_pruning(recipe):
    tm, jm = _run(torch, _RECIPES[recipe]), _run(jtorch, _RECIPES[recipe])
    _same_state(tm, jm)
    assert _hook_kinds(jm) == _hook_kinds(tm)
    assert jtorch.nn.utils.prune.is_pruned(jm) is torch.nn.utils.prune.is_pruned(tm) is True
    assert type(jm.weight).__name__ == type(tm.weight).__name__ == "Tensor"
    np.testing.assert_array_equal(_np(jm.weight), _np(tm.weight))

    ty, jy = tm(torch.tensor(_X)), jm(jtorch.tensor(_X))
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=1e-6, atol=1e-6)
    (ty**2).sum().backward()
    (jy**2).sum().backward()
    for (n, tp), (_, jp) in zip(tm.named_parameters(), jm.named_parameters()):
        np.testing.assert_allclose(_np(jp.grad), _np(tp.grad), rtol=1e-5, atol=1e-6, err_msg=n)

    for name in ("weight", "bias"):
        if hasattr(tm, name + "_orig"):
            torch.nn.utils.prune.remove(tm, name)
            jtorch.nn.utils.prune.remove(jm, name)
    _same_state(tm, jm)
    assert jtorch.nn.utils.prune.is_pruned(jm) is torch.nn.utils.prune.is_pruned(tm) is False
    assert isinstance(jm.weight, jtorch.nn.Parameter) and not jm._forward_pre_hooks


def test_hook_recomputes_and_state_dict_moves():
    tm, jm = _run(torch, _RECIPES["l1_float"]), _run(jtorch, _RECIPES["l1_float"])
    with torch.no_grad():
        tm.weight_orig.mul_(2)
    with jtorch.no_grad():
        jm.weight_orig.mul_(2)
    np.testing.assert_allclose(
        _np(jm(jtorch.tensor(_X))), _np(tm(torch.tensor(_X))), rtol=1e-6, atol=1e-6
    )
    np.testing.assert_array_equal(_np(jm.weight), _np(tm.weight))
    # A PyTorch state_dict of a pruned module loads into a pruned jtorch module.
    fresh = _run(jtorch, _RECIPES["l1_float"])
    fresh.load_state_dict({k: jtorch.tensor(_np(v)) for k, v in tm.state_dict().items()})
    _same_state(tm, fresh)


def _seq(lib):
    m = lib.nn.Sequential(lib.nn.Linear(5, 4), lib.nn.Linear(4, 3))
    with lib.no_grad():
        for p, a in zip(m.parameters(), _rng_params()):
            p.copy_(lib.tensor(a))
    return m


def _rng_params():
    r = np.random.default_rng(1)
    return [r.standard_normal(s).astype(np.float32) for s in ((4, 5), (4,), (3, 4), (3,))]


def test_global_unstructured():
    models = {}
    for lib in (torch, jtorch):
        m = _seq(lib)
        P = lib.nn.utils.prune
        P.l1_unstructured(m[1], "weight", amount=2)
        params = [(m[0], "weight"), (m[1], "weight"), (m[1], "bias")]
        P.global_unstructured(params, pruning_method=P.L1Unstructured, amount=0.4)
        scores = {(m[0], "weight"): lib.tensor(_SCORES)}
        P.global_unstructured(params, P.L1Unstructured, importance_scores=scores, amount=3)
        models[lib] = m
    tm, jm = models[torch], models[jtorch]
    _same_state(tm, jm)
    for tsub, jsub in zip(tm, jm):
        assert _hook_kinds(jsub) == _hook_kinds(tsub)
    x = np.ones((1, 5), np.float32)
    np.testing.assert_allclose(_np(jm(jtorch.tensor(x))), _np(tm(torch.tensor(x))), rtol=1e-5)


def test_method_prune_and_containers():
    for lib in (torch, jtorch):
        P = lib.nn.utils.prune
        t = lib.tensor(_W)
        dm = lib.tensor(_MASK)
        got = [
            P.L1Unstructured(amount=0.5).prune(t),
            P.L1Unstructured(amount=4).prune(t, importance_scores=lib.tensor(_SCORES)),
            P.LnStructured(amount=2, n=1, dim=1).prune(t, default_mask=dm),
            P.CustomFromMask(mask=dm).prune(t),
        ]
        if lib is torch:
            expect = [_np(g) for g in got]
        else:
            for g, e in zip(got, expect):
                np.testing.assert_array_equal(_np(g), e)


def _random_masks(lib):
    lib.manual_seed(0)
    P = lib.nn.utils.prune
    m = _linear(lib)
    P.l1_unstructured(m, "weight", amount=3)
    P.random_unstructured(m, "weight", amount=0.4)
    P.random_unstructured(m, "bias", amount=1)
    c = _linear(lib)
    P.random_structured(c, "weight", amount=2, dim=1)
    P.random_structured(c, "weight", amount=0.5, dim=0)
    return _np(m.weight_mask), _np(m.bias_mask), _np(c.weight_mask)


def test_random_methods_counts_and_structure():
    tw, tb, tc = _random_masks(torch)
    jw, jb, jc = _random_masks(jtorch)
    assert (jw == 0).sum() == (tw == 0).sum() == 3 + round(0.4 * 17)
    assert (jb == 0).sum() == (tb == 0).sum() == 1
    # structured: whole rows and columns are either kept or pruned
    for c in (tc, jc):
        kept_cols = c.any(axis=0)
        kept_rows = c.any(axis=1)
        np.testing.assert_array_equal(c, np.outer(kept_rows, kept_cols).astype(np.float32))
        assert kept_cols.sum() == 3 and kept_rows.sum() == 2


def _norm_msg(e):
    msg = re.sub(r" at 0x[0-9a-f]+", "", str(e))
    return msg.replace("jtorch", "torch")


def _named_container(P):
    c = P.PruningContainer()
    c._tensor_name = "weight"
    return c


def _errors(lib):
    P = lib.nn.utils.prune
    m = _linear(lib)
    bad = lib.ones(2, 2)
    cases = {
        "neg_int": lambda: P.l1_unstructured(m, "weight", amount=-1),
        "float_gt1": lambda: P.random_unstructured(m, "weight", amount=1.5),
        "str_amount": lambda: P.l1_unstructured(m, "weight", amount="a"),
        "too_many": lambda: P.l1_unstructured(m, "weight", amount=21),
        "struct_1d": lambda: P.ln_structured(m, "bias", amount=1, n=2, dim=0),
        "bad_dim": lambda: P.random_structured(m, "weight", amount=1, dim=2),
        "scores_shape": lambda: P.l1_unstructured(m, "weight", 1, importance_scores=bad),
        "missing": lambda: P.identity(m, "nope"),
        "remove_unpruned": lambda: P.remove(m, "weight"),
        "global_struct": lambda: P.global_unstructured(
            [(m, "weight")], P.LnStructured, amount=1, n=2
        ),
        "global_not_iter": lambda: P.global_unstructured(3, P.L1Unstructured, amount=1),
        "global_scores": lambda: P.global_unstructured(
            [(m, "weight")], P.L1Unstructured, importance_scores=[1], amount=1
        ),
        "add_unnamed": lambda: P.PruningContainer(P.Identity()),
        "add_not_method": lambda: _named_container(P).add_pruning_method(3),
    }
    out = {}
    for k, fn in cases.items():
        with pytest.raises(Exception) as info:
            fn()
        out[k] = (type(info.value).__name__, _norm_msg(info.value))
    # Second pruning that fails leaves the first one in place.
    P.l1_unstructured(m, "weight", amount=2)
    with pytest.raises(ValueError) as info:
        P.l1_unstructured(m, "weight", amount=19)
    out["second_too_many"] = ("ValueError", _norm_msg(info.value))
    c = P.PruningContainer(P.Identity.apply(_linear(lib), "weight"))
    with pytest.raises(ValueError) as info:
        c.add_pruning_method(P.Identity.apply(_linear(lib), "bias"))
    out["container_name"] = ("ValueError", _norm_msg(info.value))
    return out, m


def test_errors_match():
    te, tm = _errors(torch)
    je, jm = _errors(jtorch)
    assert je == te
    _same_state(tm, jm)
