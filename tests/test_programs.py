"""Shapes are cheap (DESIGN 13): new positions and sizes reuse compiled programs, the caches of
programs are bounded, and compiling is counted (`jtorch.compiler.stats()`)."""

import gc
import os
import weakref

import jax
import numpy as np
import pytest

import jtorch as torch
from jtorch import _programs, _stored
from jtorch._ops import _registry
from tests.helpers import ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS


@pytest.fixture(autouse=True)
def _no_kept_kernels(monkeypatch):
    """A kernel another test compiled may be kept on disk (`_stored`); found there, a call the
    host path would have run loads it instead, which counts among the programs made."""
    monkeypatch.setitem(_stored._state, "off", True)
    # and what comes back compiles at its COMPILE_AFTER-th call, whatever its host runs cost
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.0)


def made(fn) -> int:
    """How many XLA programs `fn()` made (compiled, or read from the disk cache)."""
    before = _programs.programs_made()
    fn()
    return _programs.programs_made() - before


# ---------------------------------------------------------------------------
# Integer positions are traced, not compiled in


def test_integer_indices_reuse_one_program():
    c = torch.zeros(25) > 0
    c[3] = True
    for i in range(_programs.COMPILE_AFTER):  # the replay of this shape has come back
        bool(c[i % 2])  # often enough to get its program
    got = []
    assert made(lambda: got.extend(bool(c[i]) for i in range(2, 22))) == 0
    assert got == [i == 3 for i in range(2, 22)]


def test_writes_at_new_positions_reuse_one_program():
    x = torch.zeros(24, 3)
    rows = [torch.ones(3) * i for i in range(22)]
    x[0], x[1] = rows[0], rows[1]

    def write():
        for i in range(2, 22):
            x[i] = rows[i]

    assert made(write) == 0
    expected = np.zeros((24, 3), np.float32)
    expected[:22] = np.arange(22)[:, None]
    np.testing.assert_array_equal(x.numpy(), expected)


def test_slices_at_new_offsets_reuse_one_program():
    data = np.arange(40, dtype=np.float32).reshape(20, 2)
    x = torch.from_numpy(data.copy())
    x[0:5].sum(), x[1:6].sum()  # a slice from 0 is its own (argument-free) program
    sums = []
    assert made(lambda: sums.extend(float(x[a : a + 5].sum()) for a in range(2, 15))) == 0
    assert sums == [float(data[a : a + 5].sum()) for a in range(2, 15)]
    x.narrow(0, 1, 3) + 0
    assert made(lambda: [x.narrow(0, a, 3) + 0 for a in range(2, 15)]) == 0


def test_negative_indices_and_bounds_follow_python_and_pytorch():
    data = np.arange(12, dtype=np.float32).reshape(6, 2)
    x = torch.from_numpy(data.copy())
    for i in range(1, 7):
        np.testing.assert_array_equal(x[-i].numpy(), data[-i])
        np.testing.assert_array_equal(x[-i:].numpy(), data[-i:])
    # slice bounds clamp, as Python's do
    assert x[4:100].shape == (2, 2) and x[-100:3].shape == (3, 2) and x[5:2].shape == (0, 2)
    with pytest.raises(IndexError, match="index 6 is out of bounds for dimension 0 with size 6"):
        x[6]
    with pytest.raises(IndexError, match="index -7 is out of bounds for dimension 0 with size 6"):
        x[-7]
    with pytest.raises(IndexError, match="index 2 is out of bounds for dimension 1 with size 2"):
        x[0, 2] = 1.0
    np.testing.assert_array_equal(x.numpy(), data)  # a failed write changes nothing


