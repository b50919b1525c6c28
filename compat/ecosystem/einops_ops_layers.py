# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=einops
"""einops on torch tensors as its users use it: rearrange/reduce/repeat/einsum/pack/unpack/
parse_shape, the layers (Rearrange, Reduce, EinMix) in a small model trained one step,
gradients through rearrange, and the layers under torch.compile (einops registers its ops
with torch._dynamo.allow_in_graph when imported)."""

import numpy as np
import torch
from einops import einsum, pack, parse_shape, rearrange, reduce, repeat, unpack
from einops.layers.torch import EinMix, Rearrange, Reduce

rng = np.random.default_rng(0)
x = torch.from_numpy(rng.standard_normal((2, 3, 4, 6)).astype(np.float32))


def show(name, t):
    t = t.detach()
    print(name, tuple(t.shape), t.dtype, round(float(t.float().sum()), 4),
          [round(v, 5) for v in t.reshape(-1)[:3].tolist()])


show("rearrange", rearrange(x, "b c h w -> b (h w) c"))
show("rearrange split", rearrange(x, "b c (h1 h2) w -> b h1 (c h2 w)", h1=2))
show("reduce mean", reduce(x, "b c (h h2) (w w2) -> b c h w", "mean", h2=2, w2=3))
show("reduce max", reduce(x, "b c h w -> b h", "max"))
show("reduce sum", reduce(x, "b c h w -> c", "sum"))
show("repeat", repeat(x[0, 0], "h w -> h w r", r=2))
show("repeat new axis", repeat(x[0, :, 0, 0], "c -> b c", b=3))
show("einsum", einsum(x, x, "b c h w, b c h w2 -> b h w w2"))
packed, ps = pack([x[:, 0], x[:, 1:].reshape(2, -1)], "b *")
print("pack", tuple(packed.shape), [tuple(s) for s in ps])
a, b = unpack(packed, ps, "b *")
print("unpack", tuple(a.shape), tuple(b.shape), torch.equal(a, x[:, 0]))
print("parse_shape", parse_shape(x, "b c _ w"))
try:
    rearrange(x, "b c h w -> b c (h w) extra")
except Exception as e:
    print("error", type(e).__name__, str(e).splitlines()[0][:60])

model = torch.nn.Sequential(Rearrange("b c h w -> b (c h w)"), torch.nn.Linear(72, 10),
                            Reduce("b (g k) -> b g", "sum", k=5))
mix = EinMix("b c h w -> b h w d", weight_shape="c d", bias_shape="d", c=3, d=4)
with torch.no_grad():
    for _name, p in sorted(list(model.named_parameters()) + list(mix.named_parameters())):
        p.copy_(torch.from_numpy((rng.standard_normal(p.shape) * 0.1).astype(np.float32)))
print(repr(model[0]), repr(model[2]), repr(mix))
opt = torch.optim.SGD(list(model.parameters()) + list(mix.parameters()), lr=0.1)
y, m = model(x), mix(x)
show("layers", y)
show("einmix", m)
loss = (y ** 2).mean() + m.pow(2).mean()
loss.backward()
print("loss", round(loss.item(), 5), "grads", round(float(model[1].weight.grad.abs().sum()), 4),
      round(float(mix.weight.grad.abs().sum()), 4))
opt.step()
show("after step", model(x))
xr = x.clone().requires_grad_()
(rearrange(xr, "b c h w -> (b c) h w") * torch.arange(4.0).reshape(1, 4, 1)).sum().backward()
show("rearrange grad", xr.grad)
show("compiled layers", torch.compile(model)(x))
