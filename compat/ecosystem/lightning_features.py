# compat: rtol=5e-3 atol=1e-4 timeout=900 requires=pytorch_lightning
"""Lightning's Trainer features: ModelCheckpoint (top-k on a monitored metric), EarlyStopping,
LearningRateMonitor, gradient clipping and accumulation, CSV logging, validate/test/predict,
load_from_checkpoint with hyperparameters, bf16-mixed precision, and resuming a fit from a
saved checkpoint; each prints what it computed."""

import logging
import os
import tempfile
import warnings

warnings.filterwarnings("ignore")
logging.getLogger("pytorch_lightning").setLevel(logging.ERROR)
logging.getLogger("lightning").setLevel(logging.ERROR)
import numpy as np
import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping, LearningRateMonitor
from torch.utils.data import DataLoader, TensorDataset

from _common import report

rng = np.random.default_rng(0)
X = torch.from_numpy(rng.standard_normal((64, 8)).astype(np.float32))
Y = torch.from_numpy(rng.integers(0, 3, 64))


class M(pl.LightningModule):
    def __init__(self, lr=0.1):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3)
        )
        r = np.random.default_rng(1)
        with torch.no_grad():
            for p in self.net.parameters():
                p.copy_(
                    torch.from_numpy((r.standard_normal(tuple(p.shape)) * 0.3).astype(np.float32))
                )

    def forward(self, x):
        return self.net(x)

    def training_step(self, b, i):
        loss = torch.nn.functional.cross_entropy(self(b[0]), b[1])
        self.log("train_loss", loss)
        return loss

    def validation_step(self, b, i):
        loss = torch.nn.functional.cross_entropy(self(b[0]), b[1])
        self.log("val_loss", loss, prog_bar=True)

    def test_step(self, b, i):
        self.log("test_acc", (self(b[0]).argmax(-1) == b[1]).float().mean())

    def predict_step(self, b, i):
        return self(b[0]).argmax(-1)

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 1, 0.7)}


def dl(shuffle=False):
    return DataLoader(TensorDataset(X, Y), batch_size=16, shuffle=shuffle)


def fmt(d):
    return {k: round(float(v), 4) for k, v in sorted(d.items())}


def callbacks():
    with tempfile.TemporaryDirectory() as d:
        ck = ModelCheckpoint(dirpath=d, monitor="val_loss", save_top_k=2, filename="{epoch}")
        es = EarlyStopping(monitor="val_loss", patience=1, min_delta=10.0)
        lrm = LearningRateMonitor()
        t = pl.Trainer(
            max_epochs=5,
            callbacks=[ck, es, lrm],
            logger=pl.loggers.CSVLogger(d),
            enable_progress_bar=False,
            enable_model_summary=False,
            gradient_clip_val=0.5,
            accumulate_grad_batches=2,
            deterministic=True,
        )
        m = M()
        t.fit(m, dl(), dl())
        files = sorted(os.listdir(d))
        best = os.path.basename(ck.best_model_path)
        re = M.load_from_checkpoint(ck.best_model_path)
        test = t.test(m, dl(), verbose=False)
        pred = torch.cat(t.predict(m, dl()))
        return (
            t.current_epoch,
            es.stopped_epoch,
            files,
            best,
            round(float(ck.best_model_score), 4),
            fmt(t.callback_metrics),
            re.hparams.lr,
            fmt(test[0]),
            pred[:10].tolist(),
            t.global_step,
        )


def bf16():
    t = pl.Trainer(
        max_epochs=1,
        precision="bf16-mixed",
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
    )
    m = M()
    t.fit(m, dl())
    return fmt(t.callback_metrics), str(next(m.parameters()).dtype)


def resume():
    with tempfile.TemporaryDirectory() as d:
        t = pl.Trainer(
            max_epochs=1,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=d,
        )
        m = M()
        t.fit(m, dl())
        path = os.path.join(d, "x.ckpt")
        t.save_checkpoint(path)
        ck = torch.load(path, weights_only=False)
        t2 = pl.Trainer(
            max_epochs=2,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=d,
        )
        m2 = M()
        t2.fit(m2, dl(), ckpt_path=path)
        return sorted(ck), ck["epoch"], ck["global_step"], t2.global_step, fmt(t2.callback_metrics)


for n in ("callbacks", "bf16", "resume"):
    report(n, globals()[n])
