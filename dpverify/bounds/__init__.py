"""Regret bounds of private RL as sympy expressions.

* :mod:`~dpverify.bounds.registry` — every bound as stated, with its source line (``REGISTRY``);
* :mod:`~dpverify.bounds.rates` — leading exponents and the non-private / privacy-cost split;
* :mod:`~dpverify.bounds.evaluation` — evaluation at numbers (T = K·H handled);
* :mod:`~dpverify.bounds.comparison` — ratio, crossovers, the region where "A improves over B";
* :mod:`~dpverify.bounds.consistency` — the checks ``dpverify bounds check`` runs;
* :mod:`~dpverify.bounds.constants` — L, λ̃, β̂ = β̌, β̄, β of Sahu 2025, the single source for agents:
  ``dpverify.bounds.constants.dp_lsvi_ucbpp_constants(d=..., H=..., K=..., rho=..., delta=...)``;
* :mod:`~dpverify.bounds.plot` and :mod:`~dpverify.bounds.docgen` — figures and ``docs/bounds.md``.
"""

from dpverify.bounds.comparison import Comparison, Region, compare, improvement_region
from dpverify.bounds.consistency import Finding, run_all
from dpverify.bounds.constants import DpLsviUcbppConstants, dp_lsvi_ucbpp_constants
from dpverify.bounds.evaluation import Evaluation, evaluate
from dpverify.bounds.rates import leading_exponent, rates, split
from dpverify.bounds.registry import CLAIMS, REGISTRY, BoundEntry, entries, get

__all__ = [
    "CLAIMS",
    "REGISTRY",
    "BoundEntry",
    "Comparison",
    "DpLsviUcbppConstants",
    "Evaluation",
    "Finding",
    "Region",
    "compare",
    "dp_lsvi_ucbpp_constants",
    "entries",
    "evaluate",
    "get",
    "improvement_region",
    "leading_exponent",
    "rates",
    "run_all",
    "split",
]
