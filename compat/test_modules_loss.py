"""Module parity for the loss modules (every option PyTorch's constructors take)."""

import importlib

import numpy as np
import pytest

pytest.importorskip("torch")

from compat.module_parity import Case, check  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _u(lo, hi, *shape):
    return _rng.uniform(lo, hi, shape).astype(np.float32)


def _i(hi, *shape, lo=0):
    return _rng.integers(lo, hi, shape).astype(np.int64)


def _pm1(*shape, dtype=np.float32):
    return np.where(_rng.random(shape) < 0.5, -1, 1).astype(dtype)


def _t(nn, arr):
    """`arr` as a tensor of the library `nn` belongs to (torch or jtorch)."""
    lib = importlib.import_module(nn.__name__.split(".")[0])
    return lib.tensor(arr)


def _softmax(z, axis):
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


_W5 = _u(0.2, 2.0, 5)
_T5 = _i(5, 6)
_T5_IGN = np.array([0, -100, 3, 4, -100, 1], np.int64)
_T5_IGN2 = np.array([0, 2, 3, 4, 2, 1], np.int64)
_P = _softmax(_x(6, 5), 1)
_ML_TARGET = np.array([[3, 0, -1, 1, 2], [1, 2, 4, 0, -1], [4, -1, 0, 0, 0]], np.int64)


def _reductions(name, make_fn, inputs, **kw):
    return [
        Case(f"{name}.{r}", (lambda nn, r=r: make_fn(nn, r)), inputs, **kw)
        for r in ("none", "mean", "sum")
    ]


