"""Regret bounds of private RL as sympy expressions.

* :mod:`~dpverify.bounds.registry` — every bound as stated, with its source line (``REGISTRY``);
* :mod:`~dpverify.bounds.rates` — leading exponents and the non-private / privacy-cost split;
* :mod:`~dpverify.bounds.evaluation` — evaluation at numbers (T = K·H handled);
* :mod:`~dpverify.bounds.comparison` — ratio, crossovers, the region where "A improves over B";
* :mod:`~dpverify.bounds.consistency` — the checks ``dpverify bounds check`` runs;
* :mod:`~dpverify.bounds.constants` — L, λ̃, β̂ = β̌, β̄, β of Sahu 2025, the single source for agents:
  ``dpverify.bounds.constants.dp_lsvi_ucbpp_constants(d=..., H=..., K=..., rho=..., delta=...)``;
* :mod:`~dpverify.bounds.plot` — figures (``docs/bounds.md`` is generated above the core, by
  :mod:`dpverify.cli.bounds_docgen`, which runs the command line for its examples).
"""

from typing import TYPE_CHECKING

from dpverify._lazy import lazy_exports

#: Public name → its module, resolved on first access: an agent that reads only the constants imports
#: sympy and :mod:`~dpverify.bounds.constants`, not the comparison machinery (and scipy.optimize with it).
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Comparison", "Region", "compare", "improvement_region"), "dpverify.bounds.comparison"),
    **dict.fromkeys(("Finding", "run_all"), "dpverify.bounds.consistency"),
    **dict.fromkeys(("DpLsviUcbppConstants", "dp_lsvi_ucbpp_constants"), "dpverify.bounds.constants"),
    **dict.fromkeys(("Evaluation", "evaluate"), "dpverify.bounds.evaluation"),
    **dict.fromkeys(("leading_exponent", "rates", "split"), "dpverify.bounds.rates"),
    **dict.fromkeys(("CLAIMS", "REGISTRY", "BoundEntry", "entries", "get"), "dpverify.bounds.registry"),
}

__all__ = sorted(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static checkers see the real names (``X as X`` marks a re-export)
    from dpverify.bounds.comparison import Comparison as Comparison
    from dpverify.bounds.comparison import Region as Region
    from dpverify.bounds.comparison import compare as compare
    from dpverify.bounds.comparison import improvement_region as improvement_region
    from dpverify.bounds.consistency import Finding as Finding
    from dpverify.bounds.consistency import run_all as run_all
    from dpverify.bounds.constants import DpLsviUcbppConstants as DpLsviUcbppConstants
    from dpverify.bounds.constants import dp_lsvi_ucbpp_constants as dp_lsvi_ucbpp_constants
    from dpverify.bounds.evaluation import Evaluation as Evaluation
    from dpverify.bounds.evaluation import evaluate as evaluate
    from dpverify.bounds.rates import leading_exponent as leading_exponent
    from dpverify.bounds.rates import rates as rates
    from dpverify.bounds.rates import split as split
    from dpverify.bounds.registry import CLAIMS as CLAIMS
    from dpverify.bounds.registry import REGISTRY as REGISTRY
    from dpverify.bounds.registry import BoundEntry as BoundEntry
    from dpverify.bounds.registry import entries as entries
    from dpverify.bounds.registry import get as get
