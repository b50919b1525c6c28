"""torch._foreach_* over several local devices (run by tests/test_foreach.py with 5 host
devices, `cpu` and cuda:0..3 under JTORCH_CUDA_IS_CPU=1): elements on different devices run
as their single ops, a list on one device as one program; prints "ok"."""

import jtorch as torch
from jtorch import _programs

a, b = torch.ones(2), torch.full((3,), 2.0, device="cuda:0")
out = torch._foreach_mul([a, b], 2.0)  # elements on different devices: each its own op
assert [str(o.device) for o in out] == ["cpu", "cuda:0"], out
assert [o.tolist() for o in out] == [[2.0, 2.0], [4.0] * 3]
try:
    torch._foreach_add([a], [b])
except RuntimeError as e:
    assert "Expected all tensors to be on the same device" in str(e), e
else:
    raise AssertionError("no device error")
gpu = [torch.ones(2, device="cuda:1"), torch.ones(4, device="cuda:1")]
torch._foreach_mul_(gpu, torch.tensor(3.0))  # a CPU 0-dim tensor beside them, as PyTorch
assert [str(g.device) for g in gpu] == ["cuda:1"] * 2 and gpu[1].tolist() == [3.0] * 4
before = _programs.programs_made()
torch._foreach_add_(gpu, 1.0)  # one device: one program
assert _programs.programs_made() - before == 1
torch._foreach_copy_(gpu, [torch.zeros(2), torch.zeros(4)])  # sources move to the targets
assert [str(g.device) for g in gpu] == ["cuda:1"] * 2 and gpu[0].tolist() == [0.0, 0.0]
ps = [torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2, device="cuda:0"))]
for p in ps:
    p.grad = torch.full((2,), 3.0, device=p.device)
norm = torch.nn.utils.clip_grad_norm_(ps, 1.0)
assert abs(norm.item() - 6.0) < 1e-5 and str(ps[1].grad.device) == "cuda:0"
print("ok")
