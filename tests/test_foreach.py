"""`torch._foreach_*`: one compiled program per list, the single ops' bits, PyTorch's list
semantics (expected values from numpy and from PyTorch's documented behaviour)."""

import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jtorch as torch
from jtorch import _programs
from jtorch._ops import _foreach
from jtorch._ops._opdef import OPS
from jtorch._tensor import wrap
from tests.helpers import ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS

SHAPES = [(3, 4), (5,), (2, 1, 3), (), (7, 2), (4, 4, 2), (1,), (6,)]


def made(fn) -> int:
    """How many XLA programs `fn()` made (compiled, or read from the disk cache)."""
    before = _programs.programs_made()
    fn()
    return _programs.programs_made() - before


def _lists(seed, n=2, shapes=SHAPES, low=None):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if low is None:
            arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        else:
            arrays = [rng.uniform(low, 1.0, s).astype(np.float32) for s in shapes]
        out.append([torch.tensor(a) for a in arrays])
    return out


def _bits(t):
    return t.numpy().view(np.uint32) if t.dtype == torch.float32 else t.numpy()


# ---------------------------------------------------------------------------
# One program per list


def test_one_call_compiles_one_program_for_every_shape_in_the_list():
    xs, ys = _lists(1)
    coef = torch.tensor(0.25)
    assert made(lambda: torch._foreach_mul_(xs, coef)) == 1
    assert made(lambda: torch._foreach_mul_(xs, coef)) == 0  # the program comes back
    assert made(lambda: torch._foreach_norm(xs)) == 1
    assert made(lambda: torch._foreach_norm(ys)) == 0  # same shapes and dtypes
    assert made(lambda: torch._foreach_add(xs, ys, alpha=0.5)) == 1
    # alpha, a scalar's value and a scalar list's values are traced, not compiled in
    assert made(lambda: torch._foreach_add(xs, ys, alpha=-2.0)) == 0
    assert made(lambda: torch._foreach_lerp(xs, ys, [0.1 * i for i in range(len(xs))])) == 1
    assert made(lambda: torch._foreach_lerp(xs, ys, [0.2 * i for i in range(len(xs))])) == 0


def test_the_programs_are_a_bounded_cache():
    cache = _foreach.PROGRAMS
    assert _programs.CACHES["foreach"] is cache
    assert 1 <= cache.maxsize < _programs._BASE_SIZE
    xs, ys = _lists(2, shapes=[(9, 3), (2, 9)])
    torch._foreach_sub(xs, ys)
    assert len(cache) >= 1


def test_clip_grad_norm_compiles_two_programs_for_a_new_list_of_shapes():
    def params(shapes):
        ps = [torch.nn.Parameter(torch.ones(s)) for s in shapes]
        for i, p in enumerate(ps):
            p.grad = torch.full(tuple(p.shape), float(i + 1))
        return ps

    first = [(11, 3), (3, 12), (13,), (2, 2, 11), (11, 5), (17,), (4, 11), (19, 2)]
    torch.nn.utils.clip_grad_norm_(params(first), 1.0)  # the total norm's programs, for 8
    shifted = params([(s[0] + 1,) + s[1:] for s in first])
    # the per-tensor norms and the scaling: one program each, not one per shape (the new
    # parameters are made before: their creation's programs are not counted)
    assert made(lambda: torch.nn.utils.clip_grad_norm_(shifted, 1.0)) == 2


# ---------------------------------------------------------------------------
# Each element is the single op's result, bit for bit


@pytest.mark.parametrize(
    "name, foreach, single",
    [
        ("mul", lambda x, y: torch._foreach_mul(x, y), lambda a, b: torch.mul(a, b)),
        ("mul scalar", lambda x, y: torch._foreach_mul(x, 0.3), lambda a, b: a * 0.3),
        ("add", lambda x, y: torch._foreach_add(x, y, alpha=0.7), lambda a, b: a.add(b, alpha=0.7)),
        (
            "addcmul",
            lambda x, y: torch._foreach_addcmul(x, y, x, value=0.37),
            lambda a, b: torch.addcmul(a, b, a, value=0.37),
        ),
        (
            "addcmul scalars",
            lambda x, y: torch._foreach_addcmul(x, y, y, [0.5 + i for i in range(len(x))]),
            None,
        ),
        ("lerp", lambda x, y: torch._foreach_lerp(x, y, 0.37), lambda a, b: torch.lerp(a, b, 0.37)),
        ("lerp high", lambda x, y: torch._foreach_lerp(x, y, 0.8), lambda a, b: a.lerp(b, 0.8)),
        ("lerp tensors", lambda x, y: torch._foreach_lerp(x, y, y), lambda a, b: a.lerp(b, b)),
        (
            "addcdiv",
            lambda x, y: torch._foreach_addcdiv(x, x, y, value=-0.5),
            lambda a, b: torch.addcdiv(a, a, b, value=-0.5),
        ),
        ("div", lambda x, y: torch._foreach_div(x, y), lambda a, b: a / b),
        ("norm", lambda x, y: torch._foreach_norm(x), lambda a, b: torch.linalg.vector_norm(a)),
    ],
)
def test_each_element_has_the_single_ops_bits(name, foreach, single):
    xs, ys = _lists(3)
    if single is None:  # addcmul with a scalar per element
        expected = [torch.addcmul(a, b, b, value=0.5 + i) for i, (a, b) in enumerate(zip(xs, ys))]
    else:
        expected = [single(a, b) for a, b in zip(xs, ys)]
    for _ in range(2):  # the program's first (compiling) call and a cached one
        got = foreach(xs, ys)
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_array_equal(_bits(g), _bits(e))


