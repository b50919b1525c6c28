"""`torch.nn.attention.flex_attention` parity with PyTorch.

Values and statistics are compared with PyTorch's `flex_attention` on CPU. PyTorch compiles
each call there (seconds per mod and shape); most cases set its
`_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG` switch, which runs the same computation uncompiled
(PyTorch's math reference), and a few cases run the compiled path as users do. PyTorch's CPU
build has no flex backward, so gradients are compared with the gradients of that math
reference (`torch._higher_order_ops.flex_attention.math_attention`) under PyTorch's autograd.
Block tables (partial and full, kv and q), printing, slicing and `_adjust` are compared
exactly; bad arguments raise PyTorch's exception type and message.
"""

import math
import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import torch.nn.attention.flex_attention as tfa  # noqa: E402
from torch._higher_order_ops.flex_attention import math_attention  # noqa: E402

import jtorch  # noqa: E402
import jtorch.nn.attention.flex_attention as jfa  # noqa: E402

LIBS = {"torch": (torch, tfa), "jtorch": (jtorch, jfa)}


@pytest.fixture(autouse=True)
def _quiet_and_uncompiled(monkeypatch):
    monkeypatch.setattr(tfa, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ---------------------------------------------------------------------------
# Mods: each builds its score_mod / mask_mod for one library (closures over that library's
# tensors, as users write them).


def _doc_ids(n):
    return np.repeat(np.arange(5), 1 + n // 5)[:n]


MASKS = {
    "causal": lambda lib, L, S: lambda b, h, q, kv: q >= kv,
    "window_causal": lambda lib, L, S: lib[1].and_masks(
        lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: (q - kv).abs() <= 3
    ),
    "prefix_lm": lambda lib, L, S: lib[1].or_masks(
        lambda b, h, q, kv: q >= kv, lambda b, h, q, kv: kv < 4
    ),
    "document": lambda lib, L, S: (lambda d: lambda b, h, q, kv: d[q] == d[kv])(
        lib[0].tensor(_doc_ids(max(L, S)))
    ),
    "padding_per_batch": lambda lib, L, S: (lambda n: lambda b, h, q, kv: kv < n[b])(
        lib[0].tensor([S, S // 2, 3][:3])
    ),
    "rows_empty": lambda lib, L, S: lambda b, h, q, kv: (q >= kv) & (q % 4 != 1),
    "head_dependent": lambda lib, L, S: lambda b, h, q, kv: (kv <= q + h) | (h == 0),
    "noop": lambda lib, L, S: lib[1].noop_mask,
}

SCORES = {
    "none": None,
    "alibi": lambda lib, H: (lambda s: lambda score, b, h, q, kv: score + s[h] * (kv - q))(
        lib[0].tensor([2.0 ** (-(i + 1)) for i in range(H)])
    ),
    "softcap": lambda lib, H: lambda score, b, h, q, kv: 3.0 * lib[0].tanh(score / 3.0),
    "rel_bias_table": lambda lib, H: (
        lambda t: lambda score, b, h, q, kv: score + t[h, (q - kv).clamp(-8, 8) + 8]
    )(lib[0].tensor(np.random.default_rng(3).standard_normal((H, 17)), dtype=lib[0].float32)),
    # transformers' flex_attention_forward: chained indexing, which only vmap makes scalar
    "hf_chained_index": lambda lib, H: (
        lambda m: lambda score, b, h, q, kv: score + m[b][0][q][kv]
    )(
        lib[0].tensor(
            np.random.default_rng(4).standard_normal((3, 1, 40, 40)), dtype=lib[0].float32
        )
    ),
    "causal_by_score": lambda lib, H: (
        lambda score, b, h, q, kv: lib[0].where(q >= kv, score, -float("inf"))
    ),
}

# (B, Hq, L, E, Hkv, S, Ev)
SHAPES = {
    "gqa": (2, 4, 10, 8, 2, 12, 6),
    "mha_square": (1, 2, 16, 8, 2, 16, 8),
    "odd_lengths": (2, 2, 37, 4, 1, 29, 5),
    "cross_block": (1, 1, 150, 8, 1, 140, 4),
}


def _qkv(shape, dtype="float32", seed=0):
    B, Hq, L, E, Hkv, S, Ev = shape
    rng = np.random.default_rng(seed)
    arrays = (
        rng.standard_normal((B, Hq, L, E)),
        rng.standard_normal((B, Hkv, S, E)),
        rng.standard_normal((B, Hkv, S, Ev)),
    )
    return {
        name: tuple(lib.tensor(a.astype(np.float32), dtype=getattr(lib, dtype)) for a in arrays)
        for name, (lib, _) in LIBS.items()
    }


def _np(t):
    return t.detach().float().numpy() if t is not None else None


def _run(
    name,
    shape,
    mask_name=None,
    score_name=None,
    dtype="float32",
    B_mask="B",
    block=128,
    scale=None,
    aux=("lse",),
):
    B, Hq, L, _, Hkv, S, _ = shape
    res = {}
    qkv = _qkv(shape, dtype)
    for lib_name, lib in LIBS.items():
        score_mod = SCORES[score_name](lib, Hq) if score_name else None
        bm = None
        if mask_name:
            bm = lib[1].create_block_mask(
                MASKS[mask_name](lib, L, S),
                B if B_mask == "B" else None,
                None,
                L,
                S,
                device="cpu",
                BLOCK_SIZE=block,
            )
        q, k, v = qkv[lib_name]
        out, a = lib[1].flex_attention(
            q,
            k,
            v,
            score_mod=score_mod,
            block_mask=bm,
            scale=scale,
            enable_gqa=Hq != Hkv,
            return_aux=lib[1].AuxRequest(lse="lse" in aux),
        )
        res[lib_name] = (out, a)
    (to, ta), (jo, ja) = res["torch"], res["jtorch"]
    assert str(jo.dtype) == str(to.dtype)
    assert tuple(jo.shape) == tuple(to.shape)
    tol = (
        dict(rtol=2e-2, atol=2e-2)
        if dtype in ("bfloat16", "float16")
        else dict(rtol=1e-5, atol=1e-5)
    )
    np.testing.assert_allclose(_np(jo), _np(to), **tol)
    if "lse" in aux:
        assert str(ja.lse.dtype) == str(ta.lse.dtype)
        np.testing.assert_allclose(_np(ja.lse), _np(ta.lse), **tol)  # -inf rows included
    return res


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("mask_name", [None, "causal", "window_causal", "rows_empty"])
def test_values_over_shapes(shape, mask_name):
    _run("v", SHAPES[shape], mask_name=mask_name)


@pytest.mark.parametrize("mask_name", list(MASKS))
def test_mask_mods(mask_name):
    shape = (3, 2, 20, 4, 2, 20, 4) if mask_name == "padding_per_batch" else SHAPES["odd_lengths"]
    _run("m", shape, mask_name=mask_name)


@pytest.mark.parametrize("score_name", [s for s in SCORES if s != "none"])
def test_score_mods(score_name):
    shape = (3, 4, 40, 8, 2, 40, 8) if score_name == "hf_chained_index" else SHAPES["gqa"]
    _run("s", shape, score_name=score_name, mask_name="causal")


@pytest.mark.parametrize("dtype", ["float64", "bfloat16", "float16"])
def test_dtypes(dtype):
    _run("d", SHAPES["gqa"], mask_name="causal", score_name="softcap", dtype=dtype)


def test_block_size_and_mask_batch_broadcast_and_scale():
    _run("b", SHAPES["cross_block"], mask_name="document", block=(32, 16), B_mask=None, scale=0.3)


def test_compiled_pytorch_path():
    """PyTorch's compiled CPU kernel (what users get by default) agrees too."""
    tfa._FLEX_ATTENTION_DISABLE_COMPILE_DEBUG = False
    _run("c", SHAPES["odd_lengths"], mask_name="rows_empty", score_name="alibi")


def test_return_lse_legacy_and_plain_output():
    q, k, v = _qkv(SHAPES["mha_square"])["torch"]
    jq, jk, jv = _qkv(SHAPES["mha_square"])["jtorch"]
    to, tl = tfa.flex_attention(q, k, v, return_lse=True)
    jo, jl = jfa.flex_attention(jq, jk, jv, return_lse=True)
    np.testing.assert_allclose(_np(jl), _np(tl), rtol=1e-5, atol=1e-5)
    ta = tfa.flex_attention(q, k, v, return_aux=tfa.AuxRequest())
    ja = jfa.flex_attention(jq, jk, jv, return_aux=jfa.AuxRequest())
    assert type(ja[1]).__name__ == type(ta[1]).__name__ == "AuxOutput"
    assert ja[1] == (None, None) and ta[1] == (None, None)
    assert not isinstance(jfa.flex_attention(jq, jk, jv), tuple)


def test_batch_broadcast_of_key_value():
    shape = (3, 2, 12, 4, 2, 12, 4)
    data = _qkv(shape)
    outs = {}
    for name, lib in LIBS.items():
        q, k, v = data[name]
        bm = lib[1].create_block_mask(
            MASKS["padding_per_batch"](lib, 12, 12), 3, None, 12, 12, device="cpu"
        )
        outs[name] = lib[1].flex_attention(q, k[:1], v[:1], block_mask=bm)
    np.testing.assert_allclose(_np(outs["jtorch"]), _np(outs["torch"]), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Gradients (against PyTorch's math reference under PyTorch's autograd)


@pytest.mark.parametrize(
    "case",
    [
        ("causal", "alibi", "gqa"),
        ("rows_empty", None, "odd_lengths"),
        ("window_causal", "softcap", "mha_square"),
        (None, "rel_bias_table", "gqa"),
    ],
)
def test_gradients(case):
    mask_name, score_name, shape_name = case
    shape = SHAPES[shape_name]
    B, Hq, L, E, Hkv, S, Ev = shape
    rng = np.random.default_rng(7)
    w_out = rng.standard_normal((B, Hq, L, Ev)).astype(np.float32)
    w_lse = rng.standard_normal((B, Hq, L)).astype(np.float32)
    data = _qkv(shape)
    grads = {}
    for name, lib in LIBS.items():
        t = lib[0]
        q, k, v = (x.clone().requires_grad_(True) for x in data[name])
        score_mod = SCORES[score_name](lib, Hq) if score_name else lib[1]._identity
        mask_mod = MASKS[mask_name](lib, L, S) if mask_name else lib[1].noop_mask
        bm = lib[1].create_block_mask(mask_mod, B, None, L, S, device="cpu")
        if name == "torch":
            out, lse, _ = math_attention(q, k, v, score_mod, bm.as_tuple(), 1 / math.sqrt(E), {})
            lse = lse * math.log(2)
        else:
            out, aux = jfa.flex_attention(
                q, k, v, score_mod, bm, enable_gqa=Hq != Hkv, return_aux=jfa.AuxRequest(lse=True)
            )
            lse = aux.lse
        finite = t.isfinite(lse)
        loss = (out * t.tensor(w_out)).sum() + t.where(finite, lse * t.tensor(w_lse), 0.0).sum()
        loss.backward()
        grads[name] = [x.grad.numpy() for x in (q, k, v)]
    for jg, tg in zip(grads["jtorch"], grads["torch"]):
        assert not np.isnan(jg).any()
        np.testing.assert_allclose(jg, tg, rtol=1e-4, atol=1e-5)


def test_gradient_of_a_tensor_captured_by_score_mod():
    shape = SHAPES["gqa"]
    B, Hq, L, E, Hkv, S, Ev = shape
    data = _qkv(shape)
    grads = {}
    for name, lib in LIBS.items():
        slopes = lib[0].tensor([0.5, -0.25, 0.125, 1.0], requires_grad=True)

        def alibi(score, b, h, q, kv):
            return score + slopes[h] * (kv - q)

        q, k, v = data[name]
        if name == "torch":
            bm = tfa.create_block_mask(MASKS["causal"](lib, L, S), None, None, L, S, device="cpu")
            out = math_attention(q, k, v, alibi, bm.as_tuple(), 1 / math.sqrt(E), {})[0]
        else:
            bm = jfa.create_block_mask(MASKS["causal"](lib, L, S), None, None, L, S, device="cpu")
            out = jfa.flex_attention(q, k, v, alibi, bm, enable_gqa=True)
        (out**2).sum().backward()
        grads[name] = slopes.grad.numpy()
    np.testing.assert_allclose(grads["jtorch"], grads["torch"], rtol=1e-4, atol=1e-5)


def test_max_scores_match_math_reference():
    """PyTorch's CPU build refuses max_scores; its math reference defines them."""
    shape = SHAPES["gqa"]
    B, Hq, L, E, Hkv, S, Ev = shape
    data = _qkv(shape)
    lib = LIBS["torch"]
    bm = tfa.create_block_mask(MASKS["rows_empty"](lib, L, S), None, None, L, S, device="cpu")
    _, _, t_max = math_attention(
        *data["torch"], lib[1]._identity, bm.as_tuple(), 1 / math.sqrt(E), {}
    )
    jbm = jfa.create_block_mask(
        MASKS["rows_empty"](LIBS["jtorch"], L, S), None, None, L, S, device="cpu"
    )
    _, aux = jfa.flex_attention(
        *data["jtorch"],
        block_mask=jbm,
        enable_gqa=True,
        return_aux=jfa.AuxRequest(lse=True, max_scores=True),
    )
    np.testing.assert_allclose(
        _np(aux.max_scores), (t_max * math.log(2)).numpy(), rtol=1e-5, atol=1e-5
    )
    with pytest.raises(NotImplementedError, match="not supported on CPU"):
        tfa.flex_attention(
            *data["torch"], enable_gqa=True, return_aux=tfa.AuxRequest(max_scores=True)
        )


# ---------------------------------------------------------------------------
# Block masks


def _tables(bm):
    return [
        None if t is None else (str(t.dtype), t.numpy().tolist())
        for t in (
            bm.kv_num_blocks,
            bm.kv_indices,
            bm.full_kv_num_blocks,
            bm.full_kv_indices,
            bm.q_num_blocks,
            bm.q_indices,
            bm.full_q_num_blocks,
            bm.full_q_indices,
        )
    ]


def _same_block_mask(jbm, tbm):
    assert _tables(jbm) == _tables(tbm)
    assert jbm.shape == tbm.shape and tuple(jbm.BLOCK_SIZE) == tuple(tbm.BLOCK_SIZE)
    assert tuple(jbm.seq_lengths) == tuple(tbm.seq_lengths)
    assert str(jbm) == str(tbm)
    assert repr(jbm).replace("jtorch.", "torch.") == repr(tbm)
    assert jbm.to_dense().tolist() == tbm.to_dense().tolist()
    assert jbm.to_string(grid_size=-1) == tbm.to_string(grid_size=-1)


@pytest.mark.parametrize("mask_name", list(MASKS))
@pytest.mark.parametrize(
    "dims", [(2, 3, 200, 300, 64), (None, None, 130, 129, 128), (3, None, 70, 50, (16, 32))]
)
def test_create_block_mask_tables(mask_name, dims):
    B, H, L, S, block = dims
    bms = {}
    for name, lib in LIBS.items():
        bms[name] = lib[1].create_block_mask(
            MASKS[mask_name](lib, L, S), B, H, L, S, device="cpu", BLOCK_SIZE=block
        )
    _same_block_mask(bms["jtorch"], bms["torch"])


def test_create_block_mask_options_and_create_mask():
    for sep in (False, True):
        bms = {
            name: lib[1].create_block_mask(
                MASKS["window_causal"](lib, 96, 96),
                2,
                2,
                96,
                96,
                device="cpu",
                BLOCK_SIZE=16,
                separate_full_blocks=sep,
                compute_dq_write_order=True,
                dq_kv_order=not sep,
            )
            for name, lib in LIBS.items()
        }
        _same_block_mask(bms["jtorch"], bms["torch"])
        for attr in ("dq_write_order", "dq_write_order_full"):
            j, t = getattr(bms["jtorch"], attr), getattr(bms["torch"], attr)
            assert (j is None) == (t is None)
            if t is not None:
                assert j.tolist() == t.tolist()
    for mod in (MASKS["document"], lambda lib, L, S: SCORES["causal_by_score"](lib, 1)):
        masks = {
            name: lib[1].create_mask(mod(lib, 9, 11), 2, None, 9, 11, device="cpu")
            for name, lib in LIBS.items()
        }
        assert str(masks["jtorch"].dtype) == str(masks["torch"].dtype)
        assert masks["jtorch"].tolist() == masks["torch"].tolist()


def test_block_mask_indexing_adjust_and_from_kv_blocks():
    bms = {
        name: lib[1].create_block_mask(
            MASKS["head_dependent"](lib, 300, 300), 2, 3, 300, 300, device="cpu", BLOCK_SIZE=32
        )
        for name, lib in LIBS.items()
    }
    for index in (0, -1, (1, 2), (slice(0, 2), slice(1, 3)), (slice(None), 1, slice(2, 5))):
        _same_block_mask(bms["jtorch"][index], bms["torch"][index])
    causal = {
        name: lib[1].create_block_mask(
            MASKS["causal"](lib, 300, 300), 2, 1, 300, 300, device="cpu", BLOCK_SIZE=32
        )
        for name, lib in LIBS.items()
    }
    for q_len, kv_len in ((100, 100), (64, 300), (300, 33), (1, 1), (300, 64)):
        got = {}
        for name in LIBS:
            try:
                got[name] = causal[name]._adjust(q_len, kv_len)
            except Exception as e:  # PyTorch's _adjust fails on some crops: the same way
                got[name] = _error(e)
        if isinstance(got["torch"], tuple):
            assert got["jtorch"] == got["torch"]
        else:
            _same_block_mask(got["jtorch"], got["torch"])
    ref = bms["torch"]
    for name, lib in LIBS.items():
        kvn = lib[0].tensor(ref.kv_num_blocks.numpy())
        kvi = lib[0].tensor(ref.kv_indices.numpy())
        bms[name] = lib[1].BlockMask.from_kv_blocks(kvn, kvi, BLOCK_SIZE=32)
    _same_block_mask(bms["jtorch"], bms["torch"])
    assert len(bms["jtorch"].as_tuple()) == len(bms["torch"].as_tuple())
    assert len(bms["jtorch"].as_tuple(flatten=False)) == len(bms["torch"].as_tuple(flatten=False))
    assert bms["jtorch"].numel() == bms["torch"].numel()
    assert bms["jtorch"].sparsity() == pytest.approx(bms["torch"].sparsity())


def test_module_constants_and_signatures():
    assert jfa._DEFAULT_SPARSE_BLOCK_SIZE == tfa._DEFAULT_SPARSE_BLOCK_SIZE
    assert jfa._LARGE_SPARSE_BLOCK_SIZE == tfa._LARGE_SPARSE_BLOCK_SIZE
    assert set(tfa.__all__) == set(jfa.__all__)
    assert jfa.AuxRequest._fields == tfa.AuxRequest._fields
    assert jfa.AuxOutput._fields == tfa.AuxOutput._fields
    assert jfa.AuxRequest() == tfa.AuxRequest()
    import inspect

    for fn in ("flex_attention", "create_block_mask", "create_mask"):
        assert list(inspect.signature(getattr(jfa, fn)).parameters) == list(
            inspect.signature(getattr(tfa, fn)).parameters
        )


# ---------------------------------------------------------------------------
# Errors


def _errors_case(lib, case):
    t, fa = lib
    q, k, v = (t.zeros(2, 4, 10, 8), t.zeros(2, 2, 12, 8), t.zeros(2, 2, 12, 6))
    causal = MASKS["causal"](lib, 10, 12)
    if case == "embed_dim":
        return fa.flex_attention(q, k[..., :4], v, enable_gqa=True)
    if case == "three_d":
        return fa.flex_attention(q[0], k[0], v[0], enable_gqa=True)
    if case == "heads_without_gqa":
        return fa.flex_attention(q, k, v)
    if case == "heads_not_multiple":
        return fa.flex_attention(q[:, :3], k, v, enable_gqa=True)
    if case == "batch_without_mask":
        return fa.flex_attention(q, k[:1], v[:1], enable_gqa=True)
    if case == "batch_mask_mismatch":
        bm = fa.create_block_mask(causal, 1, None, 10, 12, device="cpu")
        return fa.flex_attention(q, k[:1], v[:1], enable_gqa=True, block_mask=bm)
    bm = fa.create_block_mask(causal, 2, None, 10, 12, device="cpu")
    if case == "mask_too_long":
        return fa.flex_attention(q[:, :, :5], k, v, enable_gqa=True, block_mask=bm)
    if case == "mask_too_short":
        return fa.flex_attention(t.zeros(2, 4, 20, 8), k, v, enable_gqa=True, block_mask=bm)
    if case == "sliced_mask":
        return fa.flex_attention(q, k, v, enable_gqa=True, block_mask=bm[:, :])
    if case == "lse_and_aux":
        return fa.flex_attention(
            q, k, v, enable_gqa=True, return_lse=True, return_aux=fa.AuxRequest()
        )
    if case == "bad_backend":
        return fa.flex_attention(q, k, v, enable_gqa=True, kernel_options={"BACKEND": "X"})
    if case == "backend_and_force":
        return fa.flex_attention(
            q,
            k,
            v,
            enable_gqa=True,
            kernel_options={"BACKEND": "FLASH", "FORCE_USE_FLEX_ATTENTION": True},
        )
    if case == "internal_option":
        return fa.flex_attention(
            q, k, v, enable_gqa=True, kernel_options={"OUTPUT_LOGSUMEXP": True}
        )
    if case == "flash_max":
        return fa.flex_attention(
            q,
            k,
            v,
            enable_gqa=True,
            kernel_options={"BACKEND": "FLASH"},
            return_aux=fa.AuxRequest(max_scores=True),
        )
    if case == "int_mask_mod":
        bad = fa.BlockMask.from_kv_blocks(
            bm.kv_num_blocks,
            bm.kv_indices,
            seq_lengths=(10, 12),
            mask_mod=lambda b, h, q, kv: (q >= kv).int(),
        )
        return fa.flex_attention(q, k, v, enable_gqa=True, block_mask=bad)
    if case == "create_block_mask_int":
        return fa.create_block_mask(lambda b, h, q, kv: (q >= kv).int(), 1, 1, 10, 12, device="cpu")
    if case == "create_block_mask_score_mod":
        return fa.create_block_mask(lambda s, b, h, q, kv: s, 1, 1, 10, 12, device="cpu")
    if case == "three_arg_mod":
        return fa.create_block_mask(lambda b, h, q: q, 1, 1, 10, 12, device="cpu")
    if case == "or_masks_not_callable":
        return fa.or_masks(causal, 3)
    if case == "block_mask_1d":
        return fa.BlockMask.from_kv_blocks(t.ones(2, dtype=t.int32), t.zeros(2, dtype=t.int32))
    if case == "adjust_unsorted_tables":  # PyTorch's _adjust assumes ascending indices
        return fa.create_block_mask(
            MASKS["head_dependent"](lib, 300, 300), 2, 3, 300, 300, device="cpu", BLOCK_SIZE=32
        )._adjust(100, 100)
    if case == "full_without_indices":
        return fa.BlockMask.from_kv_blocks(bm.kv_num_blocks, bm.kv_indices, bm.kv_num_blocks)
    raise AssertionError(case)


def _error(e):
    """An exception's type and message, without a function's address, nor which bad index an
    out-of-bounds error names first (PyTorch's first in its loop order, jtorch's the largest)."""
    msg = re.sub(r"index -?\d+ is out of bounds", "index N is out of bounds", str(e))
    return type(e).__name__, msg.split(" at 0x")[0]


ERROR_CASES = [
    "embed_dim",
    "three_d",
    "heads_without_gqa",
    "heads_not_multiple",
    "batch_without_mask",
    "batch_mask_mismatch",
    "mask_too_long",
    "mask_too_short",
    "sliced_mask",
    "lse_and_aux",
    "bad_backend",
    "backend_and_force",
    "internal_option",
    "flash_max",
    "int_mask_mod",
    "create_block_mask_int",
    "create_block_mask_score_mod",
    "three_arg_mod",
    "or_masks_not_callable",
    "block_mask_1d",
    "full_without_indices",
    "adjust_unsorted_tables",
]


@pytest.mark.parametrize("case", ERROR_CASES)
def test_errors(case):
    seen = {}
    for name, lib in LIBS.items():
        with pytest.raises(Exception) as info:
            _errors_case(lib, case)
        seen[name] = _error(info.value)
    assert seen["jtorch"] == seen["torch"]
