"""Module parity for normalization, dropout, embedding, activation and distance layers."""

import sys

import numpy as np
import pytest

pytest.importorskip("torch")

import jtorch  # noqa: E402
from compat.module_parity import Case, check  # noqa: E402

_rng = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    return _rng.standard_normal(shape).astype(dtype)


def _lib(nn):
    """`torch` or `jtorch`, from the `nn` namespace a case's `make` receives."""
    return sys.modules[nn.__name__.split(".")[0]]


def _twice(m, x):
    """Two forwards, so that running statistics are updated twice (and compared after)."""
    return m(x), m(x * 2 + 1)


def _fresh(m, x):
    """Calls an in-place layer on a non-leaf copy (PyTorch refuses in-place on a leaf)."""
    return m(x * 1)


def _lazy(cls_name, shape, **kw):
    """A lazy layer materialised by one forward on zeros, then compared as its final class."""

    def make(nn):
        m = getattr(nn, cls_name)(**kw)
        m(_lib(nn).zeros(*shape))
        return m

    return make


def _pretrained(cls_name, rows, **kw):
    def make(nn):
        lib = _lib(nn)
        w = lib.tensor(np.linspace(-1, 1, rows * 3, dtype=np.float32).reshape(rows, 3))
        return getattr(nn, cls_name).from_pretrained(w, **kw)

    return make


_X2 = _x(4, 3)
_X3 = _x(2, 3, 5)
_X4 = _x(2, 3, 4, 4)
_X5 = _x(2, 3, 2, 3, 3)
_IDX = np.array([[0, 2, 4, 1], [4, 3, 2, 9]], dtype=np.int64)
_BAG = np.array([1, 2, 4, 5, 4, 3, 2, 9], dtype=np.int64)
_OFFS = np.array([0, 2, 2, 5], dtype=np.int64)