def test_in_place_results_have_the_single_ops_bits_too():
    xs, ys = _lists(4)
    copies = [x.clone() for x in xs]
    torch._foreach_addcmul_(xs, ys, ys, value=0.1)
    for x, c, y in zip(xs, copies, ys):
        np.testing.assert_array_equal(_bits(x), _bits(c.addcmul_(y, y, value=0.1)))


# ---------------------------------------------------------------------------
# Values, dtypes and forms (numpy and PyTorch's documented promotion)


def test_values_against_numpy():
    xs, ys = _lists(5, low=0.1)
    a = [x.numpy() for x in xs]
    b = [y.numpy() for y in ys]
    cases = [
        (torch._foreach_sqrt(xs), [np.sqrt(v) for v in a]),
        (torch._foreach_sub(xs, ys, alpha=2), [u - 2 * v for u, v in zip(a, b)]),
        (torch._foreach_pow(xs, 2), [u**2 for u in a]),
        (torch._foreach_pow(2.0, xs), [2.0**u for u in a]),
        (torch._foreach_maximum(xs, ys), [np.maximum(u, v) for u, v in zip(a, b)]),
        (torch._foreach_clamp_max(xs, 0.5), [np.minimum(u, 0.5) for u in a]),
        (torch._foreach_norm(xs, 1), [np.abs(u).sum() for u in a]),
        (torch._foreach_norm(xs, math.inf), [np.abs(u).max() for u in a]),
        (torch._foreach_max(ys), [v.max() for v in b]),
        (torch._foreach_reciprocal(xs), [1 / u for u in a]),
    ]
    for got, expected in cases:
        assert isinstance(got, tuple) and len(got) == len(expected)
        for g, e in zip(got, expected):
            np.testing.assert_allclose(g.numpy(), e, rtol=1e-5, atol=1e-6)


def test_each_element_promotes_on_its_own():
    ints = [torch.ones(2, dtype=torch.int64), torch.ones(3, dtype=torch.int64)]
    # a float scalar makes int elements float (default dtype); an int one keeps them
    assert [t.dtype for t in torch._foreach_add(ints, [1, 2.5])] == [torch.int64, torch.float32]
    assert [t.dtype for t in torch._foreach_mul(ints, 2)] == [torch.int64] * 2
    assert [t.dtype for t in torch._foreach_sqrt(ints)] == [torch.float32] * 2
    # a dimensioned float64 tensor wins, a 0-dim float64 one does not
    halves = [torch.ones(2, dtype=torch.float16)]
    assert torch._foreach_mul(halves, [torch.ones(2, dtype=torch.float64)])[0].dtype == (
        torch.float64
    )
    floats = [torch.ones(2)]
    assert torch._foreach_mul(floats, torch.tensor(2.0, dtype=torch.float64))[0].dtype == (
        torch.float32
    )
    assert torch._foreach_norm(floats, dtype=torch.float64)[0].dtype == torch.float64


def test_scalar_forms():
    xs = [torch.ones(2), torch.ones(3)]
    assert [t.tolist() for t in torch._foreach_add(xs, [1, 2])] == [[2.0, 2.0], [3.0] * 3]
    assert [t.tolist() for t in torch._foreach_mul(xs, torch.tensor(4.0))] == [[4.0] * 2, [4.0] * 3]
    packed = torch.tensor([2.0, 3.0])
    got = torch._foreach_addcmul(xs, xs, xs, packed)
    assert [t.tolist() for t in got] == [[3.0, 3.0], [4.0] * 3]
    assert [t.tolist() for t in torch._foreach_lerp(xs, [2 * x for x in xs], 0.5)] == [
        [1.5] * 2,
        [1.5] * 3,
    ]