CASES = [
    # Regression
    *_reductions("L1Loss", lambda nn, r: nn.L1Loss(reduction=r), (_x(3, 4), _x(3, 4))),
    Case(
        "L1Loss.legacy_size_average", lambda nn: nn.L1Loss(size_average=False), (_x(3, 4), _x(3, 4))
    ),
    Case("L1Loss.legacy_reduce", lambda nn: nn.L1Loss(reduce=False), (_x(3, 4), _x(3, 4))),
    *_reductions("MSELoss", lambda nn, r: nn.MSELoss(reduction=r), (_x(3, 4), _x(3, 4))),
    Case(
        "MSELoss.legacy",
        lambda nn: nn.MSELoss(size_average=True, reduce=True),
        (_x(2, 3, 2), _x(2, 3, 2)),
    ),
    *_reductions(
        "SmoothL1Loss", lambda nn, r: nn.SmoothL1Loss(reduction=r, beta=0.5), (_x(3, 4), _x(3, 4))
    ),
    Case("SmoothL1Loss.beta0", lambda nn: nn.SmoothL1Loss(beta=0.0), (_x(3, 4), _x(3, 4))),
    Case("SmoothL1Loss.default", lambda nn: nn.SmoothL1Loss(), (_x(3, 4), _x(3, 4))),
    *_reductions(
        "HuberLoss", lambda nn, r: nn.HuberLoss(reduction=r, delta=0.7), (_x(3, 4), _x(3, 4))
    ),
    Case("HuberLoss.default", lambda nn: nn.HuberLoss(), (_x(3, 4) * 3, _x(3, 4))),
    *_reductions(
        "PoissonNLLLoss", lambda nn, r: nn.PoissonNLLLoss(reduction=r), (_x(3, 4), _u(0, 4, 3, 4))
    ),
    Case(
        "PoissonNLLLoss.no_log_input",
        lambda nn: nn.PoissonNLLLoss(log_input=False),
        (_u(0.1, 3, 3, 4), _u(0, 4, 3, 4)),
    ),
    Case(
        "PoissonNLLLoss.full",
        lambda nn: nn.PoissonNLLLoss(full=True, eps=1e-6),
        (_x(3, 4), np.array([[0, 1, 2, 3], [4, 0.5, 1.5, 6], [7, 2, 0, 1]], np.float32)),
    ),
    Case(
        "PoissonNLLLoss.legacy",
        lambda nn: nn.PoissonNLLLoss(reduce=False),
        (_x(3, 4), _u(0, 4, 3, 4)),
    ),
    *_reductions(
        "GaussianNLLLoss",
        lambda nn, r: nn.GaussianNLLLoss(reduction=r),
        (_x(4, 3), _x(4, 3), _u(0.1, 2, 4, 3)),
    ),
    Case(
        "GaussianNLLLoss.full_eps",
        lambda nn: nn.GaussianNLLLoss(full=True, eps=0.5),
        (_x(4, 3), _x(4, 3), _u(0.1, 2, 4, 3)),
    ),
    Case(
        "GaussianNLLLoss.var_per_row",
        lambda nn: nn.GaussianNLLLoss(),
        (_x(4, 3), _x(4, 3), _u(0.1, 2, 4)),
    ),
    Case(
        "GaussianNLLLoss.var_col",
        lambda nn: nn.GaussianNLLLoss(),
        (_x(4, 3), _x(4, 3), _u(0.1, 2, 4, 1)),
    ),
    # Probabilistic
    *_reductions(
        "BCELoss", lambda nn, r: nn.BCELoss(reduction=r), (_u(0.05, 0.95, 3, 4), _u(0, 1, 3, 4))
    ),
    Case(
        "BCELoss.weight",
        lambda nn: nn.BCELoss(weight=_t(nn, _u(0.5, 2, 4))),
        (_u(0.05, 0.95, 3, 4), _u(0, 1, 3, 4)),
    ),
    Case(
        "BCELoss.legacy",
        lambda nn: nn.BCELoss(size_average=False),
        (_u(0.05, 0.95, 3, 4), _u(0, 1, 3, 4)),
    ),
    *_reductions(
        "BCEWithLogitsLoss",
        lambda nn, r: nn.BCEWithLogitsLoss(reduction=r),
        (_x(3, 4) * 3, _u(0, 1, 3, 4)),
    ),
    Case(
        "BCEWithLogitsLoss.weight",
        lambda nn: nn.BCEWithLogitsLoss(weight=_t(nn, _u(0.5, 2, 4))),
        (_x(3, 4), _u(0, 1, 3, 4)),
    ),
    Case(
        "BCEWithLogitsLoss.pos_weight",
        lambda nn: nn.BCEWithLogitsLoss(pos_weight=_t(nn, _u(0.5, 3, 4))),
        (_x(3, 4), _u(0, 1, 3, 4)),
    ),
    Case(
        "BCEWithLogitsLoss.both",
        lambda nn: nn.BCEWithLogitsLoss(
            weight=_t(nn, _u(0.5, 2, 3, 1)), pos_weight=_t(nn, _u(0.5, 3, 4)), reduction="sum"
        ),
        (_x(3, 4), _u(0, 1, 3, 4)),
    ),
    *[
        Case(
            f"KLDivLoss.{r}",
            (lambda nn, r=r: nn.KLDivLoss(reduction=r)),
            (np.log(_P), _softmax(_x(6, 5), 1)),
        )
        for r in ("none", "mean", "sum", "batchmean")
    ],
    Case(
        "KLDivLoss.log_target",
        lambda nn: nn.KLDivLoss(reduction="batchmean", log_target=True),
        (np.log(_P), np.log(_softmax(_x(6, 5), 1))),
    ),
    Case(
        "KLDivLoss.zero_target",
        lambda nn: nn.KLDivLoss(reduction="sum"),
        (np.log(_P), np.array([[0, 0.5, 0.5, 0, 0]] * 6, np.float32)),
    ),
    # Classification
    *_reductions(
        "CrossEntropyLoss", lambda nn, r: nn.CrossEntropyLoss(reduction=r), (_x(6, 5), _T5)
    ),
    Case(
        "CrossEntropyLoss.weight",
        lambda nn: nn.CrossEntropyLoss(weight=_t(nn, _W5)),
        (_x(6, 5), _T5),
    ),
    Case("CrossEntropyLoss.ignore_index", lambda nn: nn.CrossEntropyLoss(), (_x(6, 5), _T5_IGN)),
    Case(
        "CrossEntropyLoss.ignore_index2",
        lambda nn: nn.CrossEntropyLoss(weight=_t(nn, _W5), ignore_index=2),
        (_x(6, 5), _T5_IGN2),
    ),
    Case(
        "CrossEntropyLoss.label_smoothing",
        lambda nn: nn.CrossEntropyLoss(label_smoothing=0.2),
        (_x(6, 5), _T5),
    ),
    *[
        Case(
            f"CrossEntropyLoss.smooth_weight_ignore.{r}",
            (
                lambda nn, r=r: nn.CrossEntropyLoss(
                    weight=_t(nn, _W5), ignore_index=2, label_smoothing=0.3, reduction=r
                )
            ),
            (_x(6, 5), _T5_IGN2),
        )
        for r in ("none", "mean", "sum")
    ],
    Case(
        "CrossEntropyLoss.kdim",
        lambda nn: nn.CrossEntropyLoss(weight=_t(nn, _W5)),
        (_x(2, 5, 3, 2), _i(5, 2, 3, 2)),
    ),
    Case(
        "CrossEntropyLoss.kdim_none",
        lambda nn: nn.CrossEntropyLoss(reduction="none", label_smoothing=0.1),
        (_x(2, 5, 3), _i(5, 2, 3)),
    ),
    Case(
        "CrossEntropyLoss.unbatched",
        lambda nn: nn.CrossEntropyLoss(),
        (_x(5), np.array(3, np.int64)),
    ),
    *[
        Case(
            f"CrossEntropyLoss.probs.{r}",
            (lambda nn, r=r: nn.CrossEntropyLoss(reduction=r)),
            (_x(6, 5), _P),
        )
        for r in ("none", "mean", "sum")
    ],
    Case(
        "CrossEntropyLoss.probs_weight_smooth",
        lambda nn: nn.CrossEntropyLoss(weight=_t(nn, _W5), label_smoothing=0.25),
        (_x(6, 5), _P),
    ),
    Case(
        "CrossEntropyLoss.probs_kdim",
        lambda nn: nn.CrossEntropyLoss(),
        (_x(2, 5, 3), _softmax(_x(2, 5, 3), 1)),
    ),
    Case(
        "CrossEntropyLoss.float64",
        lambda nn: nn.CrossEntropyLoss(weight=_t(nn, _W5.astype(np.float64)), label_smoothing=0.1),
        (_x(6, 5).astype(np.float64), _T5),
    ),
    Case(
        "MSELoss.float64",
        lambda nn: nn.MSELoss(),
        (_x(3, 4).astype(np.float64), _x(3, 4).astype(np.float64)),
    ),
    Case("CrossEntropyLoss.legacy", lambda nn: nn.CrossEntropyLoss(reduce=False), (_x(6, 5), _T5)),
    *_reductions("NLLLoss", lambda nn, r: nn.NLLLoss(reduction=r), (_x(6, 5), _T5)),
    Case("NLLLoss.weight", lambda nn: nn.NLLLoss(weight=_t(nn, _W5)), (_x(6, 5), _T5)),
    Case(
        "NLLLoss.ignore_index",
        lambda nn: nn.NLLLoss(weight=_t(nn, _W5), ignore_index=2),
        (_x(6, 5), _T5_IGN2),
    ),
    Case("NLLLoss.ignore_none", lambda nn: nn.NLLLoss(reduction="none"), (_x(6, 5), _T5_IGN)),
    Case("NLLLoss.2d", lambda nn: nn.NLLLoss(weight=_t(nn, _W5)), (_x(2, 5, 3, 2), _i(5, 2, 3, 2))),
    Case("NLLLoss.unbatched", lambda nn: nn.NLLLoss(), (_x(5), np.array(1, np.int64))),
    Case("NLLLoss.legacy", lambda nn: nn.NLLLoss(size_average=False), (_x(6, 5), _T5)),
    Case("NLLLoss2d", lambda nn: nn.NLLLoss2d(), (_x(2, 5, 3, 2), _i(5, 2, 3, 2))),
    Case("LinearCrossEntropyLoss", lambda nn: nn.LinearCrossEntropyLoss(4, 5), (_x(6, 4), _T5)),
    Case(
        "LinearCrossEntropyLoss.options",
        lambda nn: nn.LinearCrossEntropyLoss(
            4, 5, bias=True, reduction="sum", label_smoothing=0.1, weight=_t(nn, _W5)
        ),
        (_x(6, 4), _T5),
    ),
    # Margin and embedding
    # PyTorch's soft_margin_loss refuses a target that requires grad: pass it as a keyword.
    *_reductions(
        "SoftMarginLoss",
        lambda nn, r: nn.SoftMarginLoss(reduction=r),
        (_x(3, 4),),
        kwargs={"target": _pm1(3, 4)},
    ),
    *_reductions(
        "MultiLabelSoftMarginLoss",
        lambda nn, r: nn.MultiLabelSoftMarginLoss(reduction=r),
        (_x(3, 5), _u(0, 1, 3, 5).round()),
    ),
    Case(
        "MultiLabelSoftMarginLoss.weight",
        lambda nn: nn.MultiLabelSoftMarginLoss(weight=_t(nn, _W5)),
        (_x(3, 5), _u(0, 1, 3, 5).round()),
    ),
    *_reductions(
        "MultiLabelMarginLoss",
        lambda nn, r: nn.MultiLabelMarginLoss(reduction=r),
        (_x(3, 5), _ML_TARGET),
    ),
    Case(
        "MultiLabelMarginLoss.1d",
        lambda nn: nn.MultiLabelMarginLoss(),
        (_x(5), np.array([2, 4, -1, 0, 0], np.int64)),
    ),
    *_reductions("MultiMarginLoss", lambda nn, r: nn.MultiMarginLoss(reduction=r), (_x(6, 5), _T5)),
    Case(
        "MultiMarginLoss.p2_margin", lambda nn: nn.MultiMarginLoss(p=2, margin=0.5), (_x(6, 5), _T5)
    ),
    Case(
        "MultiMarginLoss.weight", lambda nn: nn.MultiMarginLoss(weight=_t(nn, _W5)), (_x(6, 5), _T5)
    ),
    Case(
        "MultiMarginLoss.p2_weight_none",
        lambda nn: nn.MultiMarginLoss(p=2, margin=2.0, weight=_t(nn, _W5), reduction="none"),
        (_x(6, 5), _T5),
    ),
    Case("MultiMarginLoss.1d", lambda nn: nn.MultiMarginLoss(), (_x(5), np.array(3, np.int64))),
    *_reductions(
        "HingeEmbeddingLoss",
        lambda nn, r: nn.HingeEmbeddingLoss(reduction=r),
        (_x(3, 4), _pm1(3, 4)),
    ),
    Case(
        "HingeEmbeddingLoss.margin",
        lambda nn: nn.HingeEmbeddingLoss(margin=0.3),
        (_x(3, 4), _pm1(3, 4)),
    ),
    *_reductions(
        "CosineEmbeddingLoss",
        lambda nn, r: nn.CosineEmbeddingLoss(reduction=r),
        (_x(4, 3), _x(4, 3), _pm1(4, dtype=np.int64)),
    ),
    Case(
        "CosineEmbeddingLoss.margin",
        lambda nn: nn.CosineEmbeddingLoss(margin=0.2),
        (_x(4, 3), _x(4, 3), np.array([1, -1, -1, 1], np.int64)),
    ),
    Case(
        "CosineEmbeddingLoss.1d",
        lambda nn: nn.CosineEmbeddingLoss(),
        (_x(3), _x(3), np.array(-1, np.int64)),
    ),
    *_reductions(
        "MarginRankingLoss",
        lambda nn, r: nn.MarginRankingLoss(reduction=r),
        (_x(5), _x(5), _pm1(5)),
    ),
    Case(
        "MarginRankingLoss.margin",
        lambda nn: nn.MarginRankingLoss(margin=0.5),
        (_x(5), _x(5), _pm1(5)),
    ),
    *_reductions(
        "TripletMarginLoss",
        lambda nn, r: nn.TripletMarginLoss(reduction=r),
        (_x(4, 3), _x(4, 3), _x(4, 3)),
    ),
    Case(
        "TripletMarginLoss.p1_swap",
        lambda nn: nn.TripletMarginLoss(margin=2.0, p=1, swap=True, eps=1e-3),
        (_x(4, 3), _x(4, 3), _x(4, 3)),
    ),
    Case(
        "TripletMarginLoss.p3",
        lambda nn: nn.TripletMarginLoss(p=3.0),
        (_x(4, 3), _x(4, 3), _x(4, 3)),
    ),
    *_reductions(
        "TripletMarginWithDistanceLoss",
        lambda nn, r: nn.TripletMarginWithDistanceLoss(reduction=r),
        (_x(4, 3), _x(4, 3), _x(4, 3)),
    ),
    Case(
        "TripletMarginWithDistanceLoss.cosine_swap",
        lambda nn: nn.TripletMarginWithDistanceLoss(
            distance_function=lambda a, b: 1.0 - nn.functional.cosine_similarity(a, b),
            margin=0.5,
            swap=True,
        ),
        (_x(4, 3), _x(4, 3), _x(4, 3)),
    ),
    # CTC: (T, N, C) log-probabilities, padded or concatenated targets.
    *[
        Case(
            f"CTCLoss.{r}",
            (lambda nn, r=r: nn.CTCLoss(reduction=r)),
            (
                np.log(_softmax(_x(6, 2, 4), 2)),
                np.array([[1, 2, 2], [3, 1, 0]], np.int64),
                np.array([6, 5], np.int64),
                np.array([3, 2], np.int64),
            ),
        )
        for r in ("none", "mean", "sum")
    ],
    Case(
        "CTCLoss.blank_concat",
        lambda nn: nn.CTCLoss(blank=3),
        (
            np.log(_softmax(_x(5, 2, 4), 2)),
            np.array([0, 1, 2, 2], np.int64),
            np.array([5, 4], np.int64),
            np.array([2, 2], np.int64),
        ),
    ),
    Case(
        "CTCLoss.zero_infinity",
        lambda nn: nn.CTCLoss(zero_infinity=True, reduction="none"),
        (
            np.log(_softmax(_x(3, 2, 4), 2)),
            np.array([[1, 1, 1], [2, 3, 0]], np.int64),
            np.array([3, 3], np.int64),
            np.array([3, 2], np.int64),
        ),
    ),
    Case(
        "CTCLoss.unbatched",
        lambda nn: nn.CTCLoss(),
        (
            np.log(_softmax(_x(5, 4), 1)),
            np.array([1, 3], np.int64),
            np.array(5, np.int64),
            np.array(2, np.int64),
        ),
    ),
    # Targets in the shortlist and in both tail clusters; one cluster-free batch; unbatched.
    Case(
        "AdaptiveLogSoftmaxWithLoss",
        lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
        (_x(6, 8), np.array([0, 4, 9, 2, 7, 5], np.int64)),
    ),
    Case(
        "AdaptiveLogSoftmaxWithLoss.head_bias_shortlist_only",
        lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], head_bias=True),
        (_x(4, 8), np.array([0, 1, 2, 1], np.int64)),
    ),
    Case(
        "AdaptiveLogSoftmaxWithLoss.unbatched",
        lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
        (_x(8), np.array(7, np.int64)),
    ),
    Case(
        "AdaptiveLogSoftmaxWithLoss.log_prob",
        lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
        (_x(5, 8),),
        forward=lambda m, x: m.log_prob(x),
    ),
    Case(
        "AdaptiveLogSoftmaxWithLoss.predict",
        lambda nn: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0),
        (_x(5, 8),),
        forward=lambda m, x: m.predict(x),
        grads=False,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_module_parity(case):
    err = check(case)
    assert err is None, err