NORM = [
    Case("BatchNorm1d.2d", lambda nn: nn.BatchNorm1d(3), (_X2,)),
    Case("BatchNorm1d.3d", lambda nn: nn.BatchNorm1d(3), (_X3,)),
    Case("BatchNorm1d.twice", lambda nn: nn.BatchNorm1d(3, momentum=0.3), (_X3,), forward=_twice),
    Case(
        "BatchNorm1d.momentum_none",
        lambda nn: nn.BatchNorm1d(3, momentum=None),
        (_X3,),
        forward=_twice,
    ),
    Case(
        "BatchNorm1d.momentum_none3",
        lambda nn: nn.BatchNorm1d(3, momentum=None),
        (_X2,),
        forward=lambda m, x: (m(x), m(x - 1), m(x * 3)),
    ),
    Case("BatchNorm1d.no_affine", lambda nn: nn.BatchNorm1d(3, affine=False), (_X3,)),
    Case("BatchNorm1d.no_bias", lambda nn: nn.BatchNorm1d(3, bias=False), (_X3,)),
    Case("BatchNorm1d.no_stats", lambda nn: nn.BatchNorm1d(3, track_running_stats=False), (_X3,)),
    Case("BatchNorm1d.eps", lambda nn: nn.BatchNorm1d(3, eps=0.5), (_X2,)),
    Case(
        "BatchNorm1d.double", lambda nn: nn.BatchNorm1d(3).double(), (_x(4, 3, dtype=np.float64),)
    ),
    Case("BatchNorm2d", lambda nn: nn.BatchNorm2d(3), (_X4,)),
    Case("BatchNorm2d.twice", lambda nn: nn.BatchNorm2d(3), (_X4,), forward=_twice),
    Case(
        "BatchNorm2d.no_stats_no_affine",
        lambda nn: nn.BatchNorm2d(3, affine=False, track_running_stats=False),
        (_X4,),
    ),
    Case("BatchNorm3d", lambda nn: nn.BatchNorm3d(3, momentum=0.5), (_X5,)),
    Case(
        "BatchNorm3d.momentum_none",
        lambda nn: nn.BatchNorm3d(3, momentum=None),
        (_X5,),
        forward=_twice,
    ),
    Case("SyncBatchNorm", lambda nn: nn.SyncBatchNorm(3), (_X4,), forward=_twice),
    Case("SyncBatchNorm.3d", lambda nn: nn.SyncBatchNorm(3, momentum=None, affine=False), (_X3,)),
    Case("LazyBatchNorm1d", _lazy("LazyBatchNorm1d", (2, 3)), (_X2,)),
    Case(
        "LazyBatchNorm2d",
        _lazy("LazyBatchNorm2d", (2, 3, 2, 2), momentum=None),
        (_X4,),
        forward=_twice,
    ),
    Case("LazyBatchNorm3d", _lazy("LazyBatchNorm3d", (2, 3, 2, 2, 2), affine=False), (_X5,)),
    Case("InstanceNorm1d", lambda nn: nn.InstanceNorm1d(3), (_X3,)),
    Case("InstanceNorm1d.unbatched", lambda nn: nn.InstanceNorm1d(3, affine=True), (_x(3, 5),)),
    Case(
        "InstanceNorm1d.stats",
        lambda nn: nn.InstanceNorm1d(3, track_running_stats=True),
        (_X3,),
        forward=_twice,
    ),
    Case("InstanceNorm2d", lambda nn: nn.InstanceNorm2d(3, affine=True), (_X4,)),
    Case(
        "InstanceNorm2d.affine_stats",
        lambda nn: nn.InstanceNorm2d(3, affine=True, track_running_stats=True, momentum=0.4),
        (_X4,),
        forward=_twice,
    ),
    Case(
        "InstanceNorm2d.unbatched_stats",
        lambda nn: nn.InstanceNorm2d(3, track_running_stats=True),
        (_x(3, 4, 4),),
    ),
    Case(
        "InstanceNorm2d.no_bias", lambda nn: nn.InstanceNorm2d(3, affine=True, bias=False), (_X4,)
    ),
    Case("InstanceNorm3d", lambda nn: nn.InstanceNorm3d(3, affine=True), (_X5,)),
    Case("InstanceNorm3d.unbatched", lambda nn: nn.InstanceNorm3d(3), (_X5[0],)),
    Case("LazyInstanceNorm1d", _lazy("LazyInstanceNorm1d", (2, 3, 5)), (_X3,), forward=_twice),
    Case(
        "LazyInstanceNorm2d",
        _lazy("LazyInstanceNorm2d", (2, 3, 2, 2), affine=False, track_running_stats=False),
        (_X4,),
    ),
    Case("LazyInstanceNorm3d", _lazy("LazyInstanceNorm3d", (2, 3, 2, 2, 2)), (_X5,)),
    Case("LayerNorm", lambda nn: nn.LayerNorm(5), (_X3,)),
    Case("LayerNorm.2d_shape", lambda nn: nn.LayerNorm([4, 4], eps=1e-3), (_X4,)),
    Case("LayerNorm.no_affine", lambda nn: nn.LayerNorm(5, elementwise_affine=False), (_X3,)),
    Case("LayerNorm.no_bias", lambda nn: nn.LayerNorm((3, 5), bias=False), (_X3,)),
    Case("GroupNorm", lambda nn: nn.GroupNorm(2, 4), (_x(2, 4, 3),)),
    Case("GroupNorm.4d", lambda nn: nn.GroupNorm(3, 3, eps=1e-3), (_X4,)),
    Case("GroupNorm.no_affine", lambda nn: nn.GroupNorm(1, 3, affine=False), (_X4,)),
    Case("GroupNorm.no_bias", lambda nn: nn.GroupNorm(2, 4, bias=False), (_x(2, 4, 2, 2),)),
    Case("RMSNorm", lambda nn: nn.RMSNorm(5), (_X3,)),
    Case("RMSNorm.eps", lambda nn: nn.RMSNorm([4, 4], eps=1e-2), (_X4,)),
    Case("RMSNorm.no_affine", lambda nn: nn.RMSNorm(5, elementwise_affine=False), (_X3,)),
    Case("RMSNorm.double", lambda nn: nn.RMSNorm(5).double(), (_x(2, 5, dtype=np.float64),)),
    Case("LocalResponseNorm", lambda nn: nn.LocalResponseNorm(2), (_X4,)),
    Case("LocalResponseNorm.3d", lambda nn: nn.LocalResponseNorm(3, 0.1, 0.5, 2.0), (_x(2, 6, 5),)),
    Case("LocalResponseNorm.5d", lambda nn: nn.LocalResponseNorm(3, 0.2), (_X5,)),
    Case("CrossMapLRN2d.3", lambda nn: nn.CrossMapLRN2d(3, 0.1), (_x(2, 6, 3, 3),)),
    Case("CrossMapLRN2d.4", lambda nn: nn.CrossMapLRN2d(4, 0.5, 0.6, 2), (_x(2, 6, 3, 3),)),
    Case("CrossMapLRN2d.5", lambda nn: nn.CrossMapLRN2d(5, 1.0, 1.5), (_x(1, 7, 2, 3),)),
    Case("CrossMapLRN2d.2", lambda nn: nn.CrossMapLRN2d(2, 0.3), (_x(2, 3, 2, 2),)),
]

