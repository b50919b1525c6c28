# compat: rtol=1e-3 atol=1e-5 timeout=2400 requires=torchmetrics slow
"""torchmetrics' functional API across its families: 86 metrics (classification in its binary,
multiclass and multilabel forms, curves, regression, image, audio, retrieval, pairwise, text)
on numpy-made inputs; each prints its dtype and first values, or the error it raised.
`python torchmetrics_functional_sweep.py name...` runs a subset."""

import sys

import numpy as np
import torch
from torchmetrics.functional import audio as A
from torchmetrics.functional import classification as C
from torchmetrics.functional import image as I  # noqa: E741
from torchmetrics.functional import pairwise as P
from torchmetrics.functional import regression as R
from torchmetrics.functional import retrieval as RT
from torchmetrics.functional import text as TX

from _common import report

rng = np.random.default_rng(0)


def t(a):
    return torch.from_numpy(np.asarray(a))


probs = t(rng.dirichlet(np.ones(4), 20).astype(np.float32))
tgt = t(rng.integers(0, 4, 20))
bprob = t(rng.uniform(0, 1, 30).astype(np.float32))
btgt = t(rng.integers(0, 2, 30))
mlp = t(rng.uniform(0, 1, (10, 3)).astype(np.float32))
mlt = t(rng.integers(0, 2, (10, 3)))
x = t(rng.standard_normal(25).astype(np.float32))
y = t((rng.standard_normal(25) * 0.5 + np.asarray(x)).astype(np.float32))
pos = t(rng.uniform(0.1, 2, 25).astype(np.float32))
pos2 = t(rng.uniform(0.1, 2, 25).astype(np.float32))
img1 = t(rng.uniform(0, 1, (2, 3, 24, 24)).astype(np.float32))
img2 = img1 * 0.8 + 0.1 * t(rng.uniform(0, 1, (2, 3, 24, 24)).astype(np.float32))
aud1 = t(rng.standard_normal((2, 400)).astype(np.float32))
aud2 = aud1 + 0.3 * t(rng.standard_normal((2, 400)).astype(np.float32))
m1 = t(rng.standard_normal((5, 4)).astype(np.float32))
m2 = t(rng.standard_normal((6, 4)).astype(np.float32))
rp = t(rng.uniform(0, 1, 20).astype(np.float32))
rt = t(rng.integers(0, 2, 20).astype(bool))
CASES = {
    "mc_accuracy": lambda: C.multiclass_accuracy(probs, tgt, 4),
    "mc_accuracy_micro": lambda: C.multiclass_accuracy(probs, tgt, 4, average="micro"),
    "mc_f1": lambda: C.multiclass_f1_score(probs, tgt, 4),
    "mc_precision_none": lambda: C.multiclass_precision(probs, tgt, 4, average=None),
    "mc_recall_top2": lambda: C.multiclass_recall(probs, tgt, 4, top_k=2),
    "mc_auroc": lambda: C.multiclass_auroc(probs, tgt, 4),
    "mc_ap": lambda: C.multiclass_average_precision(probs, tgt, 4),
    "mc_confmat": lambda: C.multiclass_confusion_matrix(probs, tgt, 4),
    "mc_mcc": lambda: C.multiclass_matthews_corrcoef(probs, tgt, 4),
    "mc_kappa": lambda: C.multiclass_cohen_kappa(probs, tgt, 4),
    "mc_calib": lambda: C.multiclass_calibration_error(probs, tgt, 4, n_bins=5),
    "mc_jaccard": lambda: C.multiclass_jaccard_index(probs, tgt, 4),
    "mc_hamming": lambda: C.multiclass_hamming_distance(probs, tgt, 4),
    "mc_specificity": lambda: C.multiclass_specificity(probs, tgt, 4),
    "mc_stat": lambda: C.multiclass_stat_scores(probs, tgt, 4),
    "mc_roc": lambda: [c[0] for c in C.multiclass_roc(probs, tgt, 4, thresholds=5)],
    "mc_exact": lambda: C.multiclass_exact_match(
        probs.argmax(-1).reshape(4, 5), tgt.reshape(4, 5), 4
    ),
    "mc_hinge": lambda: C.multiclass_hinge_loss(probs, tgt, 4),
    "bin_accuracy": lambda: C.binary_accuracy(bprob, btgt),
    "bin_auroc": lambda: C.binary_auroc(bprob, btgt),
    "bin_auroc_maxfpr": lambda: C.binary_auroc(bprob, btgt, max_fpr=0.5),
    "bin_ap": lambda: C.binary_average_precision(bprob, btgt),
    "bin_prc": lambda: C.binary_precision_recall_curve(bprob, btgt),
    "bin_roc": lambda: C.binary_roc(bprob, btgt),
    "bin_roc_thr": lambda: C.binary_roc(bprob, btgt, thresholds=7),
    "bin_f_beta": lambda: C.binary_fbeta_score(bprob, btgt, beta=2.0),
    "bin_calib": lambda: C.binary_calibration_error(bprob, btgt, n_bins=4),
    "bin_recall_at_prec": lambda: C.binary_recall_at_fixed_precision(
        bprob, btgt, min_precision=0.5
    ),
    "bin_logauc": lambda: C.binary_logauc(bprob, btgt),
    "bin_eer": lambda: C.binary_eer(bprob, btgt),
    "ml_accuracy": lambda: C.multilabel_accuracy(mlp, mlt, 3),
    "ml_auroc": lambda: C.multilabel_auroc(mlp, mlt, 3),
    "ml_ranking": lambda: C.multilabel_ranking_average_precision(mlp, mlt, 3),
    "ml_coverage": lambda: C.multilabel_coverage_error(mlp, mlt, 3),
    "ml_rankloss": lambda: C.multilabel_ranking_loss(mlp, mlt, 3),
    "mse": lambda: R.mean_squared_error(x, y),
    "rmse": lambda: R.mean_squared_error(x, y, squared=False),
    "mae": lambda: R.mean_absolute_error(x, y),
    "msle": lambda: R.mean_squared_log_error(pos, pos2),
    "mape": lambda: R.mean_absolute_percentage_error(pos, pos2),
    "smape": lambda: R.symmetric_mean_absolute_percentage_error(pos, pos2),
    "wmape": lambda: R.weighted_mean_absolute_percentage_error(pos, pos2),
    "r2": lambda: R.r2_score(x, y),
    "r2_adj": lambda: R.r2_score(x, y, adjusted=2),
    "ev": lambda: R.explained_variance(x, y),
    "pearson": lambda: R.pearson_corrcoef(x, y),
    "spearman": lambda: R.spearman_corrcoef(x, y),
    "kendall": lambda: R.kendall_rank_corrcoef(x, y),
    "concordance": lambda: R.concordance_corrcoef(x, y),
    "cosine": lambda: R.cosine_similarity(m1, m1 + 0.1),
    "kl": lambda: R.kl_divergence(probs[:5], probs[5:10]),
    "tweedie": lambda: R.tweedie_deviance_score(pos, pos2, power=1.5),
    "log_cosh": lambda: R.log_cosh_error(x, y),
    "minkowski": lambda: R.minkowski_distance(x, y, 3),
    "rse": lambda: R.relative_squared_error(x, y),
    "crps": lambda: R.continuous_ranked_probability_score(m2, m2[:, 0]),
    "psnr": lambda: I.peak_signal_noise_ratio(img2, img1, data_range=1.0),
    "ssim": lambda: I.structural_similarity_index_measure(img2, img1, data_range=1.0),
    "ms_ssim_small": lambda: I.multiscale_structural_similarity_index_measure(
        t(rng.uniform(0, 1, (1, 1, 180, 180)).astype(np.float32)),
        t(rng.uniform(0, 1, (1, 1, 180, 180)).astype(np.float32)),
        data_range=1.0,
        betas=(0.5, 0.5),
        kernel_size=5,
    ),
    "uqi": lambda: I.universal_image_quality_index(img2, img1),
    "tv": lambda: I.total_variation(img1),
    "ergas": lambda: I.error_relative_global_dimensionless_synthesis(img2, img1),
    "sam": lambda: I.spectral_angle_mapper(img2, img1),
    "gradients": lambda: I.image_gradients(img1)[0].sum(),
    "snr": lambda: A.signal_noise_ratio(aud2, aud1),
    "si_snr": lambda: A.scale_invariant_signal_noise_ratio(aud2, aud1),
    "si_sdr": lambda: A.scale_invariant_signal_distortion_ratio(aud2, aud1),
    "sdr": lambda: A.signal_distortion_ratio(aud2, aud1),
    "pit": lambda: A.permutation_invariant_training(
        aud2.reshape(1, 2, 400), aud1.reshape(1, 2, 400), A.scale_invariant_signal_distortion_ratio
    )[0],
    "ret_map": lambda: RT.retrieval_average_precision(rp[:5], rt[:5]),
    "ret_mrr": lambda: RT.retrieval_reciprocal_rank(rp[:5], rt[:5]),
    "ret_ndcg": lambda: RT.retrieval_normalized_dcg(rp[:5], rt[:5].long()),
    "ret_prec_k": lambda: RT.retrieval_precision(rp[:5], rt[:5], top_k=3),
    "pw_cos": lambda: P.pairwise_cosine_similarity(m1, m2),
    "pw_euc": lambda: P.pairwise_euclidean_distance(m1, m2),
    "pw_manhattan": lambda: P.pairwise_manhattan_distance(m1, m2),
    "pw_linear": lambda: P.pairwise_linear_similarity(m1, m2),
    "bleu": lambda: TX.bleu_score(
        ["the cat is on the mat"], [["there is a cat on the mat", "a cat is on the mat"]]
    ),
    "sacrebleu": lambda: TX.sacre_bleu_score(
        ["the cat is on the mat"], [["there is a cat on the mat"]]
    ),
    "chrf": lambda: TX.chrf_score(["the cat is on the mat"], [["there is a cat on the mat"]]),
    "cer": lambda: TX.char_error_rate(["this is the prediction"], ["this is the reference"]),
    "wer": lambda: TX.word_error_rate(["this is the prediction"], ["this is the reference"]),
    "ter": lambda: TX.translation_edit_rate(
        ["the cat is on the mat"], [["there is a cat on the mat"]]
    ),
    "edit": lambda: TX.edit_distance(["rain"], ["shine"]),
    "rouge": lambda: TX.rouge_score(
        "the cat is on the mat", "there is a cat on the mat", rouge_keys=("rouge1", "rougeL")
    ),
    "perplexity": lambda: TX.perplexity(
        torch.log_softmax(t(rng.standard_normal((2, 5, 7)).astype(np.float32)), -1),
        t(rng.integers(0, 7, (2, 5))),
    ),
}


def show(v):
    if isinstance(v, dict):
        return {k: show(v[k]) for k in sorted(v)}
    if isinstance(v, (list, tuple)):
        return [show(a) for a in v]
    if isinstance(v, torch.Tensor):
        return (
            str(v.dtype),
            [round(float(a), 5) for a in v.detach().double().reshape(-1)[:12].tolist()],
        )
    return v


only = sys.argv[1:]
for name, fn in CASES.items():
    if only and name not in only:
        continue
    report(name, fn, show)
