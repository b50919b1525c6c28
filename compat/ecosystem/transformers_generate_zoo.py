# compat: rtol=2e-3 atol=2e-4 timeout=2400 requires=transformers slow
"""transformers generation across model families: 21 decoder LMs and 3 encoder-decoders, each
built tiny from its config with numpy weights: greedy `generate` with the default cache, and
with the static cache for the decoder LMs (not Jamba, whose hybrid cache has no static form).
`python transformers_generate_zoo.py Name...` runs a subset."""

import sys
import traceback

import numpy as np
import torch
import transformers as T

from _common import fill_from_numpy

D = dict(
    vocab_size=99,
    hidden_size=32,
    num_hidden_layers=2,
    num_attention_heads=4,
    intermediate_size=64,
    max_position_embeddings=64,
)
LM = [
    ("MistralConfig", "MistralForCausalLM", dict(num_key_value_heads=2)),
    ("Qwen2Config", "Qwen2ForCausalLM", dict(num_key_value_heads=2)),
    ("Qwen3Config", "Qwen3ForCausalLM", dict(num_key_value_heads=2, head_dim=8)),
    ("GemmaConfig", "GemmaForCausalLM", dict(num_key_value_heads=2, head_dim=8)),
    ("Gemma2Config", "Gemma2ForCausalLM", dict(num_key_value_heads=2, head_dim=8)),
    ("Gemma3TextConfig", "Gemma3ForCausalLM", dict(num_key_value_heads=2, head_dim=8)),
    ("PhiConfig", "PhiForCausalLM", dict()),
    ("Phi3Config", "Phi3ForCausalLM", dict(num_key_value_heads=2, pad_token_id=0)),
    ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict()),
    ("OPTConfig", "OPTForCausalLM", dict(ffn_dim=64, word_embed_proj_dim=32)),
    ("BloomConfig", "BloomForCausalLM", dict(n_layer=2, n_head=4)),
    ("FalconConfig", "FalconForCausalLM", dict()),
    (
        "GPTJConfig",
        "GPTJForCausalLM",
        dict(n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64),
    ),
    ("StableLmConfig", "StableLmForCausalLM", dict(num_key_value_heads=2)),
    (
        "MixtralConfig",
        "MixtralForCausalLM",
        dict(num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2),
    ),
    (
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        dict(
            num_key_value_heads=2,
            num_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            shared_expert_intermediate_size=32,
        ),
    ),
    ("OlmoConfig", "OlmoForCausalLM", dict()),
    (
        "GPTNeoConfig",
        "GPTNeoForCausalLM",
        dict(num_layers=2, attention_types=[[["global", "local"], 1]], num_heads=4, window_size=8),
    ),
    (
        "CodeGenConfig",
        "CodeGenForCausalLM",
        dict(n_embd=32, n_layer=2, n_head=4, rotary_dim=4, n_positions=64),
    ),
    (
        "JambaConfig",
        "JambaForCausalLM",
        dict(
            num_key_value_heads=2,
            num_experts=2,
            mamba_d_state=4,
            mamba_dt_rank=4,
            attn_layer_period=2,
            attn_layer_offset=1,
            expert_layer_period=2,
            expert_layer_offset=1,
            mamba_expand=2,
        ),
    ),
    (
        "DeepseekV3Config",
        "DeepseekV3ForCausalLM",
        dict(
            num_key_value_heads=4,
            n_routed_experts=4,
            num_experts_per_tok=2,
            moe_intermediate_size=16,
            q_lora_rank=16,
            kv_lora_rank=8,
            qk_rope_head_dim=4,
            qk_nope_head_dim=4,
            v_head_dim=8,
            first_k_dense_replace=1,
            n_group=1,
            topk_group=1,
        ),
    ),
]
S2S = [
    (
        "BartConfig",
        "BartForConditionalGeneration",
        dict(
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
        ),
    ),
    (
        "MT5Config",
        "MT5ForConditionalGeneration",
        dict(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4),
    ),
    (
        "PegasusConfig",
        "PegasusForConditionalGeneration",
        dict(
            d_model=32,
            encoder_layers=2,
            decoder_layers=2,
            encoder_attention_heads=4,
            decoder_attention_heads=4,
            encoder_ffn_dim=64,
            decoder_ffn_dim=64,
        ),
    ),
]
only = sys.argv[1:]
ids = torch.from_numpy(np.random.default_rng(3).integers(3, 99, (2, 6)))
for cfg_name, model_name, kw in LM + S2S:
    if only and not any(o in model_name for o in only):
        continue
    try:
        args = dict(D)
        args.update(kw)
        cfg = getattr(T, cfg_name)(**args)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.3)
        m.eval()
        with torch.no_grad():
            g = m.generate(ids, max_new_tokens=5, do_sample=False, pad_token_id=0)
            g2 = None
            if model_name.endswith("CausalLM") and "Jamba" not in model_name:
                g2 = m.generate(ids, max_new_tokens=3, do_sample=False, pad_token_id=0,
                                cache_implementation="static")
        print(model_name, g.tolist(), None if g2 is None else g2.tolist())
    except Exception as e:  # noqa: BLE001 - a model that fails is reported, the sweep goes on
        print(model_name, "ERROR", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        traceback.print_exc()
    sys.stdout.flush()
