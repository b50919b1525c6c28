"""transformers' Trainer on every visible GPU of one process: it wraps the model in
nn.DataParallel (n_gpu > 1) and averages the replicas' losses. Under jtorch with
JTORCH_CUDA_IS_CPU=1 and 2 simulated accelerators it does; under PyTorch on a CPU the same
global batch of 8 trains on the CPU. Equal chunks make the mean of the replicas' mean losses
the mean loss of the batch, so both print the same losses (compat/test_data_parallel.py)."""

import os
import sys
import tempfile
import warnings

import torch
from transformers import GPT2Config, GPT2LMHeadModel, Trainer, TrainingArguments
from transformers.trainer_callback import PrinterCallback, ProgressCallback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "compat", "ecosystem"))
from _common import TokenDataset, fill_from_numpy  # noqa: E402

gpus = torch.cuda.device_count()
cfg = GPT2Config(
    n_layer=2, n_head=2, n_embd=32, vocab_size=61, n_positions=32, resid_pdrop=0.0,
    embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=1, eos_token_id=2,
)  # fmt: skip
model = GPT2LMHeadModel(cfg)
fill_from_numpy(model, seed=11)
with tempfile.TemporaryDirectory() as out:
    args = TrainingArguments(
        output_dir=out, per_device_train_batch_size=8 // max(gpus, 1), learning_rate=5e-3,
        warmup_steps=2, max_steps=4, max_grad_norm=1.0, logging_steps=1, save_strategy="no",
        eval_strategy="no", report_to=[], use_cpu=gpus == 0, seed=0, data_seed=0,
        dataloader_num_workers=0, disable_tqdm=True, train_sampling_strategy="sequential",
    )  # fmt: skip
    print("n_gpu", args.n_gpu, "train batch", args.train_batch_size)
    trainer = Trainer(model=model, args=args, train_dataset=TokenDataset(32, 12))
    trainer.remove_callback(PrinterCallback)
    trainer.remove_callback(ProgressCallback)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DataParallel's "gather scalars" warning, each step
        trainer.train()
    print("wrapped in", type(trainer.model_wrapped).__name__)
    for e in trainer.state.log_history:
        if "loss" in e:
            print(f"step {e['step']} loss {e['loss']:.5f} grad_norm {e['grad_norm']:.5f}")