_NO_TRAIN_RANDOM = ("eval",)

DROPOUT = [
    Case("Dropout.eval", lambda nn: nn.Dropout(0.3), (_X3,), modes=_NO_TRAIN_RANDOM),
    Case("Dropout.p0", lambda nn: nn.Dropout(0.0), (_X3,)),
    Case("Dropout.inplace_p0", lambda nn: nn.Dropout(0.0, inplace=True), (_X3,), forward=_fresh),
    Case("Dropout1d.eval", lambda nn: nn.Dropout1d(0.2), (_X3,), modes=_NO_TRAIN_RANDOM),
    Case("Dropout1d.p0", lambda nn: nn.Dropout1d(0.0), (_X3,)),
    Case("Dropout2d.eval", lambda nn: nn.Dropout2d(), (_X4,), modes=_NO_TRAIN_RANDOM),
    Case("Dropout2d.p0", lambda nn: nn.Dropout2d(0.0, True), (_X4,), forward=_fresh),
    Case("Dropout3d.eval", lambda nn: nn.Dropout3d(0.1), (_X5,), modes=_NO_TRAIN_RANDOM),
    Case("Dropout3d.p0", lambda nn: nn.Dropout3d(0.0), (_X5,)),
    Case("AlphaDropout.eval", lambda nn: nn.AlphaDropout(0.2), (_X3,), modes=_NO_TRAIN_RANDOM),
    Case("AlphaDropout.p0", lambda nn: nn.AlphaDropout(0.0), (_X3,)),
    Case(
        "FeatureAlphaDropout.eval",
        lambda nn: nn.FeatureAlphaDropout(0.4),
        (_X4,),
        modes=_NO_TRAIN_RANDOM,
    ),
    Case("FeatureAlphaDropout.p0", lambda nn: nn.FeatureAlphaDropout(0.0), (_X4,)),
]

_W_MAX = lambda m, *a: (m(*a), m.weight * 1)  # noqa: E731 - the renormalised weight too

