# compat: rtol=5e-3 atol=5e-4 timeout=600 requires=transformers,accelerate
"""transformers `Trainer`: a few optimisation steps of a tiny GPT-2 on a synthetic dataset
(AdamW, linear schedule with warmup, gradient accumulation, clipping), evaluation, a
checkpoint written and the training state read back."""

import json
import os
import tempfile

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback

from _common import TokenDataset, fill_from_numpy


cfg = GPT2Config(n_layer=2, n_head=2, n_embd=32, vocab_size=61, n_positions=32,
                 resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1,
                 eos_token_id=2)
model = GPT2LMHeadModel(cfg)
fill_from_numpy(model, seed=11)

with tempfile.TemporaryDirectory() as out:
    args = TrainingArguments(
        output_dir=out, per_device_train_batch_size=4, per_device_eval_batch_size=4,
        gradient_accumulation_steps=2, learning_rate=5e-3, warmup_steps=2, max_steps=6,
        max_grad_norm=1.0, logging_steps=1, save_steps=6, save_strategy="steps",
        eval_strategy="no", report_to=[], use_cpu=True, seed=0, data_seed=0,
        dataloader_num_workers=0, disable_tqdm=True, lr_scheduler_type="linear",
        train_sampling_strategy="sequential")    # a random order would come from torch's RNG
    trainer = Trainer(model=model, args=args, train_dataset=TokenDataset(16, 12),
                      eval_dataset=TokenDataset(8, 13))
    # The printed logs hold wall times: this program prints what it compares itself.
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    result = trainer.train()
    print("global step", result.global_step)
    for entry in trainer.state.log_history:
        if "loss" in entry:
            print(f"step {entry['step']} loss {entry['loss']:.5f} lr {entry['learning_rate']:.6f} "
                  f"grad_norm {entry['grad_norm']:.5f}")
    metrics = trainer.evaluate()
    print(f"eval loss {metrics['eval_loss']:.5f}")
    ckpt = os.path.join(out, "checkpoint-6")
    print("checkpoint files", sorted(f for f in os.listdir(ckpt) if not f.startswith("rng")))
    state = json.load(open(os.path.join(ckpt, "trainer_state.json")))
    print("saved state step", state["global_step"])
    opt_state = torch.load(os.path.join(ckpt, "optimizer.pt"), weights_only=True)
    print("optimizer state", len(opt_state["state"]), sorted(opt_state["state"][0]))
