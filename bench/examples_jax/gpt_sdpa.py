"""`examples/gpt_sdpa.py` written directly in JAX + optax, as a JAX user would write it.

    python bench/examples_jax/gpt_sdpa.py [--generate per-length|padded]

The same miniature GPT (block 16, vocab 12, 2 layers, 2 heads, 32 embd, tied wte/lm_head,
GELU tanh, causal attention), data (counting sequences), 60 AdamW steps (decoupled weight
decay on >=2-d params, global-norm clipping at 1.0, warmup + cosine schedule) and greedy
generation of 10 tokens from [[3, 4, 5]]. `bench/shapes.py --examples` times its first run
next to PyTorch's and jtorch's: what an XLA-based program costs on this CPU when written
for XLA. Its numbers differ from the example's (jax.random, not torch's generator).

Initialisation and the optimizer's state are one jitted function, the train step (forward,
loss, grad, clipping, update, next learning rate) another; batches are sliced on the host
(numpy), as a data pipeline hands them over. `--generate`:

- `per-length` (default): one jitted forward + argmax + append per new sequence length,
  that is one compile per length, as `jax.jit` does with a growing sequence;
- `padded`: the sequence lives in a (1, block_size) buffer, the attention masks the keys
  past the current length, the next token is read at the last real position: one compile.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax


@dataclass(frozen=True)
class GPTConfig:
    block_size: int = 16
    vocab_size: int = 12
    n_layer: int = 2
    n_head: int = 2
    n_embd: int = 32


def init_params(cfg: GPTConfig, key: jax.Array) -> dict:
    """The example's initialisation: normal(0.02) weights, c_proj scaled, zero biases."""
    keys = iter(jax.random.split(key, 2 + 4 * cfg.n_layer))
    c = cfg.n_embd

    def normal(shape, std=0.02):
        return std * jax.random.normal(next(keys), shape)

    def linear(n_in, n_out, std=0.02):
        return {"w": normal((n_in, n_out), std), "b": jnp.zeros(n_out)}

    def layer_norm():
        return {"w": jnp.ones(c), "b": jnp.zeros(c)}

    # The example scales only attention's c_proj (the MLP's projection is `mlp.2`).
    proj_std = 0.02 / math.sqrt(2 * cfg.n_layer)
    return {
        "wte": normal((cfg.vocab_size, c)),  # also the head: logits = x @ wte.T
        "wpe": normal((cfg.block_size, c)),
        "h": [
            {
                "ln_1": layer_norm(),
                "c_attn": linear(c, 3 * c),
                "c_proj": linear(c, c, proj_std),
                "ln_2": layer_norm(),
                "fc": linear(c, 4 * c),
                "proj": linear(4 * c, c),
            }
            for _ in range(cfg.n_layer)
        ],
        "ln_f": layer_norm(),
    }


def layer_norm(p: dict, x: jax.Array, eps: float = 1e-5) -> jax.Array:
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + eps) * p["w"] + p["b"]