def test_strided_slices_and_views_of_views_at_new_offsets():
    data = np.arange(60, dtype=np.float32).reshape(20, 3)
    x = torch.from_numpy(data.copy())
    for a in range(0, 8):
        np.testing.assert_array_equal(x[a : a + 9 : 3, 1].numpy(), data[a : a + 9 : 3, 1])
        v = x[a + 1 :]  # a view, then a view of it
        np.testing.assert_array_equal(v[2].numpy(), data[a + 3])
    y = torch.from_numpy(data.copy())
    for a in range(0, 6):
        y[a : a + 9 : 3, 1] = -1.0 - a
        data[a : a + 9 : 3, 1] = -1.0 - a
    np.testing.assert_array_equal(y.numpy(), data)


def test_as_strided_offsets_are_traced():
    base = torch.arange(30.0)
    for k in range(_programs.COMPILE_AFTER):  # the replay's program exists now
        base.as_strided((2, 3), (3, 1), k % 2) * 1
    flat = np.arange(30.0)
    outs = []
    assert (
        made(lambda: outs.extend(base.as_strided((2, 3), (3, 1), k) * 1 for k in range(2, 20))) == 0
    )
    for k, o in zip(range(2, 20), outs):
        np.testing.assert_array_equal(o.numpy(), flat[k : k + 6].reshape(2, 3))


def test_gradients_through_new_positions(monkeypatch):
    from jtorch.autograd import _fused

    monkeypatch.setattr(_fused, "_AFTER", 2)
    w = torch.zeros(10, 3, requires_grad=True)
    for i in range(3):  # the backward (and its fused form, on the second sighting)
        (w[i] * (i + 1)).sum().backward()

    for _, future in list(_fused._pending.values()):
        future.result()  # (compiled in the background: counted when it ends)
    # The fused program's first call is checked against the engine's result once
    # (`_fused._check_bits`), which may compile that reference's pieces: once per graph.
    (w[3] * 4).sum().backward()
    before = _programs.programs_made()
    for i in range(4, 10):
        (w[i] * (i + 1)).sum().backward()
    assert _programs.programs_made() - before == 0
    np.testing.assert_array_equal(w.grad.numpy(), np.repeat(np.arange(1, 11.0)[:, None], 3, 1))


def test_writes_of_tensors_that_require_grad_at_new_positions():
    src = torch.arange(1.0, 4.0, requires_grad=True)
    x = torch.zeros(8, 3)
    for i in range(8):
        x = x.clone()
        x[i] = src * i
    x.sum().backward()
    np.testing.assert_array_equal(src.grad.numpy(), np.full(3, sum(range(8)), np.float32))


def _views_of(n):
    base = np.arange(n * 6 * 4, dtype=np.float32).reshape(n, 6, 4)
    x = torch.from_numpy(base.copy())
    flat = base.reshape(-1)
    return [
        (x[:, 1:5:2], base[:, 1:5:2]),
        (x.transpose(0, 2), np.swapaxes(base, 0, 2)),
        (x[-1], base[-1]),
        (x.view(n, 24)[:, 3], base.reshape(n, 24)[:, 3]),
        (x[:, :1].expand(n, 3, 4), np.broadcast_to(base[:, :1], (n, 3, 4))),
        (x.diagonal(0, 1, 2), np.diagonal(base, 0, 1, 2)),
        (x.as_strided((2, 3), (5, 1), 2), flat[[[2, 3, 4], [7, 8, 9]]]),
        (x.unfold(1, 2, 2), base.reshape(n, 3, 2, 4).transpose(0, 1, 3, 2)),
        (x.split(2, dim=1)[1].permute(2, 0, 1), base[:, 2:4].transpose(2, 0, 1)),
        (x[:, 0:0], base[:, 0:0]),
    ]


@pytest.mark.skipif(jax.default_backend() != "cpu", reason="host copies of views: CPU arrays")
def test_views_of_new_shapes_are_copied_out_without_a_program():
    # A `generate` loop's growing length: every view meets its shape once.
    for n in range(1, 6):
        views = _views_of(n)
        got = []
        assert made(lambda: got.extend(v.numpy() for v, _ in views)) == 0
        for g, (_, expected) in zip(got, views):
            assert g.shape == expected.shape
            np.testing.assert_array_equal(g, expected)


