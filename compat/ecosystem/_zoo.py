"""Tiny configurations of transformers architectures, shared by the zoo cases.

Each entry is (config class name, model class name, keyword arguments on top of `D`, the
common small sizes, for the text models); vision entries take their own arguments only.
"""

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