def attention(cfg: GPTConfig, p: dict, x: jax.Array, length=None) -> jax.Array:
    b, t, c = x.shape
    qkv = x @ p["c_attn"]["w"] + p["c_attn"]["b"]
    q, k, v = (a.reshape(b, t, cfg.n_head, c // cfg.n_head) for a in jnp.split(qkv, 3, -1))
    lengths = None if length is None else jnp.full((b,), length, jnp.int32)
    y = jax.nn.dot_product_attention(q, k, v, is_causal=True, key_value_seq_lengths=lengths)
    return y.reshape(b, t, c) @ p["c_proj"]["w"] + p["c_proj"]["b"]


def forward(cfg: GPTConfig, params: dict, idx: jax.Array, length=None) -> jax.Array:
    """Logits (B, T, vocab); `length` masks the keys at and past it (a padded sequence)."""
    x = params["wte"][idx] + params["wpe"][: idx.shape[1]]
    for p in params["h"]:
        x = x + attention(cfg, p, layer_norm(p["ln_1"], x), length)
        h = jax.nn.gelu(layer_norm(p["ln_2"], x) @ p["fc"]["w"] + p["fc"]["b"], approximate=True)
        x = x + h @ p["proj"]["w"] + p["proj"]["b"]
    return layer_norm(params["ln_f"], x) @ params["wte"].T


def lr_schedule(base_lr: float, warmup: int, max_steps: int) -> optax.Schedule:
    """The example's LambdaLR: (step + 1) / warmup, then cosine from 1 down to 0.1."""
    return optax.join_schedules(
        [
            optax.linear_schedule(base_lr / warmup, base_lr, warmup - 1),
            optax.cosine_decay_schedule(base_lr, max(1, max_steps - warmup), alpha=0.1),
        ],
        [warmup],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--generate", choices=["per-length", "padded"], default="per-length")
    args = ap.parse_args()

    cfg = GPTConfig()
    starts = (np.arange(256) * 7) % cfg.vocab_size
    seq = (starts[:, None] + np.arange(cfg.block_size + 1)[None, :]) % cfg.vocab_size
    x, y = seq[:, :-1].astype(np.int32), seq[:, 1:].astype(np.int32)

    max_steps, warmup = 60, 10
    schedule = lr_schedule(3e-3, warmup, max_steps)
    tx = optax.chain(
        optax.clip_by_global_norm(1.0),
        optax.adamw(
            schedule,
            b1=0.9,
            b2=0.95,
            eps=1e-8,
            weight_decay=0.1,
            mask=lambda params: jax.tree.map(lambda p: p.ndim >= 2, params),
        ),
    )

    @jax.jit
    def create_state(key):
        params = init_params(cfg, key)
        return params, tx.init(params)

    def loss_fn(params, xb, yb):
        logits = forward(cfg, params, xb)
        return optax.softmax_cross_entropy_with_integer_labels(logits, yb).mean()

    @jax.jit
    def train_step(params, opt_state, xb, yb, step):
        loss, grads = jax.value_and_grad(loss_fn)(params, xb, yb)
        updates, opt_state = tx.update(grads, opt_state, params)
        # the rate the next step uses: what the example's get_last_lr() prints
        return optax.apply_updates(params, updates), opt_state, loss, schedule(step + 1)

    params, opt_state = create_state(jax.random.key(0))
    leaves = jax.tree.leaves(params)
    print(f"number of parameters: {sum(p.size for p in leaves) / 1e3:.2f}K")
    print("tied:", True)  # the head reads params["wte"]: one array, nothing to tie
    decay = [p for p in leaves if p.ndim >= 2]
    nodecay = [p for p in leaves if p.ndim < 2]
    print(f"decayed tensors: {len(decay)} ({sum(p.size for p in decay):,} parameters)")
    print(f"non-decayed tensors: {len(nodecay)} ({sum(p.size for p in nodecay):,} params)")

    for step in range(max_steps):
        i = (step * 32) % 256
        params, opt_state, loss, lr = train_step(
            params, opt_state, x[i : i + 32], y[i : i + 32], step
        )
        if step % 10 == 0 or step == max_steps - 1:
            print(f"step {step:3d} | loss {float(loss):.4f} | lr {float(lr):.2e}")

    prompt, new_tokens = np.array([[3, 4, 5]], np.int32), 10
    if args.generate == "per-length":

        @jax.jit
        def extend(params, idx):
            logits = forward(cfg, params, idx[:, -cfg.block_size :])
            return jnp.concatenate([idx, logits[:, -1].argmax(-1, keepdims=True)], 1)

        idx = prompt
        for _ in range(new_tokens):
            idx = extend(params, idx)
        out = np.asarray(idx)[0]
    else:
        assert prompt.shape[1] + new_tokens <= cfg.block_size, "padded: no window to slide"

        @jax.jit
        def extend_padded(params, buf, length):
            logits = forward(cfg, params, buf, length)
            token = jax.lax.dynamic_index_in_dim(logits, length - 1, 1, keepdims=False)
            return jax.lax.dynamic_update_slice(buf, token.argmax(-1, keepdims=True), (0, length))

        buf = np.zeros((1, cfg.block_size), np.int32)
        buf[:, : prompt.shape[1]] = prompt
        for length in range(prompt.shape[1], prompt.shape[1] + new_tokens):
            buf = extend_padded(params, buf, length)
        out = np.asarray(buf)[0, : prompt.shape[1] + new_tokens]
    print("generated:", out.tolist())
    print("final loss < 0.5:", float(loss) < 0.5)


if __name__ == "__main__":
    main()