# ---------------------------------------------------------------------------
# In place


def test_in_place_returns_the_list_rebinds_and_bumps_versions():
    xs = [torch.ones(2), torch.ones(3)]
    arrays = [x._array for x in xs]
    assert torch._foreach_add_(xs, 1.0) is xs
    assert all(x._version == 1 for x in xs)
    assert [x.tolist() for x in xs] == [[2.0] * 2, [2.0] * 3]
    assert arrays[0].tolist() == [1.0, 1.0]  # a new array: nothing wrote into the old one
    assert torch._foreach_zero_(xs) is xs and all(x._version == 2 for x in xs)
    assert [x.tolist() for x in xs] == [[0.0] * 2, [0.0] * 3]


def test_in_place_writes_through_views():
    x = torch.arange(12.0).reshape(3, 4)
    torch._foreach_mul_([x[0], x.t()[1]], [10.0, -1.0])
    expected = np.arange(12.0).reshape(3, 4)
    expected[0] *= 10
    expected[:, 1] *= -1
    np.testing.assert_array_equal(x.numpy(), expected)


def test_targets_sharing_storage_are_updated_one_after_the_other():
    x = torch.zeros(3)
    torch._foreach_add_([x, x], [torch.ones(3), torch.ones(3)])
    assert x.tolist() == [2.0, 2.0, 2.0]
    y = torch.zeros(2, 2)
    torch._foreach_add_([y[0], y[1]], [torch.ones(2), y[0]])  # reads y[0] after its update
    assert y.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_in_place_results_stay_committed_to_their_device():
    t = wrap(jnp.ones(3))  # an uncommitted array, as jnp makes
    assert not t._array.committed
    torch._foreach_mul_([t, torch.ones(2)], 3.0)
    assert t._array.committed and t.tolist() == [3.0] * 3


def test_a_failing_element_leaves_every_list_unchanged():
    xs = [torch.ones(2), torch.ones(2, dtype=torch.int64)]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired"):
        torch._foreach_mul_(xs, 1.5)
    assert xs[0].tolist() == [1.0, 1.0] and xs[0]._version == 0
    with pytest.raises(RuntimeError, match="output with shape \\[2\\] doesn't match"):
        torch._foreach_add_(xs[:1], [torch.ones(3, 2)])


# ---------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: torch._foreach_add([], 1), RuntimeError, "at least one tensor"),
        (
            lambda: torch._foreach_mul([torch.ones(2)] * 2, [torch.ones(2)]),
            RuntimeError,
            "same number of tensors, got 2 and 1",
        ),
        (
            lambda: torch._foreach_div([torch.ones(2)] * 2, [1.0]),
            RuntimeError,
            "same number of elements as scalar list",
        ),
        (
            lambda: torch._foreach_mul([torch.ones(2)], torch.ones(2)),
            RuntimeError,
            "scalar tensor expected to be 0 dim but it has 1 dimensions and 2 elements",
        ),
        (
            lambda: torch._foreach_add([torch.ones(2)], [torch.ones(3)]),
            RuntimeError,
            "The size of tensor a \\(2\\) must match the size of tensor b \\(3\\)",
        ),
        (
            lambda: torch._foreach_norm([torch.ones(0)], math.inf),
            RuntimeError,
            "_foreach_norm cannot compute the infinity norm on an empty tensor",
        ),
        (
            lambda: torch._foreach_max([torch.ones(0)]),
            RuntimeError,
            "_foreach_max cannot compute the maximum of an empty tensor",
        ),
        (
            lambda: torch._foreach_add([torch.ones(2)], 1, alpha=2),
            TypeError,
            "_foreach_add\\(\\) received an invalid combination of arguments",
        ),
        (
            lambda: torch._foreach_mul([torch.ones(2)], [torch.ones(2)], alpha=2),
            TypeError,
            "received an invalid combination of arguments - got \\(list, list, alpha=int\\)",
        ),
        (
            lambda: torch._foreach_add([torch.ones(2), None], 1),
            TypeError,
            "expected Tensor as element 1 in argument 0, but got NoneType",
        ),
        (
            lambda: torch._foreach_norm([torch.ones(2)], "fro"),
            TypeError,
            "argument 'ord' \\(position 2\\) must be Number, not str",
        ),
    ],
)
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---------------------------------------------------------------------------
# Autograd, tracing


def test_out_of_place_forms_are_differentiable():
    w = [torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)]
    outs = torch._foreach_mul(w, w)  # x * x: gradient 2x
    norms = torch._foreach_norm(w)  # gradient x / |x|
    (sum(o.sum() for o in outs) + sum(norms)).backward()
    np.testing.assert_allclose(w[0].grad.numpy(), 2 * np.array([1.0, 2.0]) + [1, 2] / np.sqrt(5))
    np.testing.assert_allclose(w[1].grad.numpy(), [6.0 + 1.0])