EMBEDDING = [
    Case("Embedding", lambda nn: nn.Embedding(10, 3), (_IDX,)),
    Case("Embedding.padding_idx", lambda nn: nn.Embedding(10, 3, padding_idx=4), (_IDX,)),
    Case("Embedding.padding_idx_neg", lambda nn: nn.Embedding(10, 3, padding_idx=-1), (_IDX,)),
    Case(
        "Embedding.max_norm", lambda nn: nn.Embedding(10, 3, max_norm=1.0), (_IDX,), forward=_W_MAX
    ),
    Case(
        "Embedding.max_norm_p1",
        lambda nn: nn.Embedding(10, 3, max_norm=0.5, norm_type=1.0),
        (_IDX,),
        forward=_W_MAX,
    ),
    Case("Embedding.scale_grad", lambda nn: nn.Embedding(10, 3, scale_grad_by_freq=True), (_IDX,)),
    Case(
        "Embedding.scale_grad_pad",
        lambda nn: nn.Embedding(10, 3, padding_idx=2, scale_grad_by_freq=True),
        (_IDX,),
    ),
    Case("Embedding.from_pretrained", _pretrained("Embedding", 10), (_IDX,)),
    Case(
        "Embedding.from_pretrained_train",
        _pretrained("Embedding", 10, freeze=False, padding_idx=0, max_norm=1.5),
        (_IDX,),
        forward=_W_MAX,
    ),
    Case("EmbeddingBag.mean", lambda nn: nn.EmbeddingBag(10, 3), (_BAG, _OFFS)),
    Case("EmbeddingBag.sum", lambda nn: nn.EmbeddingBag(10, 3, mode="sum"), (_BAG, _OFFS)),
    Case("EmbeddingBag.max", lambda nn: nn.EmbeddingBag(10, 3, mode="max"), (_BAG, _OFFS)),
    Case("EmbeddingBag.2d", lambda nn: nn.EmbeddingBag(10, 3, mode="sum"), (_IDX,)),
    Case("EmbeddingBag.2d_max", lambda nn: nn.EmbeddingBag(10, 3, mode="max"), (_IDX,)),
    Case(
        "EmbeddingBag.per_sample_weights",
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum"),
        (_BAG, _OFFS, _x(8)),
    ),
    Case(
        "EmbeddingBag.include_last_offset",
        lambda nn: nn.EmbeddingBag(10, 3, include_last_offset=True),
        (_BAG, np.array([0, 2, 5, 8], dtype=np.int64)),
    ),
    # No empty bag and no trailing ignored index: PyTorch's CPU backward with include_last_offset
    # sometimes returns uninitialised memory (weight grads of 1e30 in one CI run).
    Case(
        "EmbeddingBag.include_last_offset_sum",
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum", include_last_offset=True),
        (_BAG, np.array([0, 3, 4, 8], dtype=np.int64)),
    ),
    Case(
        "EmbeddingBag.padding_idx", lambda nn: nn.EmbeddingBag(10, 3, padding_idx=4), (_BAG, _OFFS)
    ),
    Case(
        "EmbeddingBag.padding_idx_max",
        lambda nn: nn.EmbeddingBag(10, 3, mode="max", padding_idx=2),
        (_BAG, _OFFS),
    ),
    Case(
        "EmbeddingBag.padding_idx_psw",
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=9),
        (_BAG, _OFFS, _x(8)),
    ),
    Case(
        "EmbeddingBag.max_norm",
        lambda nn: nn.EmbeddingBag(10, 3, max_norm=1.0),
        (_BAG, _OFFS),
        forward=_W_MAX,
    ),
    Case(
        "EmbeddingBag.scale_grad",
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum", scale_grad_by_freq=True),
        (_BAG, _OFFS),
    ),
    Case(
        "EmbeddingBag.scale_grad_mean_pad",
        lambda nn: nn.EmbeddingBag(10, 3, scale_grad_by_freq=True, padding_idx=2),
        (_BAG, _OFFS),
    ),
    Case(
        "EmbeddingBag.scale_grad_2d_psw",
        lambda nn: nn.EmbeddingBag(10, 3, mode="sum", scale_grad_by_freq=True),
        (_IDX, None, _x(2, 4)),
    ),
    Case(
        "EmbeddingBag.from_pretrained", _pretrained("EmbeddingBag", 10, mode="sum"), (_BAG, _OFFS)
    ),
    Case(
        "EmbeddingBag.from_pretrained_train",
        _pretrained("EmbeddingBag", 10, freeze=False, mode="max", padding_idx=1),
        (_BAG, _OFFS),
    ),
]

_A = _x(3, 4, 5) * 3
_A2 = _x(2, 6) * 3


def _act(name, make, x=_A, inplace_make=None):
    cases = [Case(name, make, (x,))]
    if inplace_make is not None:
        cases.append(Case(name + ".inplace", inplace_make, (x,), forward=_fresh))
    return cases


