# compat: rtol=2e-3 atol=2e-4 timeout=2400 requires=transformers slow
"""transformers across model families: 35 architectures (decoder LMs with RoPE/ALiBi/GQA/MoE/
multi-latent attention/state-space layers, encoders, encoder-decoders, vision models), each
built tiny from its config with numpy weights, in eval mode: loss with labels, backward,
gradient norm and a few logits. `python transformers_model_zoo.py Name...` runs a subset."""

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
ENC = [
    ("RobertaConfig", "RobertaForMaskedLM", dict()),
    (
        "DistilBertConfig",
        "DistilBertForMaskedLM",
        dict(dim=32, n_layers=2, n_heads=4, hidden_dim=64),
    ),
    ("AlbertConfig", "AlbertForMaskedLM", dict(embedding_size=16)),
    ("ElectraConfig", "ElectraForMaskedLM", dict(embedding_size=16)),
    ("DebertaV2Config", "DebertaV2ForMaskedLM", dict()),
    ("ModernBertConfig", "ModernBertForMaskedLM", dict(pad_token_id=0)),
    ("XLMRobertaConfig", "XLMRobertaForMaskedLM", dict()),
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
VIS = [
    (
        "SwinConfig",
        "SwinForImageClassification",
        dict(
            image_size=32,
            patch_size=4,
            embed_dim=16,
            depths=[1, 1],
            num_heads=[2, 2],
            window_size=4,
            num_labels=3,
        ),
    ),
    (
        "ConvNextConfig",
        "ConvNextForImageClassification",
        dict(num_stages=2, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3),
    ),
    (
        "ResNetConfig",
        "ResNetForImageClassification",
        dict(embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], num_labels=3),
    ),
    (
        "DeiTConfig",
        "DeiTForImageClassification",
        dict(
            image_size=32,
            patch_size=8,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=4,
            intermediate_size=64,
            num_labels=3,
        ),
    ),
    (
        "MobileViTConfig",
        "MobileViTForImageClassification",
        dict(
            image_size=32,
            patch_size=2,
            hidden_sizes=[16, 16, 16],
            neck_hidden_sizes=[8, 8, 16, 16, 16, 32, 64],
            num_labels=3,
        ),
    ),
]
only = sys.argv[1:]  # names to run (default: all)


def run(name, fn):
    if only and not any(o in name for o in only):
        return
    try:
        print(name, fn())
    except Exception as e:  # noqa: BLE001 - a model that fails is reported and the sweep goes on
        print(name, "ERROR", type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
        traceback.print_exc()
    sys.stdout.flush()


rng = np.random.default_rng(3)
ids = torch.from_numpy(rng.integers(3, 99, (2, 8)))
for cfg_name, model_name, kw in LM + ENC + S2S:

    def lm(cfg_name=cfg_name, model_name=model_name, kw=kw):
        args = dict(D)
        args.update(kw)
        cfg = getattr(T, cfg_name)(**args)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.05)
        m.eval()
        out = m(ids, labels=ids)
        out.loss.backward()
        g = sum(float(p.grad.double().pow(2).sum()) for p in m.parameters() if p.grad is not None)
        logits = [round(v, 5) for v in out.logits[0, -1, :3].tolist()]
        return f"loss {out.loss.item():.5f} gnorm {g**0.5:.5f} logit {logits}"

    run(model_name, lm)
img = torch.from_numpy(rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
for cfg_name, model_name, kw in VIS:

    def vis(cfg_name=cfg_name, model_name=model_name, kw=kw):
        cfg = getattr(T, cfg_name)(**kw)
        m = getattr(T, model_name)(cfg)
        fill_from_numpy(m, seed=0, scale=0.05)
        m.eval()
        out = m(img, labels=torch.tensor([0, 2]))
        out.loss.backward()
        return f"loss {out.loss.item():.5f} logit {[round(v, 5) for v in out.logits[0].tolist()]}"

    run(model_name, vis)
