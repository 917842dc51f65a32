"""``dpverify calibrate --mechanism``: each mechanism calibrated by each route it takes, re-accounted at the target;
options of the other mode and routes a mechanism does not take are one-line errors (exit 2)."""

from __future__ import annotations

import json

import pytest

from dpverify.calibrate_mechanism import composed_epsilon
from dpverify.cli import main
from dpverify.mechanisms import mechanism_from_dict


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("mechanism, conversion, delta", [
    ("gaussian", "exact", 1e-5), ("gaussian", "cks", 1e-5), ("goe", "exact", 1e-5), ("laplace", "pure", 0.0),
    ("laplace", "cks", 1e-5), ("laplace", "bun-steinke", 1e-5), ("randomized-response", "pure", 0.0),
    ("randomized-response", "exact", 1e-5),
])
def test_each_route_meets_the_target_and_is_tight(capsys, mechanism, conversion, delta) -> None:
    code, out, err = run(["calibrate", "--mechanism", mechanism, "--conversion", conversion, "--epsilon", "0.8",
                          "--compositions", "6", "--dim", "3", "--json"], capsys)
    assert code == 0 and err == ""
    payload = json.loads(out)
    released = mechanism_from_dict(payload["mechanism"])
    assert payload["delta"] == delta and released.dim == 3
    assert payload["conversion"] == (conversion if conversion in ("cks", "bun-steinke") else
                                     ("exact" if mechanism in ("gaussian", "goe") else None))
    again = composed_epsilon(released, delta, 6, payload["conversion"])  # re-accounted here
    assert again == payload["accounted_epsilon"] <= 0.8 and again >= 0.8 * (1 - 1e-9)


def test_the_pure_laplace_scale_is_n_over_epsilon(capsys) -> None:
    code, out, _ = run(["calibrate", "--mechanism", "laplace", "--compositions", "10"], capsys)
    assert code == 0 and "target ε = 1 (pure)" in out and "scale = 10 " in out  # pure is Laplace's default route


@pytest.mark.parametrize("argv, message", [
    (["--mechanism", "laplace", "--conversion", "exact"], "--conversion must be one of pure, cks, bun-steinke"),
    (["--mechanism", "gaussian", "--conversion", "pure"], "--conversion must be one of exact, cks, bun-steinke"),
    (["--mechanism", "cauchy"], "--mechanism must be one of gaussian, goe, laplace, randomized-response"),
    (["--mechanism", "laplace", "--sensitivity", "derived"], "--sensitivity must be a number"),
    (["--mechanism", "randomized-response", "--sensitivity", "1.5"], "--sensitivity must be an integer"),
    (["--mechanism", "gaussian", "--horizon", "5"], "--horizon is a schedule's option"),
    (["--mechanism", "gaussian", "--write-ledger", "x.json"], "--write-ledger is a schedule's option"),
    (["--compositions", "3"], "--compositions is --mechanism's option"),
    (["--mechanism", "laplace", "--compositions", "0"], "compositions"),
])
def test_bad_input_is_one_line_naming_the_option(capsys, argv, message) -> None:
    code, out, err = run(["calibrate", *argv], capsys)
    assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1