def test_adaptive_log_softmax_errors():
    for lib in (importlib.import_module("torch"), importlib.import_module("jtorch")):
        with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
            lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3])
        m = lib.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3])
        with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 9\]"):
            m(lib.zeros(2, 8), lib.tensor([1, 12]))
        with pytest.raises(RuntimeError, match="1D target tensor expects 2D input"):
            m(lib.zeros(2, 2, 8), lib.tensor([1, 2]))


def test_loss_reprs_and_buffers():
    import torch

    import jtorch

    for name in [
        "L1Loss",
        "MSELoss",
        "CrossEntropyLoss",
        "NLLLoss",
        "BCELoss",
        "BCEWithLogitsLoss",
        "KLDivLoss",
        "SmoothL1Loss",
        "HuberLoss",
        "SoftMarginLoss",
        "MultiLabelSoftMarginLoss",
        "MultiLabelMarginLoss",
        "MultiMarginLoss",
        "HingeEmbeddingLoss",
        "CosineEmbeddingLoss",
        "MarginRankingLoss",
        "TripletMarginLoss",
        "TripletMarginWithDistanceLoss",
        "PoissonNLLLoss",
        "GaussianNLLLoss",
        "CTCLoss",
    ]:
        t, j = getattr(torch.nn, name)(), getattr(jtorch.nn, name)()
        assert repr(t) == repr(j), name
        assert t.reduction == j.reduction
        assert [n for n, _ in t.named_buffers()] == [n for n, _ in j.named_buffers()]
        assert list(t.state_dict()) == list(j.state_dict())
    w = np.arange(1, 4, dtype=np.float32)
    t = torch.nn.CrossEntropyLoss(weight=torch.tensor(w))
    j = jtorch.nn.CrossEntropyLoss(weight=jtorch.tensor(w))
    assert list(t.state_dict()) == list(j.state_dict()) == ["weight"]
    t = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(w))
    j = jtorch.nn.BCEWithLogitsLoss(pos_weight=jtorch.tensor(w))
    assert list(t.state_dict()) == list(j.state_dict()) == ["pos_weight"]
    for kw in [
        dict(size_average=False),
        dict(reduce=False),
        dict(size_average=True, reduce=True),
        dict(size_average=False, reduce=True),
    ]:
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            jl = jtorch.nn.MSELoss(**kw)
        with pytest.warns(UserWarning):
            tl = torch.nn.MSELoss(**kw)
        assert jl.reduction == tl.reduction
