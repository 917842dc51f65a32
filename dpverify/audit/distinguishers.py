"""Features a threshold test can be applied to, and the learners that propose them on a selection split.

A *feature* maps a batch of mechanism outputs, shape (n, ...), to one real score per trial. Threshold
tests on scores are the distinguishers of the audit (Jagielski et al. 2020; Nasr et al. 2021): a scalar
output is thresholded directly; a vector or a transcript is first reduced to a score by a projection
learned on the *selection split only*:

- single coordinates (the most separated ones on the selection split);
- the likelihood-ratio direction of two Gaussians with a pooled covariance, w = (Σ + λI)⁻¹(m₁ − m₀)
  (Fisher's linear discriminant; it is the exact Neyman–Pearson statistic for a Gaussian mechanism);
- the Gaussian log-likelihood ratio with separate covariances (quadratic; catches changes in spread),
  proposed only when some coordinate's spread clearly differs between the two datasets;
- a logistic-regression direction fitted by Newton's method in numpy;
- for a transcript of r ≥ 2 releases, shape (n, r, ...), all of the above applied to the differences of
  consecutive releases: with reused noise the difference is noise-free and separates perfectly.

Learned features are fitted on one half of the selection split and their thresholds chosen on the
other half (see :mod:`dpverify.audit.engine`): scored on their own training data, flexible features
(the quadratic one above all) look better than they are and would win the selection for that reason.

Features are frozen, picklable objects so that evaluation chunks can run on other processes or machines.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: The two views of an output batch a feature can read.
VIEWS: tuple[str, ...] = ("release", "differences")


def view(outputs: np.ndarray, which: str) -> np.ndarray:
    """The (n, p) matrix a feature reads: the flattened releases, or consecutive differences.

    Outputs with ndim ≥ 3 are transcripts (n, r, ...); "differences" is x[:, k+1] − x[:, k].
    """
    n = outputs.shape[0]
    if which == "release":
        return outputs.reshape(n, -1)
    return (outputs[:, 1:] - outputs[:, :-1]).reshape(n, -1)


def available_views(output_shape: tuple[int, ...]) -> tuple[str, ...]:
    """The views that make sense for outputs of this per-trial shape."""
    if len(output_shape) >= 2 and output_shape[0] >= 2:
        return VIEWS
    return ("release",)


def learns(output_shape: tuple[int, ...]) -> bool:
    """Whether features for outputs of this shape are learned from data (anything but a scalar)."""
    return int(np.prod(output_shape, dtype=np.int64)) > 1


@dataclass(frozen=True, eq=False)
class LinearFeature:
    """score = ⟨w, x⟩ on one view of the outputs.

    With one coordinate and w = 1 the scores are a view of the outputs (x · 1 = x exactly): callers
    must not write to them.
    """

    name: str
    which: str
    weights: np.ndarray = field(repr=False)

    def scores(self, outputs: np.ndarray) -> np.ndarray:
        z = view(outputs, self.which)
        if z.shape[1] == 1:  # one coordinate: the same values as the matrix-vector product, without it
            w = float(self.weights[0])
            return z[:, 0] if w == 1.0 else z[:, 0] * w  # x·1 = x exactly (a view: callers must not write)
        return z @ self.weights


@dataclass(frozen=True, eq=False)
class QuadraticFeature:
    """score = xᵀAx + bᵀx on one view of the outputs (a Gaussian log-likelihood ratio up to a constant)."""

    name: str
    which: str
    quadratic: np.ndarray = field(repr=False)
    linear: np.ndarray = field(repr=False)

    def scores(self, outputs: np.ndarray) -> np.ndarray:
        z = view(outputs, self.which)
        return np.einsum("ij,jk,ik->i", z, self.quadratic, z) + z @ self.linear


Feature = LinearFeature | QuadraticFeature


def _ridge(cov: np.ndarray) -> np.ndarray:
    """Covariance plus a small ridge, so that noise-free coordinates give huge but finite weights."""
    p = cov.shape[0]
    scale = float(np.trace(cov)) / p if p else 0.0
    lam = 1e-9 * scale if scale > 0 else 1e-12
    return cov + lam * np.eye(p)


def _covariance(z: np.ndarray) -> np.ndarray:
    return np.atleast_2d(np.cov(z, rowvar=False))


def _lda(z0: np.ndarray, z1: np.ndarray) -> np.ndarray:
    """Fisher's direction Σ⁻¹(m₁ − m₀) with the pooled covariance Σ; with fewer rows than coordinates the
    independence rule diag(Σ)⁻¹(m₁ − m₀) instead: the pooled covariance then has rank below p, its inverse
    fits the rows' noise (Bickel & Levina 2004, "Some theory for Fisher's linear discriminant function,
    'naive Bayes', and some alternatives when there are many more variables than observations", Bernoulli
    10(6)), and the p × p matrix need never be built (a one-run audit's view may have 10⁴+ coordinates)."""
    gap = z1.mean(axis=0) - z0.mean(axis=0)
    if len(z0) + len(z1) <= z0.shape[1]:
        variance = (z0.var(axis=0, ddof=1) + z1.var(axis=0, ddof=1)) / 2.0  # the caller has 2+ rows a side
        scale = float(variance.mean())
        return gap / (variance + (1e-9 * scale if scale > 0 else 1e-12))
    pooled = (_covariance(z0) + _covariance(z1)) / 2.0
    return np.linalg.solve(_ridge(pooled), gap)


def _qda(z0: np.ndarray, z1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    inv0 = np.linalg.inv(_ridge(_covariance(z0)))
    inv1 = np.linalg.inv(_ridge(_covariance(z1)))
    quadratic = 0.5 * (inv0 - inv1)
    linear = inv1 @ z1.mean(axis=0) - inv0 @ z0.mean(axis=0)
    return quadratic, linear


def _logistic(z0: np.ndarray, z1: np.ndarray, max_rows: int = 50_000, iterations: int = 25) -> np.ndarray:
    """L2-penalised logistic regression by Newton's method, on standardised features; returns w on raw x.

    With fewer rows than coordinates (n < p, e.g. a one-run audit's pilot: a hundred canary slots of
    thousands of released values each) the same Newton iterates are computed in the span of the rows
    (:func:`_logistic_newton_dual`), at O(n²p) per fit instead of O(p³) per iteration.
    """
    z0 = z0[:max_rows]
    z1 = z1[:max_rows]
    x = np.vstack([z0, z1])
    y = np.concatenate([np.zeros(len(z0)), np.ones(len(z1))])
    centre = x.mean(axis=0)
    spread = x.std(axis=0)
    spread[spread <= 0] = 1.0
    xs = (x - centre) / spread
    newton = _logistic_newton_dual if xs.shape[0] < xs.shape[1] else _logistic_newton
    return newton(xs, y, iterations) / spread


#: The logistic regression's ridge per row (λ: the penalty is λ·n·‖w‖²/2, the intercept unpenalised).
_LOGISTIC_PENALTY = 1e-3
#: Added to the Newton Hessian's diagonal (the intercept's too), so that it is always invertible.
_HESSIAN_RIDGE = 1e-12


def _logistic_newton(xs: np.ndarray, y: np.ndarray, iterations: int) -> np.ndarray:
    """Newton's method for the penalised logistic regression on rows ``xs`` (an intercept is added); the
    weights without the intercept."""
    xs = np.hstack([xs, np.ones((len(xs), 1))])
    p = xs.shape[1]
    penalty = _LOGISTIC_PENALTY * np.eye(p)
    penalty[-1, -1] = 0.0
    beta = np.zeros(p)
    for _ in range(iterations):
        prob = 1.0 / (1.0 + np.exp(-np.clip(xs @ beta, -50, 50)))
        grad = xs.T @ (y - prob) - penalty @ beta * len(xs)
        hess = (xs * (prob * (1 - prob))[:, None]).T @ xs + penalty * len(xs) + _HESSIAN_RIDGE * np.eye(p)
        step = np.linalg.solve(hess, grad)
        beta = beta + step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return beta[:-1]


def _logistic_newton_dual(xs: np.ndarray, y: np.ndarray, iterations: int) -> np.ndarray:
    """The Newton iterates of :func:`_logistic_newton` for n < p rows, computed with n + 1 unknowns.

    Write the weights as w = Xᵀa (they start at 0). The gradient Xᵀ(y − π) − λn·w and the Hessian
    XᵀΠX + c·I (c = λn + ridge, Π = diag π(1 − π), coupled to the intercept b by XᵀΠ1) map the row
    space of X to itself, so each Newton step is s_w = Xᵀs_a with
    (ΠG + cI)·s_a + Π1·s_b = y − π − λn·a and 1ᵀΠG·s_a + (1ᵀΠ1 + ridge)·s_b = 1ᵀ(y − π), G = XXᵀ:
    the primal step exactly, up to rounding, so the fitted weights are the same.
    """
    n = xs.shape[0]
    gram = xs @ xs.T
    lam = _LOGISTIC_PENALTY * n
    a = np.zeros(n)
    b = 0.0
    for _ in range(iterations):
        prob = 1.0 / (1.0 + np.exp(-np.clip(gram @ a + b, -50, 50)))
        weight = prob * (1 - prob)
        residual = y - prob
        system = np.empty((n + 1, n + 1))
        system[:n, :n] = weight[:, None] * gram + (lam + _HESSIAN_RIDGE) * np.eye(n)
        system[:n, n] = weight
        system[n, :n] = weight @ gram
        system[n, n] = weight.sum() + _HESSIAN_RIDGE
        rhs = np.concatenate([residual - lam * a, [residual.sum()]])
        step = np.linalg.solve(system, rhs)
        a = a + step[:n]
        b = b + float(step[n])
        largest = max(float(np.max(np.abs(xs.T @ step[:n]))), abs(float(step[n])))
        if largest < 1e-8:
            break
    return xs.T @ a


def _spreads_differ(z0: np.ndarray, z1: np.ndarray, z_threshold: float = 4.0) -> bool:
    """Whether some coordinate's variance clearly differs between D and D′ (log-variance ratio > 4 s.e.).

    Only then is the quadratic likelihood ratio proposed: when the spreads agree its estimated quadratic
    part is pure noise, which lowers its power while giving it more chances to win the selection.
    """
    n0, n1 = len(z0), len(z1)
    if min(n0, n1) < 3:
        return False
    v0, v1 = z0.var(axis=0, ddof=1), z1.var(axis=0, ddof=1)
    ok = (v0 > 0) & (v1 > 0)
    if np.any((v0 > 0) != (v1 > 0)):
        return True
    if not np.any(ok):
        return False
    se = np.sqrt(2.0 / (n0 - 1) + 2.0 / (n1 - 1))
    return bool(np.max(np.abs(np.log(v1[ok] / v0[ok]))) > z_threshold * se)


def propose_features(x0: np.ndarray, x1: np.ndarray, max_coordinates: int = 8) -> list[Feature]:
    """Candidate features learned from selection outputs x0 (dataset D) and x1 (dataset D′)."""
    features: list[Feature] = []
    for which in available_views(x0.shape[1:]):
        z0, z1 = view(x0, which), view(x1, which)
        p = z0.shape[1]
        label = "output" if which == "release" else "consecutive difference"
        if p == 1:
            features.append(LinearFeature(label, which, np.ones(1)))
            continue
        spread = np.sqrt((z0.var(axis=0) + z1.var(axis=0)) / 2.0)
        gap = np.abs(z1.mean(axis=0) - z0.mean(axis=0))
        with np.errstate(divide="ignore", invalid="ignore"):
            separation = np.where(spread > 0, gap / np.where(spread > 0, spread, 1.0), np.where(gap > 0, np.inf, 0.0))
        for j in np.argsort(-separation, kind="stable")[:max_coordinates]:
            w = np.zeros(p)
            w[j] = 1.0
            features.append(LinearFeature(f"{label} coordinate {int(j)}", which, w))
        if min(len(z0), len(z1)) < 2:
            continue  # too few selection trials to estimate a covariance: coordinates only
        features.append(LinearFeature(f"{label}: linear likelihood-ratio direction", which, _lda(z0, z1)))
        features.append(LinearFeature(f"{label}: logistic-regression direction", which, _logistic(z0, z1)))
        if p <= 64 and _spreads_differ(z0, z1):
            quadratic, linear = _qda(z0, z1)
            features.append(QuadraticFeature(f"{label}: Gaussian log-likelihood ratio", which, quadratic, linear))
    return features
