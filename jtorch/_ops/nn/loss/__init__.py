"""Loss functions (`torch.nn.functional.*_loss`, `cross_entropy`, `kl_div`, `ctc_loss`), one
file per kind: regression, classification, margin (and embedding), ctc.

Every loss takes torch's signature, legacy `size_average`/`reduce` included. Losses whose
targets are class indices check the indices eagerly in a thin composite (the check needs
concrete values, so it is skipped while tracing) and then run one compiled kernel.
"""

from . import classification, ctc, margin, regression  # noqa: F401