ACT = [
    *_act(
        "Threshold",
        lambda nn: nn.Threshold(0.1, 20.0),
        inplace_make=lambda nn: nn.Threshold(-0.5, 2, True),
    ),
    *_act("ReLU", lambda nn: nn.ReLU(), inplace_make=lambda nn: nn.ReLU(inplace=True)),
    *_act("ReLU6", lambda nn: nn.ReLU6(), x=_A * 3, inplace_make=lambda nn: nn.ReLU6(True)),
    *_act("LeakyReLU", lambda nn: nn.LeakyReLU(), inplace_make=lambda nn: nn.LeakyReLU(0.2, True)),
    Case("LeakyReLU.slope", lambda nn: nn.LeakyReLU(negative_slope=0.3), (_A,)),
    Case("PReLU", lambda nn: nn.PReLU(), (_A,)),
    Case("PReLU.channels", lambda nn: nn.PReLU(4, init=0.1), (_A,)),
    Case("PReLU.1d", lambda nn: nn.PReLU(6), (_A2,)),
    Case("RReLU.eval", lambda nn: nn.RReLU(), (_A,), modes=_NO_TRAIN_RANDOM),
    Case("RReLU.fixed", lambda nn: nn.RReLU(0.2, 0.2), (_A,)),
    Case(
        "RReLU.inplace",
        lambda nn: nn.RReLU(0.1, 0.3, inplace=True),
        (_A,),
        forward=_fresh,
        modes=_NO_TRAIN_RANDOM,
    ),
    *_act("ELU", lambda nn: nn.ELU(), inplace_make=lambda nn: nn.ELU(0.5, True)),
    Case("ELU.alpha", lambda nn: nn.ELU(alpha=2.0), (_A,)),
    *_act("SELU", lambda nn: nn.SELU(), inplace_make=lambda nn: nn.SELU(True)),
    *_act("CELU", lambda nn: nn.CELU(), inplace_make=lambda nn: nn.CELU(0.7, True)),
    Case("CELU.alpha", lambda nn: nn.CELU(alpha=2.5), (_A,)),
    Case("GELU", lambda nn: nn.GELU(), (_A,)),
    Case("GELU.tanh", lambda nn: nn.GELU(approximate="tanh"), (_A,)),
    *_act("SiLU", lambda nn: nn.SiLU(), inplace_make=lambda nn: nn.SiLU(inplace=True)),
    *_act("Mish", lambda nn: nn.Mish(), inplace_make=lambda nn: nn.Mish(inplace=True)),
    Case("Sigmoid", lambda nn: nn.Sigmoid(), (_A,)),
    Case("Tanh", lambda nn: nn.Tanh(), (_A,)),
    *_act("Hardtanh", lambda nn: nn.Hardtanh(), inplace_make=lambda nn: nn.Hardtanh(-2, 3, True)),
    Case("Hardtanh.range", lambda nn: nn.Hardtanh(-0.5, 0.25), (_A,)),
    *_act("Hardsigmoid", lambda nn: nn.Hardsigmoid(), inplace_make=lambda nn: nn.Hardsigmoid(True)),
    *_act("Hardswish", lambda nn: nn.Hardswish(), inplace_make=lambda nn: nn.Hardswish(True)),
    Case("Hardshrink", lambda nn: nn.Hardshrink(), (_A,)),
    Case("Hardshrink.lambd", lambda nn: nn.Hardshrink(1.5), (_A,)),
    Case("Softshrink", lambda nn: nn.Softshrink(), (_A,)),
    Case("Softshrink.lambd", lambda nn: nn.Softshrink(2.0), (_A,)),
    Case("Tanhshrink", lambda nn: nn.Tanhshrink(), (_A,)),
    Case("Softplus", lambda nn: nn.Softplus(), (_A,)),
    Case("Softplus.beta", lambda nn: nn.Softplus(beta=2.0, threshold=3.0), (_A,)),
    Case("Softplus.small_threshold", lambda nn: nn.Softplus(0.5, 1.0), (_A,)),
    Case("Softsign", lambda nn: nn.Softsign(), (_A,)),
    Case("LogSigmoid", lambda nn: nn.LogSigmoid(), (_A,)),
    Case("Softmax", lambda nn: nn.Softmax(dim=1), (_A,)),
    Case("Softmax.last", lambda nn: nn.Softmax(-1), (_A,)),
    Case("Softmin", lambda nn: nn.Softmin(dim=2), (_A,)),
    Case("LogSoftmax", lambda nn: nn.LogSoftmax(dim=0), (_A,)),
    Case("Softmax2d", lambda nn: nn.Softmax2d(), (_X4,)),
    Case("Softmax2d.3d", lambda nn: nn.Softmax2d(), (_x(3, 2, 2),)),
    Case("GLU", lambda nn: nn.GLU(), (_x(3, 4),)),
    Case("GLU.dim", lambda nn: nn.GLU(dim=1), (_A,)),
    Case("Softmax.double", lambda nn: nn.Softmax(1), (_x(3, 4, dtype=np.float64),)),
    Case("ELU.double", lambda nn: nn.ELU(), (_x(3, 4, dtype=np.float64),)),
]

