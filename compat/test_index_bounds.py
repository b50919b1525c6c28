"""Out-of-range indices through every indexing path: the same error as PyTorch (or the same
result where PyTorch wraps a negative index), and the tensor left unchanged."""

import warnings

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _cases(L):
    def x():
        return L.arange(5.0)

    def m():
        return L.arange(12.0).reshape(3, 4)

    def i(*v):
        return L.tensor(list(v))

    F = L.nn.functional
    return {
        "index_put_ high": lambda: x().index_put_((i(1, 10),), L.ones(2)),
        "index_put_ negative": lambda: x().index_put_((i(1, -6),), L.ones(2)),
        "index_put_ wraps -1": lambda: x().index_put_((i(-1),), L.ones(1)),
        "index_put_ accumulate": lambda: x().index_put_((i(1, 10),), L.ones(2), accumulate=True),
        "index_put": lambda: L.index_put(x(), (i(7),), L.ones(1)),
        "index_put_ 2-d": lambda: m().index_put_((i(0), i(4)), L.ones(1)),
        "index_put_ mask shape": lambda: x().index_put_((L.tensor([True, False]),), L.ones(1)),
        "index_put_ 0-d True": lambda: x().index_put_((L.tensor(True),), L.tensor(5.0)),
        "setitem": lambda: x().__setitem__(i(1, 10), 1.0),
        "getitem": lambda: x()[i(1, 10)],
        "index_add_ 1-d": lambda: x().index_add_(0, i(1, 10), L.ones(2)),
        "index_add_ negative": lambda: x().index_add_(0, i(-1), L.ones(1)),
        "index_add_ 2-d": lambda: m().index_add_(1, i(4), L.ones(3, 1)),
        "index_add": lambda: L.index_add(m(), 0, i(3), L.ones(1, 4)),
        "index_copy_": lambda: x().index_copy_(0, i(1, 10), L.ones(2)),
        "index_copy_ negative": lambda: x().index_copy_(0, i(-1), L.ones(1)),
        "index_fill_": lambda: x().index_fill_(0, i(1, 10), 7.0),
        "index_fill_ wraps -1": lambda: x().index_fill_(0, i(-1), 7.0),
        "index_select": lambda: x().index_select(0, i(1, 10)),
        "index_reduce_": lambda: x().index_reduce_(0, i(1, 10), L.ones(2), "prod"),
        "scatter_": lambda: x().scatter_(0, i(1, 10), L.ones(2)),
        "scatter_ negative": lambda: x().scatter_(0, i(-1), L.ones(1)),
        "scatter_ value": lambda: x().scatter_(0, i(1, 10), 3.0),
        "scatter_add_": lambda: x().scatter_add_(0, i(1, 10), L.ones(2)),
        "scatter_reduce_": lambda: x().scatter_reduce_(0, i(1, 10), L.ones(2), "sum"),
        "gather": lambda: x().gather(0, i(1, 10)),
        "gather negative": lambda: x().gather(0, i(-1)),
        "put_": lambda: x().put_(i(1, 10), L.ones(2)),
        "put_ wraps -1": lambda: x().put_(i(-1), L.ones(1)),
        "put_ accumulate": lambda: x().put_(i(1, 10), L.ones(2), accumulate=True),
        "take": lambda: x().take(i(1, 10)),
        "take negative": lambda: x().take(i(-6)),
        "take_along_dim": lambda: L.take_along_dim(x(), i(1, 10)),
        "embedding": lambda: F.embedding(i(1, 10), m()),
        "one_hot": lambda: F.one_hot(i(1, 10), 5),
        "nll_loss target": lambda: F.nll_loss(m(), i(0, 1, -5)),
        "cross_entropy target": lambda: F.cross_entropy(m(), i(0, 1, 9)),
        "select": lambda: x().select(0, 5),
        "narrow": lambda: x().narrow(0, 3, 5),
    }


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = fn()
    except Exception as e:  # noqa: BLE001 - the exception is the outcome compared
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", out.tolist()


@pytest.mark.parametrize("name", sorted(_cases(jtorch)))
def test_out_of_range_index_matches_pytorch(name):
    t = _outcome(_cases(torch)[name])
    j = _outcome(_cases(jtorch)[name])
    assert j == t


@pytest.mark.parametrize(
    "op",
    [
        "index_put_",
        "index_add_",
        "index_copy_",
        "index_fill_",
        "scatter_",
        "scatter_add_",
        "put_",
        "setitem",
    ],
)
def test_a_failed_write_leaves_the_tensor_unchanged(op):
    for L in (torch, jtorch):
        x = L.arange(5.0)
        bad = L.tensor([1, 10])
        call = {
            "index_put_": lambda: x.index_put_((bad,), L.ones(2)),
            "index_add_": lambda: x.index_add_(0, bad, L.ones(2)),
            "index_copy_": lambda: x.index_copy_(0, bad, L.ones(2)),
            "index_fill_": lambda: x.index_fill_(0, bad, 7.0),
            "scatter_": lambda: x.scatter_(0, bad, L.ones(2)),
            "scatter_add_": lambda: x.scatter_add_(0, bad, L.ones(2)),
            "put_": lambda: x.put_(bad, L.ones(2)),
            "setitem": lambda: x.__setitem__(bad, 1.0),
        }[op]
        with pytest.raises((IndexError, RuntimeError)):
            call()
        if L is jtorch:  # PyTorch itself may have written the in-range part
            assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
