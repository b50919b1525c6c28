"""jtorch on a CUDA device: placement, ops, training, autocast, files, timing.

Skipped where `torch.cuda.is_available()` is false (CI has no GPU). On a machine with one,
`python -m pytest tests/test_cuda.py` runs them; with `JTORCH_CUDA_IS_CPU=1` and
`XLA_FLAGS=--xla_force_host_platform_device_count=2` they run over a simulated device (the
checks that need a real GPU's memory statistics then skip). Expected values come from the
same computation on the CPU device, or from float64 numpy where precision is the question.
"""

import copy
import os

import numpy as np
import pytest

import jtorch as torch
import jtorch.nn as nn
import jtorch.nn.functional as F

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

REAL_GPU = os.environ.get("JTORCH_CUDA_IS_CPU", "0") != "1"


def _both(fn, *arrays):
    """`fn` of the arrays as CPU tensors and as CUDA tensors, both brought back as numpy."""
    cpu = [torch.from_numpy(a) for a in arrays]
    gpu = [t.cuda() for t in cpu]
    got_gpu = fn(*gpu)
    assert got_gpu.is_cuda
    return fn(*cpu).numpy(), got_gpu.cpu().numpy()


def test_device_queries():
    assert torch.cuda.device_count() >= 1
    assert torch.cuda.current_device() == 0
    assert isinstance(torch.cuda.get_device_name(0), str) and torch.cuda.get_device_name(0)
    major, _ = torch.cuda.get_device_capability()
    assert isinstance(major, int)
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator().type == "cuda"
    if REAL_GPU:
        assert major >= 7
        assert torch.cuda.is_bf16_supported()
        assert torch.cuda.get_device_properties(0).total_memory > 1 << 30


def test_placement_round_trip_and_views():
    x = torch.arange(12.0).reshape(3, 4)
    y = x.cuda()
    assert y.is_cuda and y.device == torch.device("cuda", 0) and not x.is_cuda
    assert torch.equal(y.cpu(), x)
    assert torch.zeros(2, 3, device="cuda").is_cuda
    assert torch.randn(5, device="cuda").device.type == "cuda"
    assert torch.arange(4, device="cuda:0").device == torch.device("cuda:0")
    # a write through a view of the CUDA copy changes that copy only
    y[0, 1] = 100.0
    assert y.cpu()[0, 1].item() == 100.0 and x[0, 1].item() == 1.0
    h = x.to("cuda", torch.float16)
    assert h.dtype == torch.float16 and h.is_cuda
    assert y.t().contiguous().is_cuda
    with torch.device("cuda"):
        assert torch.ones(3).is_cuda
    assert not torch.ones(3).is_cuda


def test_mixed_devices_raise_and_cpu_scalars_mix():
    a = torch.ones(3, device="cuda")
    b = torch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        torch.cat([a, b])
    # a zero-dim CPU tensor meets CUDA tensors, as in PyTorch
    c = a + torch.tensor(2.0)
    assert c.is_cuda and c.cpu().tolist() == [3.0, 3.0, 3.0]


def test_float32_matmul_is_float32_by_default():
    # PyTorch's default (`torch.backends.cuda.matmul.allow_tf32 = False`, precision 'highest'):
    # float32 matmuls keep float32's precision; TF32 would be off by ~1e-3 relative.
    assert torch.get_float32_matmul_precision() == "highest"
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()
    assert np.abs(got - exact).max() / np.abs(exact).max() < 1e-5
    lin = F.linear(torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()).cpu().numpy()
    exact_lin = a.astype(np.float64) @ b.astype(np.float64).T
    assert np.abs(lin - exact_lin).max() / np.abs(exact_lin).max() < 1e-5


