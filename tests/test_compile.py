"""jtorch.compile: whole training steps as one program, state lifting, guards, graph breaks."""

import warnings

import jax
import numpy as np
import pytest

import jtorch
import jtorch.nn as nn
import jtorch.nn.functional as F
from tests.helpers import ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS

# The first call's quick compile is a CPU path (elsewhere every program is compiled in full).
QUICK = jax.default_backend() == "cpu"


def _data(n=12, d=4, k=3):
    rng = np.random.default_rng(0)
    x = jtorch.tensor(rng.standard_normal((n, d)).astype(np.float32))
    y = jtorch.tensor(rng.integers(0, k, n))
    return x, y


def _mlp():
    jtorch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


def _train(compiled, steps=20, opt_cls=None):
    model = _mlp()
    opt = (opt_cls or (lambda p: jtorch.optim.Adam(p, lr=0.01)))(model.parameters())
    x, y = _data()

    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    f = jtorch.compile(step) if compiled else step
    losses = [f(x, y).item() for _ in range(steps)]
    return losses, [p.detach().numpy().copy() for p in model.parameters()], f


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
@pytest.mark.parametrize("opt", ["adam", "sgd"])
def test_training_step_trajectory_equals_eager(opt):
    make = None if opt == "adam" else (lambda p: jtorch.optim.SGD(p, lr=0.1, momentum=0.9))
    eager_losses, eager_params, _ = _train(False, opt_cls=make)
    losses, params, f = _train(True, opt_cls=make)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-6, atol=1e-7)
    for a, b in zip(params, eager_params):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # first call: no .grad and no optimizer state yet; from the second on, one program
    assert f.trace_count == 2 and f.call_count == 20


def test_the_first_step_program_runs_once_and_the_steady_one_is_compiled_once(monkeypatch):
    # The first call creates `.grad` and Adam's state, so the next call has other inputs:
    # the first program is a one-off (compiled quickly), the second is the steady program.
    _, _, f = _train(True, steps=6)
    assert [p.once is not None for p in f._programs.values()] == [QUICK, False]
    x, y = _data()
    from jtorch import _programs
    from jtorch.autograd import _fused

    # (an eager view or creation the call meets compiles at its COMPILE_AFTER-th sighting in
    # the process, which other tests' sightings move: past it, nothing may compile)
    monkeypatch.setattr(_programs, "HOST_RENT_S", 0.0)
    for _ in range(_programs.COMPILE_AFTER):
        f(x, y)
    for _, future in list(_fused._pending.values()):
        future.result()  # (an eager backward's compile, counted when it ends)
    before = jtorch.compiler.stats()["compiles"], f.trace_count, len(f._programs)
    f(x, y)
    after = jtorch.compiler.stats()["compiles"], f.trace_count, len(f._programs)
    assert after == before  # nothing new in steady state


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_grads_set_to_none_outside_the_step_compile_the_steady_program_in_full():
    # `zero_grad()` outside the compiled step: the first call creates Adam's state (a
    # one-off); every later call has the same key and creates `.grad` alone, so its program
    # is the steady one, compiled in full.
    def run(compiled):
        model = _mlp()
        opt = jtorch.optim.Adam(model.parameters(), lr=0.01)
        x, y = _data()

        def step():
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        f = jtorch.compile(step) if compiled else step
        losses = []
        for _ in range(4):
            opt.zero_grad()
            losses.append(f().item())
        return losses, f

    losses, f = run(True)
    assert f.trace_count == 2
    assert [p.once is not None for p in f._programs.values()] == [QUICK, False]
    np.testing.assert_allclose(losses, run(False)[0], rtol=1e-6, atol=1e-7)


def test_a_state_creating_program_that_comes_back_is_compiled_in_full():
    # A call that creates an attribute the caller then deletes: its key comes back, and the
    # quickly compiled program is replaced by a fully optimised one, once.
    model = _mlp()
    x, _ = _data()

    def f():
        model.cache = model(x).detach()
        return model.cache.sum()

    g = jtorch.compile(f)
    got = [g().item()]
    del model.cache
    assert [p.once is not None for p in g._programs.values()] == [QUICK]
    for _ in range(2):
        got.append(g().item())
        del model.cache
    assert g.trace_count == 1 and all(p.once is None for p in g._programs.values())
    np.testing.assert_allclose(got, [f().item()] * 3, rtol=1e-6)


