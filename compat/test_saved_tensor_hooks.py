"""`torch.autograd.graph` saved-tensor hooks (saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks) against PyTorch: which saves are packed, gradients, errors."""

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _run(lib, body):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape), str(t.dtype)))
        return t * 1

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    a = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = lib.tensor([4.0, 5.0, 6.0], requires_grad=True)
    try:
        out = body(lib, a, b, pack, unpack)
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return ("raises", type(e).__name__, str(e))
    grads = [None if g is None else [round(v, 4) for v in g.tolist()] for g in (a.grad, b.grad)]
    return out, sorted(log), grads


def _mul_exp(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        d = ((a * b) + 1).exp().sum()
    d.backward()


def _add_only(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        d = (a + b).sum()  # add saves nothing
    d.backward()


def _matmul(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        d = (a.reshape(3, 1) @ b.reshape(1, 3)).sum()
    d.backward()


def _save_on_cpu(lib, a, b, pack, unpack):
    with lib.autograd.graph.save_on_cpu():
        y = (a * b).sin().sum()
    y.backward()


def _nested(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (a * b).sum()  # the innermost pair is used
    y.backward()


def _disabled(lib, a, b, pack, unpack):
    with lib.autograd.graph.disable_saved_tensors_hooks("hooks are off here"):
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            pass


def _disable_inside(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
        with lib.autograd.graph.disable_saved_tensors_hooks("cannot disable now"):
            pass


def _bad_unpack(lib, a, b, pack, unpack):
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 3):
        y = (a * b).sum()
    y.backward()


CASES = [
    _mul_exp,
    _add_only,
    _matmul,
    _save_on_cpu,
    _nested,
    _disabled,
    _disable_inside,
    _bad_unpack,
]


@pytest.mark.parametrize("body", CASES, ids=[c.__name__ for c in CASES])
def test_saved_tensor_hooks(body):
    expected = _run(torch, body)
    actual = _run(jtorch, body)
    if expected[0] == "raises":
        assert actual[:2] == expected[:2]
        if body is not _bad_unpack:
            assert actual[2] == expected[2]
    else:
        assert actual == expected