def test_in_place_on_a_leaf_that_requires_grad_raises_before_writing():
    plain, leaf = torch.ones(2), torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        torch._foreach_add_([plain, leaf], 1.0)
    assert plain.tolist() == [1.0, 1.0]
    with torch.no_grad():
        torch._foreach_add_([plain, leaf], 1.0)
    assert leaf.tolist() == [2.0, 2.0] and leaf.grad_fn is None


def test_in_place_on_tensors_in_a_graph_records_each_op():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w * 1.0
    torch._foreach_mul_([y], 3.0)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    assert w.grad.tolist() == [3.0, 3.0]


def test_under_jtorch_compile():
    xs = [torch.ones(2), torch.full((3,), 2.0)]

    @torch.compile
    def step(c):
        torch._foreach_mul_(xs, c)
        return torch._foreach_norm(xs, 1)

    norms = step(torch.tensor(2.0))
    assert [n.item() for n in norms] == [4.0, 12.0]
    assert [x.tolist() for x in xs] == [[2.0, 2.0], [4.0, 4.0, 4.0]]


def test_every_foreach_op_applies_a_declared_op_and_is_published():
    for name, (op_name, _, variants) in _foreach.FOREACH.items():
        assert op_name in OPS
        for v in variants:
            fname = "_foreach_" + name + ("_" if v == "inplace" and not name.endswith("_") else "")
            assert callable(getattr(torch, fname)), fname


def test_lists_on_a_traced_function_under_jax_jit():
    # jtorch.func and jax transforms see per-element ops (tracing never builds a program)
    def f(a):
        (out,) = torch._foreach_exp([wrap(a)])
        return out._array

    np.testing.assert_allclose(jax.jit(f)(jnp.ones(2)), np.exp(np.ones(2)), rtol=1e-6)


def test_sparse_elements_take_the_single_ops_path():
    s = torch.eye(3).to_sparse()
    out = torch._foreach_mul([s, torch.ones(2)], 2.0)
    assert out[0].is_sparse and out[0].to_dense().tolist() == (2 * np.eye(3)).tolist()
    assert out[1].tolist() == [2.0, 2.0]
    torch._foreach_mul_([s], 3.0)
    assert s.to_dense().tolist() == (3 * np.eye(3)).tolist()


def test_lists_over_several_devices():
    # jax fixes its device count when its backend starts: a fresh process with 5 host
    # devices, `cpu` and cuda:0..3 (JTORCH_CUDA_IS_CPU=1)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(
        os.environ,
        PYTHONPATH=root,
        JTORCH_COMPILE_NOTE="0",
        JTORCH_CUDA_IS_CPU="1",
        XLA_FLAGS="--xla_force_host_platform_device_count=5",
    )
    script = os.path.join(root, "tests", "dist_scripts", "foreach_devices.py")
    r = subprocess.run(
        [sys.executable, "-m", "jtorch", script],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip() == "ok"


def test_copying_same_shapes_and_dtypes_compiles_nothing():
    targets = [torch.zeros(5, 4), torch.zeros(9)]
    sources = [torch.ones(5, 4), torch.arange(9.0)]
    assert made(lambda: torch._foreach_copy_(targets, sources)) == 0
    assert targets[1].tolist() == list(range(9)) and targets[0]._version == 1
    sources[1].add_(1)  # a copy, not a view of the source
    assert targets[1].tolist() == list(range(9))
    torch._foreach_copy_(targets, [torch.ones(4, dtype=torch.int64), torch.ones(9)])  # a cast
    assert targets[0].tolist() == [[1.0] * 4] * 5 and targets[0].dtype == torch.float32


def test_a_broadcasting_error_in_place_writes_nothing():
    xs = [torch.ones(3), torch.ones(2)]
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match"):
        torch._foreach_add_(xs, [torch.ones(3), torch.ones(3)])
    assert xs[0].tolist() == [1.0] * 3 and xs[0]._version == 0


def test_plain_lists_compile_one_program_after_a_subclass_turned_the_checks_on():
    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs or {})

    torch.ones(2).as_subclass(Logged)  # (turns torch-function checks on in this process)
    xs = [torch.ones(3, 5), torch.ones(7), torch.ones(2, 2, 2)]
    assert made(lambda: torch._foreach_mul_(xs, 0.5)) == 1
    assert [x.sum().item() for x in xs] == [7.5, 3.5, 4.0]