def test_a_view_shape_that_keeps_coming_back_gets_its_program():
    for _ in range(_programs.COMPILE_AFTER + 2):
        views = _views_of(9)
        for v, expected in views:
            np.testing.assert_array_equal(v.numpy(), expected)
    assert made(lambda: [v.numpy() for v, _ in _views_of(9)]) == 0  # compiled by now
    x = torch.arange(12.0).reshape(3, 4)
    v = x.t()
    x.add_(1)  # the root changed: the view is derived again
    np.testing.assert_array_equal(v.numpy(), np.arange(1.0, 13.0).reshape(3, 4).T)


# ---------------------------------------------------------------------------
# Creation ops do not compile per size


def test_filled_factories_do_not_compile_per_size():
    def run():
        for n in range(1, 301):
            torch.full((n,), 1.5)
            torch.zeros(n, 2)
            torch.ones(n, dtype=torch.int32)
            torch.empty(n)
            torch.arange(n)
            torch.linspace(0, 1, n)

    assert made(run) <= 3
    np.testing.assert_array_equal(torch.full((4, 2), 2.5).numpy(), np.full((4, 2), 2.5))
    np.testing.assert_array_equal(torch.ones(3, dtype=torch.int32).numpy(), np.ones(3))
    assert torch.zeros(2, dtype=torch.bool).dtype == torch.bool


def test_a_size_that_keeps_coming_back_gets_a_program_with_the_value_traced():
    from jtorch._ops.creation import COMPILE_AFTER

    fills = [0.5 + k for k in range(COMPILE_AFTER + 2)]  # built on the host, then compiled
    for v, t in zip(fills, [torch.full((7, 3), v) for v in fills]):
        np.testing.assert_array_equal(t.numpy(), np.full((7, 3), v, np.float32))
    assert made(lambda: [torch.full((7, 3), v) for v in (-4.5, 5.5, 6.5)]) == 0
    np.testing.assert_array_equal(torch.full((2,), float("nan")).isnan().numpy(), [True, True])


def test_random_sizes_share_a_few_programs_and_keep_their_numbers():
    # keys and random bits are hashed on the host, one program turns bits into numbers:
    # every size up to 4096 is cut from one draw
    assert made(lambda: [torch.randn(n) for n in range(1, 301)]) <= 1
    from jtorch._ops.creation import COMPILE_AFTER

    for shape in [(5, 3), (1,), (33,), (2, 2, 2)]:
        draws = []
        for _ in range(COMPILE_AFTER + 1):  # cut from a bigger draw; then a program of its own
            torch.manual_seed(7)
            draws.append(torch.rand(*shape).numpy())
        for d in draws[1:]:
            np.testing.assert_array_equal(draws[0], d)
        assert draws[0].shape == shape
    torch.manual_seed(3)
    r = torch.randint(2, 9, (200,))
    assert r.dtype == torch.int64 and int(r.min()) >= 2 and int(r.max()) < 9