def test_retraces_only_when_a_guard_changes():
    model = _mlp()
    f = jtorch.compile(lambda x: model(x).sum())
    x, _ = _data()
    f(x)
    f(x)
    assert f.trace_count == 1
    f(x[:5])  # new input shape
    assert f.trace_count == 2
    model.eval()  # Python state the program depends on
    f(x)
    assert f.trace_count == 3
    model.train()
    f(x)
    assert f.trace_count == 3  # back to a program already traced


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_learning_rate_changes_do_not_retrace():
    model = _mlp()
    opt = jtorch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data()

    @jtorch.compile
    def step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step()
    step()
    before = [p.detach().numpy().copy() for p in model.parameters()]
    opt.param_groups[0]["lr"] = 0.0
    step()
    after = [p.detach().numpy().copy() for p in model.parameters()]
    assert step.trace_count == 2
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)  # lr 0 really reached the program


def test_compiled_forward_with_eager_backward():
    a, b = _mlp(), _mlp()
    b.compile()
    x, _ = _data()
    a(x).pow(2).sum().backward()
    out = b(x)
    assert out.grad_fn is not None
    out.pow(2).sum().backward()
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_a_compiled_module_is_traced_once_when_backward_creates_grad_outside_it():
    # zero_grad(set_to_none=False): the first backward creates `.grad`, the later ones
    # accumulate into it; the module's forward never touches `.grad`.
    x, y = _data()
    runs = []
    for compiled in (False, True):
        model = _mlp()
        opt = jtorch.optim.SGD(model.parameters(), lr=0.1)
        run = jtorch.compile(model) if compiled else model
        losses = []
        for _ in range(4):
            opt.zero_grad(set_to_none=False)
            loss = F.cross_entropy(run(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        runs.append((losses, [p.detach().numpy().copy() for p in model.parameters()]))
    assert run._compiled.trace_count == 1 and run._compiled.call_count == 4
    np.testing.assert_allclose(runs[1][0], runs[0][0], rtol=1e-5, atol=1e-6)
    for p, q in zip(runs[0][1], runs[1][1]):
        np.testing.assert_allclose(q, p, rtol=1e-5, atol=1e-6)


def test_a_call_keyed_without_grad_that_reads_it_is_traced_with_it():
    model = _mlp()
    x, _ = _data()

    def f(x, read):
        out = model(x).sum()
        return out + model[0].bias.grad.sum() if read else out

    cf = jtorch.compile(f)
    expected = model(x).sum().item()
    np.testing.assert_allclose(cf(x, False).item(), expected, rtol=1e-6)  # no `.grad` touched
    model(x).sum().backward()
    np.testing.assert_allclose(cf(x, False).item(), expected, rtol=1e-6)
    assert cf.trace_count == 1
    want = expected + model[0].bias.grad.sum().item()
    np.testing.assert_allclose(cf(x, True).item(), want, rtol=1e-6)
    model[0].bias.grad.add_(1.0)  # a `.grad` the program reads is an input, not a constant
    np.testing.assert_allclose(cf(x, True).item(), want + 8.0, rtol=1e-6)


def test_new_argument_tensors_leave_earlier_ones_alone():
    # The program is reused for new argument tensors; what it writes back goes to this call's
    # tensors, never to the tensors of the call it was traced on.
    lin = nn.Linear(2, 1, bias=False)
    cm = jtorch.compile(lin)
    x = jtorch.ones(1, 2)
    cm(x)
    cm(-x)
    assert x.tolist() == [[1.0, 1.0]]
    y = cm(-x)
    y.sum().backward()
    assert lin.weight.grad.tolist() == [[-1.0, -1.0]]  # d(w . x)/dw = x

    def step(a, b):
        a.add_(b)
        return a.sum()

    cs = jtorch.compile(step)
    first, second = jtorch.zeros(2), jtorch.zeros(2)
    cs(first, jtorch.ones(2))
    cs(second, jtorch.full((2,), 5.0))
    assert first.tolist() == [1.0, 1.0] and second.tolist() == [5.0, 5.0]


def test_a_grad_tensor_discovery_cannot_reach_runs_eagerly_not_wrongly():
    # A parameter held by a plain object is not state jtorch.compile lifts: compiled, its
    # gradient would be lost. The call falls back to eager (with one warning) instead.
    class Holder:
        def __init__(self):
            self.w = jtorch.tensor([2.0, 3.0], requires_grad=True)

    h = Holder()

    def f(x):
        return (x * h.w).sum()

    with pytest.warns(UserWarning, match="requires grad but is not reachable"):
        out = jtorch.compile(f)(jtorch.ones(2))
    out.backward()
    assert out.item() == 5.0 and h.w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="not reachable"):
        jtorch.compile(f, fullgraph=True)(jtorch.ones(2))


def test_a_hook_rebinding_a_tensor_attribute_during_the_call():
    # (as nn.utils.prune's forward pre-hook does with `weight`)
    m = nn.Linear(3, 2)
    m.w2 = m.weight * 1
    m.register_forward_pre_hook(lambda mod, inp: setattr(mod, "w2", mod.weight * 2))
    out = jtorch.compile(m)(jtorch.ones(1, 3))
    out.sum().backward()
    assert m.weight.grad.tolist() == [[1.0] * 3] * 2
    np.testing.assert_allclose(m.w2.detach().numpy(), 2 * m.weight.detach().numpy())


def test_tensors_reached_only_through_nested_functions_are_lifted():
    w = jtorch.tensor([2.0, 3.0], requires_grad=True)

    def f(x):
        scale = lambda a: a * w  # noqa: E731
        return scale(x)

    out = jtorch.compile(f)(jtorch.ones(2))
    out.sum().backward()
    assert out.tolist() == [2.0, 3.0] and w.grad.tolist() == [1.0, 1.0]


def test_graph_break_falls_back_to_eager_with_one_warning():
    x = jtorch.arange(4.0)

    def f(x):
        if x.sum() > 0:  # data-dependent branch
            return x * 2
        return x

    g = jtorch.compile(f)
    with pytest.warns(UserWarning, match="falling back to eager"):
        assert g(x).tolist() == [0.0, 2.0, 4.0, 6.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert g(x).tolist() == [0.0, 2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match="fullgraph=True"):
        jtorch.compile(f, fullgraph=True)(x)


def test_state_is_restored_after_a_graph_break():
    model = _mlp()
    x, y = _data()
    before = [p.detach().numpy().copy() for p in model.parameters()]
    opt = jtorch.optim.SGD(model.parameters(), lr=0.1)

    @jtorch.compile
    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()  # graph break after the update

    with pytest.warns(UserWarning):
        step()
    # the eager rerun made exactly one update from the original parameters
    eager = _mlp()
    eopt = jtorch.optim.SGD(eager.parameters(), lr=0.1)
    F.cross_entropy(eager(x), y).backward()
    eopt.step()
    for p, q, b in zip(model.parameters(), eager.parameters(), before):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)
        assert not np.allclose(p.detach().numpy(), b)


def test_each_call_effects_run_before_every_later_call_of_the_program():
    """Python a cached program skips (DDP arming its reducer) registers itself to run again;
    a function that runs backward inside drops its effects (the program holds their end)."""
    from jtorch import _compile

    ran = []
    x = jtorch.ones(3)

    @jtorch.compile
    def forward(x):
        _compile.each_call(lambda: ran.append("forward"))
        return x * 2

    for _ in range(3):
        assert forward(x).tolist() == [2.0, 2.0, 2.0]
    assert forward.trace_count == 1
    assert ran == ["forward", "forward"]  # the two calls that traced nothing
    _compile.each_call(lambda: ran.append("outside"))  # outside a trace: nothing to keep
    assert ran == ["forward", "forward"]

    model = _mlp()
    data, target = _data()

    @jtorch.compile
    def step():
        _compile.each_call(lambda: ran.append("step"))
        F.cross_entropy(model(data), target).backward()

    for _ in range(3):
        step()
    assert "step" not in ran


def test_a_failed_trace_puts_python_state_back_through_its_abort_hook():
    from jtorch import _compile

    class Counter:  # Python state a call advances (as DDP's reducer is armed)
        def __init__(self):
            self.calls, self.aborted = 0, 0

        def trace_aborted(self):
            self.calls -= 1
            self.aborted += 1

    counter = Counter()
    x = jtorch.arange(4.0)

    def f(x):
        counter.calls += 1
        if _compile.is_compiling():
            _compile.ABORT_HOOKS.add(counter)
        if x.sum() > 0:  # data-dependent branch: the trace fails, the call runs eagerly
            return x * 2
        return x

    with pytest.warns(UserWarning, match="falling back to eager"):
        jtorch.compile(f)(x)
    assert (counter.calls, counter.aborted) == (1, 1)  # the eager run's call alone


def test_disable_and_decorator_forms():
    calls = []

    @jtorch.compiler.disable
    def log(v):
        calls.append(v)

    @jtorch.compile(fullgraph=False)
    def f(x):
        log(1)
        return x + 1

    with pytest.warns(UserWarning):
        assert f(jtorch.ones(2)).tolist() == [2.0, 2.0]
    assert calls == [1]  # the eager rerun called it; the trace did not


def test_random_ops_draw_fresh_numbers_each_call():
    f = jtorch.compile(lambda x: F.dropout(x, 0.5, training=True))
    x = jtorch.ones(64)
    a, b = f(x), f(x)
    assert f.trace_count == 1
    assert not np.array_equal(a.numpy(), b.numpy())
    kept = a.numpy()[a.numpy() != 0]
    np.testing.assert_allclose(kept, 2.0)  # inverted-dropout scaling 1/(1-p)


def test_jaxpr_and_hlo_are_visible():
    f = jtorch.compile(lambda x: (x * 2).sum())
    x = jtorch.ones(3)
    assert "mul" in str(f.jaxpr(x))
    assert "stablehlo" in f.hlo(x) or "mhlo" in f.hlo(x)


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_a_cached_training_step_is_one_program_call(monkeypatch):
    from jtorch._ops import _dispatch

    model = _mlp()
    opt = jtorch.optim.Adam(model.parameters(), lr=0.01)
    x, y = _data()

    @jtorch.compile
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    step(x, y)
    step(x, y)
    dispatched = []
    real = _dispatch._dispatch
    monkeypatch.setattr(_dispatch, "_dispatch", lambda *a: dispatched.append(a) or real(*a))
    programs = []
    prog = list(step._programs.values())[-1]  # the steady-state program
    real_jitted = prog.jitted
    prog.jitted = lambda *a: programs.append(1) or real_jitted(*a)
    for _ in range(3):
        step(x, y)
    assert dispatched == [] and len(programs) == 3  # no eager op: one program per step


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.drop = nn.Dropout(0.0)  # dropout runs; p=0 keeps eager == compiled
        self.fc = nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        return self.fc(self.drop(x.flatten(1)))


class _TinyLM(nn.Module):
    def __init__(self, vocab=11, d=16, ctx=6):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(jtorch.zeros(ctx, d))
        layer = nn.TransformerEncoderLayer(d, 2, 32, dropout=0.0, batch_first=True)
        self.body = nn.TransformerEncoder(layer, 1)
        self.head = nn.Linear(d, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(ctx))

    def forward(self, idx):
        h = self.tok(idx) + self.pos[: idx.shape[1]]
        return self.head(self.body(h, mask=self.mask, is_causal=True))


def _trajectory(make, batch, compiled, steps=20):
    jtorch.manual_seed(0)
    model = make()
    # SGD, not Adam: conv.bias before BatchNorm and the attention key bias have gradients
    # that are zero up to rounding, which Adam's normalisation would amplify into noise.
    opt = jtorch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = batch

    def step(x, y):
        out = model(x)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss

    f = jtorch.compile(step) if compiled else step
    losses = [f(x, y).item() for _ in range(steps)]
    state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
    return losses, state, f


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
@pytest.mark.parametrize("name", ["cnn_batchnorm_dropout", "transformer_lm"])
def test_model_trajectories_equal_eager(name):
    rng = np.random.default_rng(0)
    if name == "cnn_batchnorm_dropout":
        make = _CNN
        batch = (
            jtorch.tensor(rng.standard_normal((6, 1, 8, 8)).astype(np.float32)),
            jtorch.tensor(rng.integers(0, 3, 6)),
        )
    else:
        make = _TinyLM
        seq = jtorch.tensor(rng.integers(0, 11, (4, 7)))
        batch = (seq[:, :-1], seq[:, 1:])
    eager_losses, eager_state, _ = _trajectory(make, batch, False)
    losses, state, f = _trajectory(make, batch, True)
    np.testing.assert_allclose(losses, eager_losses, rtol=2e-5, atol=1e-6)
    for k in eager_state:  # parameters and BatchNorm running statistics
        np.testing.assert_allclose(state[k], eager_state[k], rtol=2e-5, atol=2e-6, err_msg=k)
    assert f.trace_count == 2


@ONE_MORE_TRACE_ON_ACCELERATOR_HOSTS
def test_slices_at_new_offsets_reuse_the_program():
    # Batching a preloaded tensor (`X[j*4:(j+1)*4]`): a view's positions are inputs of the
    # program, not part of its key (DESIGN 13).
    X = jtorch.arange(48.0).reshape(12, 4)
    w = jtorch.ones(4, requires_grad=True)
    opt = jtorch.optim.SGD([w], lr=0.1)

    @jtorch.compile
    def step(xb):
        opt.zero_grad()
        loss = (xb * w).sum()
        loss.backward()
        opt.step()
        return loss

    losses = [float(step(X[j * 4 : (j + 1) * 4])) for j in range(3)]
    losses += [float(step(X[j * 4 : (j + 1) * 4])) for j in range(3)]
    assert step.trace_count <= 2  # (the first step traces without .grad)
    # eager reference: the same updates by hand
    ref, wv = [], np.ones(4, np.float32)
    xs = np.arange(48.0, dtype=np.float32).reshape(12, 4)
    for j in list(range(3)) * 2:
        xb = xs[j * 4 : (j + 1) * 4]
        ref.append(float((xb * wv).sum()))
        wv = wv - 0.1 * xb.sum(0)
    np.testing.assert_allclose(losses, ref, rtol=1e-6)
    # rows picked by an integer index inside the program, and views in the closure
    rows = [X[i] for i in range(4)]
    f = jtorch.compile(lambda r: r * 2)
    for i in range(4):
        np.testing.assert_array_equal(f(rows[i]).numpy(), xs[i] * 2)
    assert f.trace_count == 1


def test_fresh_closures_of_the_same_code_reuse_the_program():
    # Libraries make a new `score_mod`-style closure on every call; its captured tensors are
    # inputs of the program, so the values change without a retrace.
    def attn(q, mod):
        return mod(q @ q.T).softmax(-1) @ q

    f = jtorch.compile(attn)
    q = jtorch.randn(4, 3)
    for i in range(4):
        bias = jtorch.full((4, 4), float(i))
        out = f(q, lambda s: s + bias)
        ref = attn(q, lambda s: s + bias)
        assert jtorch.allclose(out, ref, atol=1e-5)
    assert f.trace_count == 1
    k = 2.0
    f(q, lambda s: s * k)  # other code: its own program
    assert f.trace_count == 2


def test_modules_and_optimizers_state_what_the_compiler_lifts():
    # The state protocol (_tracing.Lifted): the compiler reads a module's and an optimizer's
    # state through their `_lifted_state`, not through their private tables.
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    net.extra = jtorch.ones(1)
    net.eval()
    st = net._lifted_state("m")
    paths = [path for path, *_ in st.tensors]
    assert paths == [
        "m.extra", "m.0.weight", "m.0.bias", "m.1.weight", "m.1.bias",
        "m.1.running_mean", "m.1.running_var", "m.1.num_batches_tracked",
    ]  # fmt: skip
    assert ("m.1", "training", False) in st.facts and set(map(id, st.objects)) == {
        id(m) for m in net.modules()
    }
    path, t, get, set_, grad = st.tensors[1]
    assert get() is net[0].weight and grad
    new = nn.Parameter(jtorch.zeros(3, 2))
    set_(new)
    assert net[0].weight is new

    opt = jtorch.optim.Adam(net.parameters(), lr=0.5)
    net.train()
    net(jtorch.ones(4, 2)).sum().backward()
    opt.step()
    st = opt._lifted_state("o")
    assert st.scalars == [(opt.param_groups[0], "lr")]
    state = [(p, g) for p, _, _, _, g in st.tensors if ".state0.0." in p]
    # (Adam's step is a tensor, as PyTorch's)
    assert [p for p, _ in state] == [
        "o.state0.0.exp_avg",
        "o.state0.0.exp_avg_sq",
        "o.state0.0.step",
    ]
    assert not any(g for _, g in state)
    assert ("o.state0.0", "keys", ("exp_avg", "exp_avg_sq", "step")) in st.facts
