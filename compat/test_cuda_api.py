"""`torch.cuda` on a machine without an accelerator: jtorch answers as PyTorch's CPU build
(values, and the exception each query raises); `OutOfMemoryError`'s identity."""

import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return (type(e).__name__, str(e))


CALLS = {
    "get_device_properties": lambda c: c.get_device_properties(0),
    "set_per_process_memory_fraction": lambda c: c.set_per_process_memory_fraction(0.5),
    "get_per_process_memory_fraction": lambda c: c.get_per_process_memory_fraction(),
    "memory_cached": lambda c: c.memory_cached(),
    "max_memory_cached": lambda c: c.max_memory_cached(),
    "memory_stats_as_nested_dict": lambda c: c.memory_stats_as_nested_dict(),
    "get_arch_list": lambda c: c.get_arch_list(),
    "get_gencode_flags": lambda c: c.get_gencode_flags(),
    "is_tf32_supported": lambda c: c.is_tf32_supported(),
    "can_device_access_peer": lambda c: c.can_device_access_peer(0, 1),
    "get_sync_debug_mode": lambda c: c.get_sync_debug_mode(),
    "list_gpu_processes": lambda c: c.list_gpu_processes(),
    "set_stream": lambda c: c.set_stream(None),
    "nvtx.range_push": lambda c: c.nvtx.range_push("step"),
    "has_half": lambda c: c.has_half,
    "has_magma": lambda c: c.has_magma,
    "default_generators": lambda c: c.default_generators,
    "random.get_rng_state_all": lambda c: c.random.get_rng_state_all(),
    "random.get_rng_state": lambda c: c.random.get_rng_state(),
    "random.initial_seed": lambda c: c.random.initial_seed(),
    "random.manual_seed_all": lambda c: c.random.manual_seed_all(3),
    "random.set_rng_state_all": lambda c: c.random.set_rng_state_all([]),
}


def _sdpa_query(name):
    def call(c):
        backends = c.__name__.rpartition(".")[0] + ".backends.cuda"
        import importlib

        b = importlib.import_module(backends)
        q = (importlib.import_module(c.__name__.rpartition(".")[0])).ones(1, 1, 4, 8)
        p = b.SDPAParams(q, q, q, None, 0.0, False, False)
        return (
            getattr(b, name)(p, True) if name.startswith("can_") else getattr(b, name)(),
            p.dropout,
            p.is_causal,
            tuple(p.query.shape),
        )

    return call


for _name in (
    "can_use_flash_attention",
    "can_use_efficient_attention",
    "can_use_cudnn_attention",
    "is_flash_attention_available",
):
    CALLS[f"backends.{_name}"] = _sdpa_query(_name)


@pytest.mark.skipif(
    torch.cuda.is_available() or jtorch.cuda.is_available(), reason="compares CPU-only behaviour"
)
@pytest.mark.parametrize("name", list(CALLS))
def test_cpu_build_answers(name):
    assert _outcome(lambda: CALLS[name](jtorch.cuda)) == _outcome(lambda: CALLS[name](torch.cuda))


def test_out_of_memory_error_classes():
    for lib in (torch, jtorch):
        assert lib.cuda.OutOfMemoryError is lib.OutOfMemoryError
        assert issubclass(lib.OutOfMemoryError, RuntimeError)
        assert issubclass(lib.AcceleratorError, RuntimeError)
    t, j = torch.ones(2), jtorch.ones(2)
    with torch.cuda.device_of(t), jtorch.cuda.device_of(j):
        pass