def test_negative_sizes_raise_pytorchs_error():
    with pytest.raises(RuntimeError, match=r"negative dimension -1: \[2, -1\]"):
        torch.ones(2, -1)
    with pytest.raises(RuntimeError, match="zeros: Dimension size must be non-negative."):
        torch.zeros(2, -1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        torch.full((-3,), 1.0)


# ---------------------------------------------------------------------------
# Bounded caches that free what they evict


def test_kernel_cache_is_bounded_and_drops_evicted_programs():
    cache = _registry.KERNELS
    old = cache.maxsize
    cache.maxsize = 8
    try:
        with torch.no_grad():  # (a recorded node would hold its kernel for backward)
            # an op and shapes no other test uses: no other cache holds these kernels
            x = torch.copysign(torch.ones(1, 13, 1), -2.0)
            key = next(k for k in reversed(list(cache)) if k[0] is torch.copysign._op)
            first = weakref.ref(cache.get(key))
            for n in range(2, 40):
                torch.copysign(torch.ones(n, 13, 1), -2.0)
        assert len(cache) <= 8 and cache.evictions > 0
        del x
        gc.collect()
        assert first() is None  # nothing else held the evicted kernel's wrapper
    finally:
        cache.maxsize = old


def test_program_cache_is_an_lru():
    cache = _programs.ProgramCache("test-lru", register=False)
    cache.maxsize = 3
    for k in "abc":
        cache.put(k, k.upper())
    assert cache.get("a") == "A"  # a is now the most recently used
    cache.put("d", "D")
    assert list(cache) == ["c", "a", "d"] and cache.evictions == 1 and cache.get("b") is None


def test_sightings_count_and_forget():
    seen = _programs.Sightings(limit=2)
    assert [seen.note("a"), seen.note("a"), seen.note("b"), seen.note("c")] == [1, 2, 1, 1]
    assert seen.note("a") == 1  # evicted past the limit: counted afresh


def test_shaped_jit_makes_one_program_per_shape():
    cache = _programs.ProgramCache("test-shaped", register=False)
    add = _programs.ShapedJit(lambda a, b: a + b, cache)
    import jax.numpy as jnp

    for n in (1, 2, 2, 3):
        np.testing.assert_array_equal(np.asarray(add(jnp.ones(n), jnp.ones(n))), np.full(n, 2.0))
    assert len(cache) == 3


# ---------------------------------------------------------------------------
# Feedback


def test_stats_count_compiles_and_describe_the_caches():
    s = torch.compiler.stats()
    assert {"compiles", "compile_seconds", "disk_hits", "disk_seconds", "caches"} <= set(s)
    assert {"kernels", "vjps", "views", "fused-backwards", "creation"} <= set(s["caches"])
    for c in s["caches"].values():
        assert c["size"] <= c["limit"]
    before = torch.compiler.stats()["compiles"] + torch.compiler.stats()["disk_hits"]
    torch.ones(3, 5, 7, 11).cumsum(2)  # a shape no other test uses
    after = torch.compiler.stats()
    assert after["compiles"] + after["disk_hits"] > before


def test_the_compile_note_is_one_line_once(monkeypatch, capsys):
    monkeypatch.setitem(_programs._note, "after_s", 0.0)
    monkeypatch.setitem(_programs._note, "shown", False)
    monkeypatch.setitem(_programs._note, "enabled", True)
    _programs._maybe_note()
    _programs._maybe_note()
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("jtorch: ") and "JTORCH_COMPILE_NOTE=0" in err[0]
    monkeypatch.setitem(_programs._note, "shown", False)
    monkeypatch.setitem(_programs._note, "enabled", False)
    _programs._maybe_note()
    assert capsys.readouterr().err == ""


def test_fused_backward_compiles_in_the_background_for_graphs_that_come_back(monkeypatch):
    from jtorch.autograd import _fused

    monkeypatch.setattr(_fused, "_AFTER", 2)
    torch.manual_seed(0)
    w = torch.randn(4, 3, requires_grad=True)
    x = torch.randn(6, 4)

    def step():
        w.grad = None
        (torch.tanh(x @ w) * 1.25).sum().backward()
        return w.grad.numpy().copy()

    pending, compiled = len(_fused._pending), len(_fused._compiled)
    grads = [step()]  # seen once: no fused program
    assert (len(_fused._pending), len(_fused._compiled)) == (pending, compiled)
    grads.append(step())  # seen again: its compile starts, not awaited
    for _, future in list(_fused._pending.values()):
        future.result()
    grads += [step(), step()]  # the fused program, once compiled
    assert len(_fused._compiled) == compiled + 1
    for g in grads[1:]:
        np.testing.assert_allclose(g, grads[0], rtol=1e-6, atol=1e-6)


def test_compiler_reset_empties_the_program_caches():
    torch.ones(3) + 1
    assert len(_registry.KERNELS) > 0
    torch.compiler.reset()
    assert all(len(c) == 0 for c in _programs.CACHES.values())
    np.testing.assert_array_equal((torch.ones(3) + 1).numpy(), [2.0, 2.0, 2.0])


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_a_training_loop_compiles_its_kernels_and_optimizer_step_once(monkeypatch):
    from jtorch.autograd import _fused

    monkeypatch.setattr(_fused, "_BACKGROUND", False)  # (its compile is not counted here)
    # LayerNorm's parameters come from `ones`/`zeros`, Linear's from draws, AdamW's state
    # from `zeros_like`; gradients and the step's results are committed to the device: a
    # factory's uncommitted array turning committed would compile each kernel it meets again.
    model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.LayerNorm(5))
    opt = torch.optim.AdamW(model.parameters(), lr=0.1)
    x = torch.randn(3, 4)
    counts = []
    for _ in range(3):
        opt.zero_grad()
        loss = model(x).square().sum()
        loss.backward()
        counts.append((made(lambda: model(x)), made(opt.step)))
    assert counts[1:] == [(0, 0), (0, 0)]


