# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=pytorch_lightning
"""PyTorch Lightning as its users train with it on a CPU: a LightningModule with
training/validation/test/predict steps and a scheduler, a LightningDataModule, Trainer.fit /
validate / test / predict, ModelCheckpoint writing a checkpoint that a second Trainer resumes
from with ckpt_path, and load_from_checkpoint."""

import os
import tempfile
import warnings

import numpy as np
import pytorch_lightning as pl
import torch
from pytorch_lightning.callbacks import ModelCheckpoint
from torch.utils.data import DataLoader, TensorDataset

warnings.filterwarnings("ignore")       # Lightning's advice (workers, logging) is not compared

rng = np.random.default_rng(0)
X = rng.standard_normal((64, 5)).astype(np.float32)
Y = (X @ rng.standard_normal((5, 1)) > 0).astype(np.float32)


class Data(pl.LightningDataModule):
    def setup(self, stage=None):
        self.train = TensorDataset(torch.tensor(X[:48]), torch.tensor(Y[:48]))
        self.val = TensorDataset(torch.tensor(X[48:]), torch.tensor(Y[48:]))

    def train_dataloader(self):
        return DataLoader(self.train, batch_size=16)

    def val_dataloader(self):
        return DataLoader(self.val, batch_size=8)

    def test_dataloader(self):
        return DataLoader(self.val, batch_size=8)

    def predict_dataloader(self):
        return DataLoader(TensorDataset(torch.tensor(X[:4])), batch_size=2)


class Classifier(pl.LightningModule):
    def __init__(self, hidden: int = 8, lr: float = 0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(5, hidden), torch.nn.Tanh(),
                                       torch.nn.Linear(hidden, 1))
        init = np.random.default_rng(1)
        with torch.no_grad():
            for p in self.net.parameters():
                p.copy_(torch.tensor(0.4 * init.standard_normal(tuple(p.shape)),
                                     dtype=torch.float32))
        self.seen = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.binary_cross_entropy_with_logits(self(x), y)
        self.log("train_loss", loss)
        self.seen.append(round(float(loss), 6))
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", torch.nn.functional.binary_cross_entropy_with_logits(logits, y))
        self.log("val_acc", ((logits > 0).float() == y).float().mean())

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", torch.nn.functional.binary_cross_entropy_with_logits(self(x), y))

    def predict_step(self, batch, batch_idx):
        return torch.sigmoid(self(batch[0]))

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr, momentum=0.9)
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        return {"optimizer": opt, "lr_scheduler": sched}


def trainer(root, epochs, **kwargs):
    return pl.Trainer(accelerator="cpu", devices=1, max_epochs=epochs, logger=False,
                      enable_progress_bar=False, enable_model_summary=False,
                      default_root_dir=root, **kwargs)


def metrics(d):
    return {k: round(float(v), 6) for k, v in sorted(d.items())}


with tempfile.TemporaryDirectory() as root:
    ckpt_cb = ModelCheckpoint(dirpath=os.path.join(root, "ckpt"), filename="last-{epoch}",
                              save_last=False, monitor="val_loss", mode="min")
    model, data = Classifier(), Data()
    t = trainer(root, 2, callbacks=[ckpt_cb])
    t.fit(model, datamodule=data)
    print("losses", model.seen)
    print("epoch", t.current_epoch, "global step", t.global_step)
    print("callback metrics", metrics(t.callback_metrics))
    print("best", os.path.basename(ckpt_cb.best_model_path),
          round(float(ckpt_cb.best_model_score), 6))
    print("validate", [metrics(d) for d in t.validate(model, datamodule=data, verbose=False)])
    print("test", [metrics(d) for d in t.test(model, datamodule=data, verbose=False)])
    preds = t.predict(model, datamodule=data)
    print("predict", [[round(float(v), 6) for v in p.flatten()] for p in preds])

    ckpt = torch.load(ckpt_cb.best_model_path, weights_only=False)
    print("checkpoint keys", sorted(ckpt))
    print("checkpoint state", sorted(ckpt["state_dict"]), ckpt["epoch"], ckpt["global_step"])
    print("hyper parameters", dict(ckpt["hyper_parameters"]))

    resumed = Classifier()
    t2 = trainer(root, 3)
    t2.fit(resumed, datamodule=Data(), ckpt_path=ckpt_cb.best_model_path)
    print("resumed losses", resumed.seen)
    print("resumed epoch", t2.current_epoch, "global step", t2.global_step)
    print("resumed lr", t2.optimizers[0].param_groups[0]["lr"])

    loaded = Classifier.load_from_checkpoint(ckpt_cb.best_model_path)
    print("loaded hparams", dict(loaded.hparams))
    with torch.no_grad():
        print("loaded logits", [round(float(v), 6) for v in loaded(torch.tensor(X[:3])).flatten()])