@pytest.mark.parametrize(
    "name",
    [
        "softmax",
        "log_softmax",
        "layer_norm",
        "gelu",
        "sum",
        "cumsum",
        "sort",
        "topk",
        "argmax",
        "gather",
        "scatter_add",
        "index_select",
        "sdpa_causal",
        "sdpa_mask",
        "cross_entropy",
        "masked_select",
        "nonzero",
        "unique",
        "where",
        "cat_stack",
        "pow_exp_log",
    ],
)
def test_ops_match_cpu(name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 6, 8)).astype(np.float32)
    idx = rng.integers(0, 6, (4, 3, 8)).astype(np.int64)
    fns = {
        "softmax": lambda t: t.softmax(-1),
        "log_softmax": lambda t: F.log_softmax(t, dim=1),
        "layer_norm": lambda t: F.layer_norm(t, (8,)),
        "gelu": F.gelu,
        "sum": lambda t: t.sum(dim=(0, 2)),
        "cumsum": lambda t: t.cumsum(1),
        "sort": lambda t: t.sort(dim=-1).values,
        "topk": lambda t: t.topk(3, dim=1).indices,
        "argmax": lambda t: t.argmax(-1),
        "gather": lambda t: t.gather(1, torch.from_numpy(idx).to(t.device)),
        "scatter_add": lambda t: torch.zeros(4, 6, 8, device=t.device).scatter_add(
            1, torch.from_numpy(idx).to(t.device), t[:, :3]
        ),
        "index_select": lambda t: t.index_select(1, torch.tensor([5, 0, 2], device=t.device)),
        "sdpa_causal": lambda t: F.scaled_dot_product_attention(t, t * 0.5, t + 1, is_causal=True),
        "sdpa_mask": lambda t: F.scaled_dot_product_attention(
            t, t, t, attn_mask=torch.ones(6, 6, dtype=torch.bool, device=t.device).tril()
        ),
        "cross_entropy": lambda t: F.cross_entropy(
            t.reshape(24, 8), torch.arange(24, device=t.device) % 8
        ),
        "masked_select": lambda t: t.masked_select(t > 0.5),
        "nonzero": lambda t: (t > 1).nonzero(),
        "unique": lambda t: (t * 2).round().unique(),
        "where": lambda t: torch.where(t > 0, t, -t * 2),
        "cat_stack": lambda t: torch.stack([torch.cat([t, t * 2], 1), t.repeat(1, 2, 1)]),
        "pow_exp_log": lambda t: (t.abs() + 1).log() + t.exp() * t.pow(2),
    }
    want, got = _both(fns[name], x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))


def test_training_on_cuda_matches_cpu():
    rng = np.random.default_rng(2)
    xs = torch.from_numpy(rng.standard_normal((5, 8, 16)).astype(np.float32))
    ys = torch.from_numpy(rng.integers(0, 4, (5, 8)))
    cpu = _mlp()
    gpu = copy.deepcopy(cpu).cuda()
    assert all(p.is_cuda for p in gpu.parameters())
    losses = {}
    for tag, model in (("cpu", cpu), ("cuda", gpu)):
        dev = next(model.parameters()).device
        opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
        out = []
        for x, y in zip(xs, ys):
            opt.zero_grad()
            loss = F.cross_entropy(model(x.to(dev)), y.to(dev))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            out.append(loss.item())
        losses[tag] = out
        assert all(p.grad.device == dev for p in model.parameters())
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-4)
    for p, q in zip(cpu.parameters(), gpu.parameters()):
        np.testing.assert_allclose(q.detach().cpu().numpy(), p.detach().numpy(), atol=1e-4)


def test_compiled_step_on_cuda_matches_eager():
    rng = np.random.default_rng(3)
    xs = torch.from_numpy(rng.standard_normal((4, 8, 16)).astype(np.float32)).cuda()
    ys = torch.from_numpy(rng.integers(0, 4, (4, 8))).cuda()
    losses = []
    for compiled in (False, True):
        model = _mlp().cuda()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss

        fn = torch.compile(step) if compiled else step
        losses.append([fn(x, y).item() for x, y in zip(xs, ys)])
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)