# ---------------------------------------------------------------------------
# Programs known in advance compile side by side (`_programs.ahead`)


_FIRST_STEP = """
import json, sys
import jtorch as torch
from jtorch import _programs
_programs.cpus = lambda: int(sys.argv[1])
jobs_run = []
_ahead = _programs.ahead
def counting(jobs):
    return _ahead([lambda job=job: jobs_run.append(job()) for job in jobs])
_programs.ahead = counting
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(7, 13), torch.nn.Tanh(), torch.nn.LayerNorm(13), torch.nn.Linear(13, 3)
)
decay = [p for p in model.parameters() if p.dim() == 2]
rest = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay}, {"params": rest, "weight_decay": 0.0}], lr=0.1)
loss = torch.nn.functional.cross_entropy(model(torch.randn(5, 7)), torch.tensor([0, 1, 2, 0, 1]))
made = []
for fn in (loss.backward, opt.step):
    before = _programs.programs_made()
    fn()
    made.append(_programs.programs_made() - before)
params = [p.detach().numpy().tolist() for p in model.parameters()]
print(json.dumps([made, len(jobs_run), params]))
"""


def _first_step(cpus):
    """Programs made by a first backward and a first two-group optimizer step, and the
    parameters after it, in a fresh process (nothing compiled before), with `cpus` CPUs."""
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, JTORCH_CACHE_DIR="0", JTORCH_COMPILE_NOTE="0", PYTHONPATH=root)
    r = subprocess.run(
        [sys.executable, "-c", _FIRST_STEP, str(cpus)],
        capture_output=True, text=True, timeout=300, env=env, check=True,
    )  # fmt: skip
    return json.loads(r.stdout)


def test_a_first_step_compiles_its_programs_ahead_once():
    (alone, jobs_alone, params_alone), (ahead, jobs, params_ahead) = _first_step(1), _first_step(2)
    assert jobs_alone == 0 and jobs >= 6  # (the VJPs, then the two groups' steps)
    # the same programs, each compiled once (ahead, then found by the call)
    assert ahead == alone
    assert alone[0] >= 4 and alone[1] == 2  # (VJPs; one step program per group)
    for a, b in zip(params_ahead, params_alone):
        np.testing.assert_array_equal(a, b)


def test_a_job_that_fails_ahead_leaves_its_error_to_the_call():
    def fails():
        raise RuntimeError("compile failed")

    ran = []
    with _programs.ahead([fails, lambda: ran.append(1)]):
        pass
    assert ran == [1] or _programs.cpus() == 1


def test_data_from_numpy_and_a_loader_compiles_kernels_once():
    x = np.random.default_rng(0).standard_normal((3, 5)).astype(np.float32)
    batch = next(iter(torch.utils.data.DataLoader([x[i] * 0 + i for i in range(3)], batch_size=3)))
    for t in (torch.from_numpy(x), batch):
        torch.ones(3, 5).mul(1.5).exp()  # a committed input's program
        assert made(lambda: t.mul(1.5).exp()) == 0