# dim=None picks PyTorch's legacy dim (0 for 0-, 1- and 3-D inputs, else 1), with a warning.
LEGACY_DIM = [
    Case(f"{cls}.dim_none_{len(shape)}d", lambda nn, c=cls: getattr(nn, c)(), (_x(*shape),))
    for cls in ("Softmax", "Softmin", "LogSoftmax")
    for shape in ((5,), (3, 4), (2, 3, 4))
]

DIST = [
    Case("PairwiseDistance", lambda nn: nn.PairwiseDistance(), (_x(4, 5), _x(4, 5))),
    Case(
        "PairwiseDistance.p1_keepdim",
        lambda nn: nn.PairwiseDistance(p=1.0, keepdim=True),
        (_x(4, 5), _x(4, 5)),
    ),
    Case(
        "PairwiseDistance.pinf",
        lambda nn: nn.PairwiseDistance(p=float("inf"), eps=0.1),
        (_x(3, 5), _x(1, 5)),
    ),
    Case("PairwiseDistance.p3_1d", lambda nn: nn.PairwiseDistance(p=3.0), (_x(5), _x(5))),
    Case("CosineSimilarity", lambda nn: nn.CosineSimilarity(), (_x(4, 5), _x(4, 5))),
    Case(
        "CosineSimilarity.dim",
        lambda nn: nn.CosineSimilarity(dim=0, eps=1e-3),
        (_x(4, 5), _x(4, 1)),
    ),
]

CASES = NORM + DROPOUT + EMBEDDING + ACT + LEGACY_DIM + DIST


@pytest.mark.filterwarnings("ignore:Implicit dimension choice")
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_module_parity(case):
    err = check(case)
    assert err is None, err


def test_embedding_sparse_grad_matches_dense():
    """`sparse=True`: jtorch's sparse gradient, densified, is PyTorch's (compat/test_sparse.py
    compares the sparse tensors themselves)."""
    import torch

    w = _x(10, 3)
    tm = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, sparse=True)
    jm = jtorch.nn.Embedding.from_pretrained(jtorch.tensor(w), freeze=False, sparse=True)
    assert repr(tm) == repr(jm)
    tm(torch.tensor(_IDX)).sum().backward()
    jm(jtorch.tensor(_IDX)).sum().backward()
    np.testing.assert_allclose(jm.weight.grad.to_dense().numpy(), tm.weight.grad.to_dense().numpy())


def test_lazy_state_dict_before_init():
    """Before the first call, lazy layers' state dicts hold their placeholders."""
    import torch

    for name in ("LazyBatchNorm1d", "LazyInstanceNorm2d"):
        t = getattr(torch.nn, name)()
        j = getattr(jtorch.nn, name)()
        assert repr(t) == repr(j)
        assert list(t.state_dict()) == list(j.state_dict())
        assert [type(v).__name__ for v in t.state_dict().values()] == [
            type(v).__name__ for v in j.state_dict().values()
        ]


def test_batchnorm_load_old_checkpoint():
    """A version-1 checkpoint without num_batches_tracked loads, keeping the counter."""
    import torch

    for lib in (torch, jtorch):
        m = lib.nn.BatchNorm1d(3)
        sd = m.state_dict()
        del sd["num_batches_tracked"]
        sd._metadata[""]["version"] = 1
        m.load_state_dict(sd)
        assert int(m.num_batches_tracked) == 0


def test_activation_module_list():
    """Every activation class PyTorch exports (but MultiheadAttention) exists in jtorch."""
    import torch

    names = [n for n in torch.nn.modules.activation.__all__ if n != "MultiheadAttention"]
    assert names and [n for n in names if not hasattr(jtorch.nn, n)] == []


