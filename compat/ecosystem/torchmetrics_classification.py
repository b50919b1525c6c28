# compat: rtol=1e-4 atol=1e-5 timeout=300 requires=torchmetrics
"""torchmetrics classification metrics as users run them: a validation loop over batches
with update/compute, forward (batch value + accumulation), reset, a MetricCollection, and
the functional forms; binary and multiclass."""

import numpy as np
import torch
import torchmetrics
from torchmetrics import MetricCollection
from torchmetrics.classification import (
    BinaryAccuracy, BinaryAUROC, BinaryF1Score, MulticlassAccuracy, MulticlassAUROC,
    MulticlassConfusionMatrix, MulticlassF1Score, MulticlassPrecision, MulticlassRecall,
)
from torchmetrics.functional.classification import (
    binary_accuracy, multiclass_accuracy, multiclass_f1_score,
)

rng = np.random.default_rng(0)
NUM_CLASSES = 4


def show(name, value):
    if isinstance(value, torch.Tensor):
        v = value.detach().cpu()
        if v.ndim == 0:
            print(f"{name}: {v.item():.6f} {v.dtype}")
        else:
            print(f"{name}: {[round(float(x), 6) for x in v.flatten()]} {tuple(v.shape)} {v.dtype}")
    else:
        print(f"{name}: {value}")


# Multiclass: logits and integer targets, four batches.
batches = []
for _ in range(4):
    logits = rng.standard_normal((16, NUM_CLASSES)).astype(np.float32)
    target = rng.integers(0, NUM_CLASSES, size=16)
    logits[np.arange(16), target] += 1.0          # better than chance
    batches.append((torch.tensor(logits), torch.tensor(target)))

acc = MulticlassAccuracy(num_classes=NUM_CLASSES)
acc_micro = MulticlassAccuracy(num_classes=NUM_CLASSES, average="micro")
f1 = MulticlassF1Score(num_classes=NUM_CLASSES, average="macro")
prec = MulticlassPrecision(num_classes=NUM_CLASSES, average="weighted")
rec = MulticlassRecall(num_classes=NUM_CLASSES, average=None)
auroc = MulticlassAUROC(num_classes=NUM_CLASSES)
confmat = MulticlassConfusionMatrix(num_classes=NUM_CLASSES)
for i, (logits, target) in enumerate(batches):
    batch_acc = acc(logits, target)               # forward: this batch's value, accumulated
    show(f"batch {i} accuracy", batch_acc)
    acc_micro.update(logits, target)
    f1.update(logits, target)
    prec.update(logits.softmax(-1), target)
    rec.update(logits.argmax(-1), target)
    auroc.update(logits.softmax(-1), target)
    confmat.update(logits, target)
show("accuracy macro", acc.compute())
show("accuracy micro", acc_micro.compute())
show("f1 macro", f1.compute())
show("precision weighted", prec.compute())
show("recall per class", rec.compute())
show("auroc", auroc.compute())
show("confusion matrix", confmat.compute())
acc.reset()
acc.update(*batches[0])
show("accuracy after reset", acc.compute())

# The generic entry point with task=..., and a MetricCollection with a prefix.
generic = torchmetrics.Accuracy(task="multiclass", num_classes=NUM_CLASSES, top_k=2)
for logits, target in batches:
    generic.update(logits, target)
show("top-2 accuracy", generic.compute())
coll = MetricCollection({"acc": MulticlassAccuracy(num_classes=NUM_CLASSES),
                         "f1": MulticlassF1Score(num_classes=NUM_CLASSES)}, prefix="val_")
for logits, target in batches:
    coll.update(logits, target)
for k, v in sorted(coll.compute().items()):
    show(k, v)
print("collection keys", sorted(coll.keys()))

# Binary: probabilities and 0/1 targets.
p = rng.random(64).astype(np.float32)
y = (rng.random(64) < p).astype(np.int64)
probs, target = torch.tensor(p), torch.tensor(y)
show("binary accuracy", BinaryAccuracy()(probs, target))
show("binary accuracy thr 0.3", BinaryAccuracy(threshold=0.3)(probs, target))
show("binary f1", BinaryF1Score()(probs, target))
show("binary auroc", BinaryAUROC()(probs, target))
show("binary auroc generic", torchmetrics.AUROC(task="binary")(probs, target))

# Functional forms.
logits, labels = batches[0]
show("functional multiclass accuracy", multiclass_accuracy(logits, labels, NUM_CLASSES))
show("functional f1 micro", multiclass_f1_score(logits, labels, NUM_CLASSES, average="micro"))
show("functional binary accuracy", binary_accuracy(probs, target))
show("functional generic", torchmetrics.functional.accuracy(logits, labels, task="multiclass",
                                                            num_classes=NUM_CLASSES))