def test_autocast_bfloat16_on_cuda():
    lin = nn.Linear(8, 8).cuda()
    x = torch.randn(2, 8, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        y = lin(x)
        s = y.float().softmax(-1)
    assert y.dtype == torch.bfloat16 and y.is_cuda
    assert s.dtype == torch.float32
    np.testing.assert_allclose(
        y.detach().float().cpu().numpy(), lin(x).detach().cpu().numpy(), rtol=2e-2, atol=2e-2
    )


def test_save_and_load_cuda_tensors(tmp_path):
    path = tmp_path / "t.pt"
    t = torch.arange(6.0).cuda()
    torch.save({"t": t, "n": 3}, path)
    back = torch.load(path)
    assert back["t"].is_cuda and torch.equal(back["t"].cpu(), t.cpu()) and back["n"] == 3
    on_cpu = torch.load(path, map_location="cpu")
    assert on_cpu["t"].device.type == "cpu" and torch.equal(on_cpu["t"], t.cpu())
    model = _mlp().cuda()
    torch.save(model.state_dict(), tmp_path / "m.pt")
    fresh = _mlp()
    fresh.load_state_dict(torch.load(tmp_path / "m.pt", map_location="cpu"))
    for p, q in zip(model.parameters(), fresh.parameters()):
        assert torch.equal(p.detach().cpu(), q.detach())


def test_seed_synchronize_events_and_pinned_copies():
    torch.cuda.manual_seed(3)
    a = torch.randn(5, device="cuda")
    torch.cuda.manual_seed(3)
    assert torch.equal(torch.randn(5, device="cuda"), a)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    x = torch.randn(256, 256, device="cuda")
    start.record()
    (x @ x).sum()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    pinned = torch.arange(4.0).pin_memory()
    assert pinned.is_pinned()
    moved = pinned.to("cuda", non_blocking=True)
    assert moved.is_cuda and moved.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.skipif(not REAL_GPU, reason="a simulated device keeps no memory statistics")
def test_memory_allocated_counts_a_new_tensor():
    before = torch.cuda.memory_allocated()
    t = torch.empty(1 << 20, device="cuda")
    assert torch.cuda.memory_allocated() >= before + 4 * (1 << 20)
    assert torch.cuda.max_memory_allocated() >= torch.cuda.memory_allocated()
    del t


def test_data_parallel_over_the_visible_devices():
    model = _mlp().cuda()
    dp = nn.DataParallel(model)
    x = torch.randn(6, 16, device="cuda")
    np.testing.assert_allclose(
        dp(x).detach().cpu().numpy(), model(x).detach().cpu().numpy(), rtol=1e-5, atol=1e-6
    )


def test_generate_loop_of_growing_lengths_matches_cpu():
    torch.manual_seed(0)
    emb, head = nn.Embedding(11, 16), nn.Linear(16, 11)
    outs = {}
    for dev in ("cpu", "cuda"):
        e, h = copy.deepcopy(emb).to(dev), copy.deepcopy(head).to(dev)
        ids = torch.tensor([[1, 2]], device=dev)
        with torch.no_grad():
            for _ in range(6):
                q = e(ids)
                att = F.scaled_dot_product_attention(q, q, q, is_causal=True)
                nxt = h(att[:, -1]).argmax(-1, keepdim=True)
                ids = torch.cat([ids, nxt], 1)
        outs[dev] = ids.cpu().tolist()
    assert outs["cuda"] == outs["cpu"]


# Ops that work something out on the host (index positions from a list or a mask, nonzero's
# result, a quantile's q) or take a generator's key: each result must be on the CUDA device,
# equal to the CPU's where the op draws no random numbers.
_HOST_WORKED = {
    "list index": lambda t: t[[0, 2]],
    "bool mask index": lambda t: t[t > 0],
    "cpu bool mask index": lambda t: t[torch.tensor([True, False, True, False])],
    "cpu long index": lambda t: t[torch.tensor([0, 3])],
    "range index": lambda t: t[range(0, 3)],
    "setitem list": lambda t: _set(t.clone(), [0, 1], 1.0),
    "setitem mask": lambda t: _set(t.clone(), t > 1, 0.0),
    "setitem cpu scalar tensor": lambda t: _set(t.clone(), [1, 3], torch.tensor(7.0)),
    "index_put": lambda t: t.index_put((torch.tensor([0, 1]),), torch.tensor(2.0)),
    "repeat_interleave int": lambda t: t.repeat_interleave(2, dim=0),
    "quantile float": lambda t: t.quantile(0.3),
    "masked_select": lambda t: t.masked_select(t > 0.5),
    "nonzero": lambda t: (t > 0).nonzero(),
    "nonzero tuple": lambda t: (t > 0).nonzero(as_tuple=True)[1],
    "argwhere": lambda t: torch.argwhere(t > 0),
    "unique counts": lambda t: t.round().unique(return_counts=True)[1],
    "ctc": lambda t: F.ctc_loss(
        t.log_softmax(-1).unsqueeze(1).expand(4, 2, 5).contiguous(),
        torch.tensor([[1, 2], [1, 1]]),
        [4, 4],
        torch.tensor([2, 2]),
    ),
    "embedding_bag": lambda t: F.embedding_bag(
        torch.tensor([0, 1, 2, 3], device=t.device), t, torch.tensor([0, 2], device=t.device)
    ),
}
_RANDOM = {
    "normal tensor mean": lambda t: torch.normal(t, 1.0),
    "multinomial": lambda t: torch.multinomial(t.softmax(-1), 2),
    "dropout": lambda t: F.dropout(t, 0.5, training=True),
    "alpha dropout": lambda t: F.alpha_dropout(t, 0.5, training=True),
    "native dropout": lambda t: torch.native_dropout(t, 0.5, True)[0],
    "bernoulli": lambda t: torch.bernoulli(t.sigmoid()),
    "bernoulli_ tensor p": lambda t: t.clone().bernoulli_(t.sigmoid()),
    "poisson": lambda t: torch.poisson(t.abs()),
    "rrelu": lambda t: F.rrelu(t, training=True),
    "sdpa dropout": lambda t: F.scaled_dot_product_attention(
        t[None], t[None], t[None], dropout_p=0.5
    ),
    "gru dropout": lambda t: nn.GRU(5, 3, num_layers=2, dropout=0.5).to(t.device)(t[None])[0],
    "fractional max pool": lambda t: F.fractional_max_pool2d(t[None, None], 2, output_size=(2, 2)),
}


def _set(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("name", sorted(_HOST_WORKED))
def test_host_worked_values_meet_cuda_inputs(name):
    x = np.random.default_rng(4).standard_normal((4, 5)).astype(np.float32)
    fn = _HOST_WORKED[name]
    want, got = _both(fn, x)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", sorted(_RANDOM))
def test_draws_on_cuda_inputs_stay_there(name):
    t = torch.from_numpy(np.random.default_rng(5).standard_normal((4, 5)).astype(np.float32))
    out = _RANDOM[name](t.cuda())
    assert out.is_cuda and tuple(out.shape) == tuple(_RANDOM[name](t).shape)


_FORKED_WORKERS = """
import json, numpy as np
import jtorch as torch
from jtorch.utils.data import DataLoader, Dataset

class Squares(Dataset):
    def __len__(self):
        return 6
    def __getitem__(self, i):
        return np.array([i, i * i], np.float32)

class Tensors(Dataset):  # jtorch in the worker: the loader starts over with spawned ones
    def __len__(self):
        return 4
    def __getitem__(self, i):
        return torch.tensor([i, 10 * i])

if __name__ == "__main__":  # (spawned workers import this file again)
    x = torch.randn(64, 64, device="cuda")
    before = (x @ x).sum().item()
    squares = [b.tolist() for b in DataLoader(Squares(), batch_size=2, num_workers=2)]
    tensors = [b.tolist() for b in DataLoader(Tensors(), batch_size=2, num_workers=2)]
    same = (x @ x).sum().item() == before
    print(json.dumps({"squares": squares, "tensors": tensors, "same": same}))
"""


def test_forked_dataloader_workers_after_cuda_was_used(tmp_path):
    # PyTorch's workers fork by default, after the model is on the GPU; a CUDA context does
    # not survive a fork, and a worker that freed the parent's GPU programs aborted
    import json
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root)
    script = tmp_path / "forked_workers.py"
    script.write_text(_FORKED_WORKERS)
    command = [sys.executable, str(script)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["squares"] == [[[0, 0], [1, 1]], [[2, 4], [3, 9]], [[4, 16], [5, 25]]]
    assert got["tensors"] == [[[0, 0], [1, 10]], [[2, 20], [3, 30]]]
    assert got["same"]
