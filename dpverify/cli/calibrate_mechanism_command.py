"""``dpverify calibrate --mechanism NAME``: one mechanism's noise for a target, over n compositions.

The command line of :mod:`dpverify.calibrate_mechanism`: Gaussian and GOE for (ε, δ) by a zCDP conversion
(``exact`` by default), Laplace for pure ε (``--conversion pure``) or (ε, δ) by ``cks`` / ``bun-steinke``, and
randomized response for pure ε or (ε, δ) by its exact k-RR profile (``--conversion exact``). Each answer is
re-accounted (:func:`~dpverify.calibrate_mechanism.composed_epsilon`) and printed beside the target.
"""

from __future__ import annotations

import argparse
from typing import Any

from dpverify.cli._output import print_json
from dpverify.errors import InvalidParameterError

#: The mechanisms ``--mechanism`` names, listed in --help without importing the library.
MECHANISMS = ("gaussian", "goe", "laplace", "randomized-response")
#: The routes each mechanism is calibrated by (``pure``: δ = 0).
_ROUTES = {"gaussian": ("exact", "cks", "bun-steinke"), "goe": ("exact", "cks", "bun-steinke"),
           "laplace": ("pure", "cks", "bun-steinke"), "randomized-response": ("pure", "exact")}


def _sensitivity(args: argparse.Namespace) -> float:
    if args.sensitivity is None:
        return 1.0
    try:
        return float(args.sensitivity)
    except ValueError:
        raise InvalidParameterError("--sensitivity", "must be a number with --mechanism (the mechanism's "
                                    "sensitivity)", args.sensitivity) from None


def calibrated(args: argparse.Namespace) -> tuple[Any, float, str | None]:
    """(the mechanism, the δ it was calibrated at — 0 for pure ε —, the conversion that accounts it: None for the
    mechanism's own exact route) for the command line's target."""
    from dpverify import calibrate_mechanism as cm

    name = args.mechanism
    if name not in MECHANISMS:
        raise InvalidParameterError("--mechanism", f"must be one of {', '.join(MECHANISMS)}", name)
    routes = _ROUTES[name]
    conversion = args.conversion if args.conversion is not None else routes[0]
    if conversion not in routes:
        raise InvalidParameterError("--conversion", f"must be one of {', '.join(routes)} for {name}", conversion)
    sensitivity, delta = _sensitivity(args), 0.0 if conversion == "pure" else args.delta
    own = None if conversion == "pure" or name == "randomized-response" else conversion
    n, relation = args.compositions, args.relation
    if name == "gaussian":
        gaussian = cm.calibrate_gaussian(args.epsilon, delta, sensitivity, n, args.dim, relation, conversion)
        return gaussian, delta, own
    if name == "goe":
        return cm.calibrate_goe(args.epsilon, delta, sensitivity, args.dim, n, relation, conversion), delta, own
    if name == "laplace":
        return cm.calibrate_laplace(args.epsilon, sensitivity, n, args.dim, delta, relation,
                                    "cks" if delta == 0 else conversion), delta, own
    if not float(sensitivity).is_integer():
        raise InvalidParameterError("--sensitivity", "must be an integer for randomized response (the coordinates "
                                    "one user changes)", args.sensitivity)
    return cm.calibrate_randomized_response(args.epsilon, delta, args.categories, n, args.dim, int(sensitivity),
                                            relation), delta, own


def run(args: argparse.Namespace) -> int:
    from dpverify.calibrate_mechanism import composed_epsilon

    mechanism, delta, conversion = calibrated(args)
    accounted = composed_epsilon(mechanism, delta, args.compositions, conversion)
    target = f"ε = {args.epsilon:g}" + (" (pure)" if delta == 0 else f", δ = {delta:g}") + (
        f" by the {conversion} conversion" if conversion else "")
    if args.json:
        print_json({"mechanism": mechanism.to_dict(), "target_epsilon": args.epsilon, "delta": delta,
                    "conversion": conversion, "compositions": args.compositions, "accounted_epsilon": accounted})
        return 0
    print(f"{args.mechanism} for a target {target} over {args.compositions} composition(s), relation "
          f"{mechanism.relation.value}:")
    field = type(mechanism).noise_field
    print(f"  {field} = {getattr(mechanism, field):.6g} ({type(mechanism).noise_help})")
    print(f"  re-accounted: ε = {accounted:.6g} ≤ {args.epsilon:g}")
    return 0