def test_a_loop_builds_its_fused_backward_once_the_graph_came_back_often(monkeypatch):
    from jtorch.autograd import _fused

    monkeypatch.setattr(_fused, "_BACKGROUND", False)
    assert _fused._AFTER == int(os.environ.get("JTORCH_FUSED_AFTER", "256"))
    monkeypatch.setattr(_fused, "_AFTER", 12)
    w = torch.randn(5, 3, requires_grad=True)
    x = torch.randn(4, 5)
    compiled = len(_fused._compiled)
    for step in range(1, 13):
        w.grad = None
        (torch.sin(x @ w) * 0.5).sum().backward()
        # node by node until the 12th sighting, whose backward is compiled (here: waited for)
        assert len(_fused._compiled) == compiled + (step == 12)


_PREPARED = """
import json, sys
import jtorch as torch
from jtorch import _programs
from jtorch.autograd import _engine
_programs.cpus = lambda: 2
if sys.argv[1] == "off":
    _engine.after_backward = None
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(7, 13), torch.nn.Tanh(), torch.nn.Linear(13, 3))
decay = [p for p in model.parameters() if p.dim() == 2]
rest = [p for p in model.parameters() if p.dim() < 2]
opt = torch.optim.AdamW([{"params": decay}, {"params": rest, "weight_decay": 0.0}], lr=0.1)
other = torch.nn.Linear(3, 2)  # (a second network, as a GAN's: no gradients yet)
other_opt = torch.optim.SGD(other.parameters(), lr=0.1, momentum=0.9)
loss = model(torch.randn(5, 7)).square().mean()
loss.backward()
state_after_backward = len(opt.state)
preparing = len(opt.__dict__.get("_preparing", ()))
other_waits = "_preparing" not in other_opt.__dict__
other(torch.randn(4, 3)).sum().backward()
started = len(other_opt.__dict__.get("_preparing", ()))
other_waits = other_waits and started == int(sys.argv[1] == "on")
for f in opt.__dict__.get("_preparing", ()):
    f.result()
before = _programs.programs_made()
opt.step()
made = _programs.programs_made() - before
params = [p.detach().numpy().tolist() for p in model.parameters()]
print(json.dumps([state_after_backward, preparing, made, len(opt.state), params, other_waits]))
"""


@pytest.mark.skipif(
    jax.default_backend() != "cpu",
    reason="kernels are kept (and a first step made ahead) with one device: README",
)
def test_an_optimizers_first_step_compiles_in_the_background_after_backward(tmp_path):
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def run(mode):
        env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path / mode), PYTHONPATH=root)
        env.update(JTORCH_COMPILE_NOTE="0")
        r = subprocess.run(
            [sys.executable, "-c", _PREPARED, mode],
            capture_output=True, text=True, timeout=300, env=env, check=True,
        )  # fmt: skip
        return json.loads(r.stdout)

    state, preparing, made, state_after, params, other_waits = run("on")
    # no state before the step (PyTorch creates it there); the two groups' programs were
    # being made, and the step made none of its own
    assert state == 0 and preparing == 2 and made == 0 and state_after == 4
    assert other_waits  # (an optimizer whose parameters had no gradient waits for its own)
    off = run("off")
    assert off[:3] == [0, 0, 2]
    assert params == off[4]  # the same update


def test_without_the_store_a_backward_makes_no_optimizer_state_aside(monkeypatch):
    """(`_stored` off here: no first-step program would be made ahead, so no initial state is
    made for it either: it would be an optimizer state's worth of memory for nothing.)"""
    made = []
    model = torch.nn.Linear(4, 3)
    opt = torch.optim.Adam(model.parameters())
    init = type(opt)._init_state
    monkeypatch.setattr(type(opt), "_init_state", lambda self, *a: made.append(1) or init(self, *a))
    model(torch.ones(2, 4)).sum().backward()
    assert made == []
    opt.step()
    assert len(made) == 2 and len(opt.state) == 2