_ERRORS = [
    ("Embedding.out_of_range", lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([5]))),
    ("Embedding.negative", lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([[0, -1]]))),
    ("Embedding.float_index", lambda lib: lib.nn.Embedding(5, 2)(lib.tensor([1.0]))),
    ("Embedding.padding_idx", lambda lib: lib.nn.Embedding(5, 2, padding_idx=7)),
    (
        "EmbeddingBag.out_of_range",
        lambda lib: lib.nn.EmbeddingBag(5, 2)(lib.tensor([1, 7]), lib.tensor([0])),
    ),
    (
        "EmbeddingBag.mode",
        lambda lib: lib.nn.EmbeddingBag(5, 2, mode="min")(lib.tensor([1]), lib.tensor([0])),
    ),
    (
        "EmbeddingBag.max_psw",
        lambda lib: lib.nn.EmbeddingBag(5, 2, mode="max")(
            lib.tensor([1]), lib.tensor([0]), lib.ones(1)
        ),
    ),
    ("BatchNorm1d.features", lambda lib: lib.nn.BatchNorm1d(4)(lib.randn(3, 3))),
    ("BatchNorm1d.rank", lambda lib: lib.nn.BatchNorm1d(4)(lib.randn(3, 4, 2, 2))),
    ("BatchNorm2d.one_value", lambda lib: lib.nn.BatchNorm2d(4)(lib.randn(1, 4, 1, 1))),
    ("SyncBatchNorm.no_channels", lambda lib: lib.nn.SyncBatchNorm(4)(lib.randn(3, 0))),
    ("InstanceNorm1d.one_element", lambda lib: lib.nn.InstanceNorm1d(3)(lib.randn(2, 3, 1))),
    (
        "InstanceNorm2d.affine_features",
        lambda lib: lib.nn.InstanceNorm2d(4, affine=True)(lib.randn(2, 3, 2, 2)),
    ),
    ("LayerNorm.shape", lambda lib: lib.nn.LayerNorm(4)(lib.randn(3, 3))),
    ("GroupNorm.divisible", lambda lib: lib.nn.GroupNorm(2, 5)),
    ("GroupNorm.channels", lambda lib: lib.nn.GroupNorm(2, 4)(lib.randn(3, 6))),
    ("RMSNorm.shape", lambda lib: lib.nn.RMSNorm(4)(lib.randn(3, 3))),
    ("LocalResponseNorm.rank", lambda lib: lib.nn.LocalResponseNorm(2)(lib.randn(3, 3))),
    ("CrossMapLRN2d.rank", lambda lib: lib.nn.CrossMapLRN2d(2)(lib.randn(3, 3, 3))),
    ("Dropout.p", lambda lib: lib.nn.Dropout(-0.1)),
    ("Dropout1d.rank", lambda lib: lib.nn.Dropout1d()(lib.randn(3))),
    ("PReLU.channels", lambda lib: lib.nn.PReLU(3)(lib.randn(2, 4))),
    ("GELU.approximate", lambda lib: lib.nn.GELU("bad")(lib.randn(2))),
    ("GLU.odd", lambda lib: lib.nn.GLU()(lib.randn(2, 3))),
    ("Hardtanh.range", lambda lib: lib.nn.Hardtanh(1.0, 1.0)),
    ("Softmax2d.rank", lambda lib: lib.nn.Softmax2d()(lib.randn(2, 3))),
    (
        "PairwiseDistance.shapes",
        lambda lib: lib.nn.PairwiseDistance()(lib.randn(3, 4), lib.randn(2, 4)),
    ),
]


@pytest.mark.parametrize("make", [m for _, m in _ERRORS], ids=[n for n, _ in _ERRORS])
def test_error_parity(make):
    """Bad arguments raise PyTorch's exception type with PyTorch's message."""
    import torch

    errors = []
    for lib in (torch, jtorch):
        with pytest.raises(Exception) as info:
            make(lib)
        errors.append((info.type.__name__, str(info.value)))
    assert errors[0] == errors[1]
