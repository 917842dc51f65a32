"""Structure check: does every published value carry exactly the structure its mechanism promises?

The mechanisms' outputs are continuous random values of a fixed shape; the GOE mechanism's are exactly
symmetric matrices, (G + Gᵀ)/2 + (Z + Zᵀ)/√2 being symmetric entry for entry in floating point. A published
value that is not finite, has another shape, or is a GOE release whose entries differ from their transposes
carries structure no noise covers — for the asymmetric GOE release, the antisymmetric part of the raw sums,
published un-noised. Each is an event of probability zero under the recorded mechanism, so the check spends
no false-alarm level.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dpverify.agents.core.billboard import PublishedRelease
from dpverify.checks import FAIL, NOT_RUN, PASS, CheckResult
from dpverify.mechanisms import GOEMechanism
from dpverify.whitebox.result import CHECK_NAMES
from dpverify.whitebox.stacks import stacks

NAME = CHECK_NAMES[-1]


def structure_problems(releases: Sequence[PublishedRelease]) -> list[str]:
    """One line per kind of problem found (the first release of each kind named)."""
    problems: list[str] = []
    all_stacks, unrecorded = stacks(releases)
    if unrecorded:
        r = releases[unrecorded[0]]
        problems.append(f"{len(unrecorded)} release(s) without a recorded mechanism (first: {r.family}, episode "
                        f"{r.episode}, stage {r.stage})")
    for stack in all_stacks:
        shapes = [np.shape(releases[i].value) for i in stack.index]
        wrong = [j for j, shape in enumerate(shapes) if shape != stack.mechanism.output_shape]
        if wrong:
            problems.append(f"{len(wrong)} release(s) of another shape than the mechanism's "
                            f"{stack.mechanism.output_shape} (first: {stack.label(wrong[0])}, {shapes[wrong[0]]})")
            continue
        values = stack.values(releases)
        finite = np.isfinite(values).reshape(len(stack.index), -1).all(axis=1)
        if not finite.all():
            problems.append(f"{int((~finite).sum())} release(s) with non-finite entries (first: "
                            f"{stack.label(int(np.flatnonzero(~finite)[0]))})")
        if isinstance(stack.mechanism, GOEMechanism):
            asymmetric = np.any(values != np.swapaxes(values, -1, -2), axis=(-2, -1)) & finite
            if asymmetric.any():
                first = int(np.flatnonzero(asymmetric)[0])
                differing = int(np.count_nonzero(values[first] != values[first].T)) // 2
                problems.append(f"{int(asymmetric.sum())} GOE release(s) whose entries differ from their transposes "
                                f"(an un-noised antisymmetric part; first: {stack.label(first)}, {differing} pairs)")
    return problems


def check_structure(releases: Sequence[PublishedRelease]) -> CheckResult:
    """The structure check of every release of a run."""
    if not releases:
        return CheckResult(NAME, NOT_RUN, "the agent published nothing")
    problems = structure_problems(releases)
    symmetric = sum(isinstance(r.mechanism, GOEMechanism) for r in releases)
    evidence = {"releases": len(releases), "goe_releases": symmetric, "problems": len(problems)}
    if problems:
        return CheckResult(NAME, FAIL, "; ".join(problems), evidence)
    extra = f", {symmetric} GOE releases exactly symmetric" if symmetric else ""
    return CheckResult(NAME, PASS, f"{len(releases)} releases finite and of the recorded shape{extra}", evidence)
