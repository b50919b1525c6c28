"""`torch.nn.attention` parity: SDPBackend members, and `sdpa_kernel`'s switches as seen
through `torch.backends.cuda`, inside, after and nested."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import jtorch  # noqa: E402


def _switches(lib):
    c = lib.backends.cuda
    return (
        c.flash_sdp_enabled(),
        c.mem_efficient_sdp_enabled(),
        c.math_sdp_enabled(),
        c.cudnn_sdp_enabled(),
    )


def test_sdp_backend_members():
    t = {k: int(v) for k, v in torch.nn.attention.SDPBackend.__members__.items()}
    j = {k: int(v) for k, v in jtorch.nn.attention.SDPBackend.__members__.items()}
    assert j == t


@pytest.mark.parametrize(
    "choice",
    [
        "MATH",
        "FLASH_ATTENTION",
        ["MATH", "EFFICIENT_ATTENTION"],
        ["CUDNN_ATTENTION", "FLASH_ATTENTION", "MATH"],
    ],
)
def test_sdpa_kernel_switches(choice):
    seen = {}
    for lib in (torch, jtorch):
        att = lib.nn.attention
        pick = (
            [getattr(att.SDPBackend, c) for c in choice]
            if isinstance(choice, list)
            else getattr(att.SDPBackend, choice)
        )
        before = _switches(lib)
        with att.sdpa_kernel(pick):
            inside = _switches(lib)
            with att.sdpa_kernel(att.SDPBackend.MATH):
                nested = _switches(lib)
            back = _switches(lib)
        seen[lib.__name__] = (before, inside, nested, back, _switches(lib))
    assert seen["jtorch"] == seen["torch"]


def test_sdpa_kernel_bad_argument_and_results():
    for lib in (torch, jtorch):
        with pytest.raises(AssertionError, match="Backend must be an instance of SDPBackend"):
            with lib.nn.attention.sdpa_kernel("math"):
                pass
    q = np.random.default_rng(0).standard_normal((1, 2, 4, 8)).astype(np.float32)
    out = {}
    for lib in (torch, jtorch):
        with lib.nn.attention.sdpa_kernel(lib.nn.attention.SDPBackend.MATH):
            x = lib.tensor(q)
            out[lib.__name__] = lib.nn.functional.scaled_dot_product_attention(
                x, x, x, is_causal=True
            ).numpy()
    np.testing.assert_allclose(out["jtorch"], out["torch"], rtol=1e-5, atol=1e-6)
