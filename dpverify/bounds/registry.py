"""The registry of published regret bounds for private (and non-private) RL.

Each :class:`BoundEntry` records one bound *exactly as a paper states it* — a sympy expression over
the symbols of :mod:`dpverify.bounds.symbols`, with the hidden constants and (for Õ/Ω̃) the hidden
polylogarithmic factors of the statement left out, and the logarithms the statement does print kept.
Each entry names the document, the place in it and, for the two papers this project is built on
(:data:`PAPER_TEXTS`: Sahu 2025 and Liao, He & Gu 2021), the 1-based lines of their plain-text
renderings on which the quoted statement appears verbatim, and carries a status note.

:data:`REGISTRY` is an immutable mapping from a stable machine name (``"algorithm/statement"``) to
its entry; :data:`CLAIMS` lists the "A improves over B" statements of the papers that
:mod:`dpverify.bounds.consistency` checks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType

import sympy

from dpverify._validate import one_of
from dpverify.bounds.symbols import VARIABLES, A, H, K, S, T, d, delta, epsilon
from dpverify.errors import InvalidParameterError

SETTINGS: tuple[str, ...] = (
    "tabular",
    "linear MDP",
    "linear mixture MDP",
    "contextual bandit",
    "multi-armed bandit",
    "general function approximation",
)
PRIVACY_MODELS: tuple[str, ...] = ("none", "JDP", "LDP")
KINDS: tuple[str, ...] = ("upper", "lower")
NOTATIONS: tuple[str, ...] = ("Õ", "Ω", "Ω̃")

#: Citation key → title of the papers whose plain-text renderings the ``Source.lines`` refer to
#: (the title is the first line of each text, so a test can find the texts where they are present).
SAHU_2025 = "sahu-2025"
LIAO_2021 = "liao-2021"
PAPER_TEXTS: Mapping[str, str] = MappingProxyType(
    {
        SAHU_2025: "Towards Optimal Differentially Private Regret Bounds in Linear MDPs",
        LIAO_2021: "Locally Differentially Private Reinforcement Learning for Linear Mixture Markov Decision Processes",
    }
)

_NAME = re.compile(r"^[a-z0-9][a-z0-9+.\-]*/[a-z0-9][a-z0-9+.\-]*$")
_R = sympy.Rational


@dataclass(frozen=True)
class Source:
    """Where a statement was read.

    Attributes:
        document: a short citation of the document ("Sahu 2025", "arXiv:2504.09339v2").
        location: where in the document ("abstract", "Theorem 3.2", "Section 5 (Conclusions)").
        text: the key in :data:`PAPER_TEXTS` of the paper text the line numbers refer to (``None``
            for a document whose text was not checked line by line; then ``lines`` is empty).
        lines: 1-based line numbers of that text on which ``quote`` appears verbatim.
        quote: the statement as printed (LaTeX source), used to re-verify the lines.
    """

    document: str
    location: str
    text: str | None
    lines: tuple[int, ...]
    quote: str

    def __post_init__(self) -> None:
        if not self.document or not self.location or not self.quote:
            raise InvalidParameterError("source", "must name a document, a location and a quote", self)
        if self.text is not None and self.text not in PAPER_TEXTS:
            raise InvalidParameterError("source.text", f"must be one of {', '.join(PAPER_TEXTS)} or None", self.text)
        if self.text is None and self.lines:
            raise InvalidParameterError("source.lines", "must be empty when no paper text is named", self.lines)
        if self.text is not None and (not self.lines or any(n < 1 for n in self.lines)):
            raise InvalidParameterError("source.lines", "must be 1-based line numbers of the text", self.lines)


@dataclass(frozen=True)
class BoundEntry:
    """One regret bound as stated in one place.

    Attributes:
        name: stable machine name, ``"<algorithm>/<statement>"``, lower case.
        algorithm: the algorithm's name as the paper writes it.
        reference: the work that proves the bound (not necessarily the document quoting it).
        setting: one of :data:`SETTINGS`.
        privacy: the privacy model, one of :data:`PRIVACY_MODELS`.
        privacy_definition: the exact guarantee ("ε-JDP", "(ε, δ)-LDP", "none").
        expression: the bound inside the notation, exactly as stated.
        stated: the statement as printed (LaTeX), for display.
        source: where it was read and verified.
        kind: ``"upper"`` (the default) or ``"lower"``.
        notation: the asymptotic notation of the statement (Õ, the default, Ω or Ω̃).
        base: machine name of the non-private counterpart whose regret the non-private term of
            this bound should reproduce, if the registry holds it.
        note: status note (discrepancies, later corrections, disputes).
    """

    name: str
    algorithm: str
    reference: str
    setting: str
    privacy: str
    privacy_definition: str
    expression: sympy.Expr
    stated: str
    source: Source
    kind: str = "upper"
    notation: str = "Õ"
    base: str | None = None
    note: str = ""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidParameterError("name", "must look like 'algorithm/statement' in lower case", self.name)
        one_of("setting", self.setting, SETTINGS)
        one_of("privacy", self.privacy, PRIVACY_MODELS)
        one_of("kind", self.kind, KINDS)
        one_of("notation", self.notation, NOTATIONS)
        if not isinstance(self.expression, sympy.Expr):
            raise InvalidParameterError("expression", "must be a sympy expression", self.expression)
        unknown = self.expression.free_symbols - set(VARIABLES.values())
        if unknown:
            raise InvalidParameterError(
                "expression", f"may only use the symbols {', '.join(VARIABLES)}", sorted(map(str, unknown))
            )
        if self.privacy == "none" and self.expression.has(epsilon):
            raise InvalidParameterError("expression", "must not depend on epsilon for a non-private bound", self.name)
        if (self.kind == "upper") != (self.notation == "Õ"):
            raise InvalidParameterError(
                "notation", "must be Õ for an upper bound and Ω or Ω̃ for a lower one", self.notation
            )

    @property
    def symbols(self) -> tuple[str, ...]:
        """Names of the variables the expression uses, in the order of :data:`VARIABLES`."""
        free = self.expression.free_symbols
        return tuple(name for name, sym in VARIABLES.items() if sym in free)


@dataclass(frozen=True)
class Claim:
    """A published claim that one bound improves over another ("A surpasses B")."""

    name: str
    improver: str
    baseline: str
    source: Source

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise InvalidParameterError("name", "must look like 'claim/...' in lower case", self.name)


# --------------------------------------------------------------------------------------------
# Shared pieces of the statements.

_LSVI_UCB_TERM = sympy.sqrt(d**3 * H**4 * K)  # Sahu 2025: Õ(√(d³H⁴K)), the cost of LSVI-UCB
_UCRL_VTR_JDP_TERM = sympy.sqrt(d**2 * H**4 * K)  # Sahu 2025 line 31
_LSVI_UCBPP_TERM = d * sympy.sqrt(H**3 * K)  # Sahu 2025 abstract / Theorem 3.2: d√(H³K)

_HE_ZHOU_NOTE = (
    "He & Zhou 2026 (arXiv:2605.07049v1, abstract) report 'fundamental gaps in recent results for "
    "private RL with linear function approximation' and place the state of the art for the linear "
    "case at Õ(K^{3/5}); this √K-type private linear-MDP bound is among the results that statement "
    "concerns (the abstract does not list the papers)."
)

#: The statements of DP-LSVI-UCB++ (Sahu 2025) share all but the bound and where it was read.
_dp_lsvi_ucbpp = partial(BoundEntry, algorithm="DP-LSVI-UCB++", reference="Sahu 2025 (arXiv:2504.09339v1)",
                         setting="linear MDP", privacy="JDP", privacy_definition="(ε, δ′)-JDP",
                         base="lsvi-ucb++/sahu-2025")

_ENTRIES: tuple[BoundEntry, ...] = (
    # ---------------------------------------------------------------- non-private linear MDP
    BoundEntry(
        name="lsvi-ucb/sahu-2025",
        algorithm="LSVI-UCB",
        reference="Jin et al. 2020",
        setting="linear MDP",
        privacy="none",
        privacy_definition="none",
        expression=_LSVI_UCB_TERM,
        stated=r"\tilde{O}(\sqrt{d^{3}H^{4}K})",
        source=Source("Sahu 2025", "abstract", SAHU_2025, (5,), r"\tilde{O}(\sqrt{d^{3}H^{4}K})$"),
        note="Stated in K; Liao et al. 2021 states the same bound in T (entry lsvi-ucb/liao-2021).",
    ),
    BoundEntry(
        name="lsvi-ucb/liao-2021",
        algorithm="LSVI-UCB",
        reference="Jin et al. 2020",
        setting="linear MDP",
        privacy="none",
        privacy_definition="none",
        expression=sympy.sqrt(d**3 * H**3 * T),
        stated=r"\widetilde{\mathcal{O}}(\sqrt{d^{3}H^{3}T})",
        source=Source(
            "Liao et al. 2021", "related work", LIAO_2021, (23,), r"\widetilde{\mathcal{O}}(\sqrt{d^{3}H^{3}T})"
        ),
        note="Equal to lsvi-ucb/sahu-2025 under T = KH.",
    ),
    BoundEntry(
        name="lsvi-ucb++/sahu-2025",
        algorithm="LSVI-UCB++",
        reference="He et al. 2023",
        setting="linear MDP",
        privacy="none",
        privacy_definition="none",
        expression=H * d * sympy.sqrt(T),
        stated=r"\tilde{O}(HD\sqrt{T})",
        source=Source("Sahu 2025", "abstract; Section 1", SAHU_2025, (5, 15), r"\tilde{O}(HD\sqrt{T})"),
        note=(
            "Printed 'HD√T' with a capital D, read here as the feature dimension d; under T = KH this "
            "is d√(H³K), the non-private term of DP-LSVI-UCB++."
        ),
    ),
    # ---------------------------------------------------------------- private linear MDP (JDP)
    BoundEntry(
        name="luyo-2021/linear-mdp",
        algorithm="Privacy-Preserving LSVI-UCB Through Batching",
        reference="Luyo et al. 2021",
        setting="linear MDP",
        privacy="JDP",
        privacy_definition="JDP (as cited in Sahu 2025)",
        expression=_LSVI_UCB_TERM + H ** _R(11, 5) * d ** _R(8, 5) * K ** _R(3, 5) / epsilon ** _R(2, 5),
        stated=r"\tilde{O}(\sqrt{d^{3}H^{4}K}+H^{11/5}d^{8/5}K^{3/5}/\epsilon^{2/5})",
        source=Source(
            "Sahu 2025",
            "abstract; Section 1; Section 1.1",
            SAHU_2025,
            (5, 13, 33),
            r"\sqrt{d^{3}H^{4}K}+H^{11/5}d^{8/5}K^{3/5}/\epsilon^{2/5}",
        ),
        base="lsvi-ucb/sahu-2025",
        note="The only private linear-MDP bound here with a K^{3/5} privacy term, the rate He & Zhou 2026 match.",
    ),
    BoundEntry(
        name="ngo-2022/linear-mdp",
        algorithm="Private LSVI-UCB with adaptive batching",
        reference="Ngo et al. 2022",
        setting="linear MDP",
        privacy="JDP",
        privacy_definition="JDP (as cited in Sahu 2025)",
        expression=_LSVI_UCB_TERM + H**3 * d ** _R(5, 4) * K ** _R(1, 2) / epsilon ** _R(1, 2),
        stated=r"\tilde{O}(\sqrt{d^{3}H^{4}K}+H^{3}d^{5/4}K^{1/2}/\epsilon^{1/2})",
        source=Source(
            "Sahu 2025",
            "abstract; Section 1; Section 1.1",
            SAHU_2025,
            (5, 13, 33),
            r"\sqrt{d^{3}H^{4}K}+H^{3}d^{5/4}K^{1/2}/\epsilon^{1/2}",
        ),
        base="lsvi-ucb/sahu-2025",
        note=_HE_ZHOU_NOTE,
    ),
    _dp_lsvi_ucbpp(
        name="dp-lsvi-ucb++/abstract",
        expression=_LSVI_UCBPP_TERM + H ** _R(18, 4) * d ** _R(7, 6) * K ** _R(1, 2) / epsilon,
        stated=r"\tilde{O}\left(d\sqrt{H^{3}K}+H^{18/4}d^{7/6}K^{1/2}/\epsilon\right)",
        source=Source(
            "Sahu 2025",
            "abstract; Section 1 (Our contributions)",
            SAHU_2025,
            (5, 19),
            r"d\sqrt{H^{3}K}+H^{18/4}d^{7/6}K^{1/2}/\epsilon",
        ),
        note=(
            "H^{18/4} = H^{9/2} is printed unreduced. Disagrees with the conclusion of the same paper "
            "(dp-lsvi-ucb++/conclusion); the later arXiv version states H^{15/4} "
            "(dp-lsvi-ucb++/arxiv-v2). " + _HE_ZHOU_NOTE
        ),
    ),
    _dp_lsvi_ucbpp(
        name="dp-lsvi-ucb++/theorem-3.2",
        expression=_LSVI_UCBPP_TERM + H ** _R(18, 4) * d ** _R(7, 6) * K ** _R(1, 2) * sympy.log(1 / delta) / epsilon,
        stated=r"\tilde{O}\left(d\sqrt{H^{3}K}+\frac{H^{18/4}d^{7/6}K^{1/2}\log(1/\delta^{\prime})}{\epsilon}\right)",
        source=Source(
            "Sahu 2025",
            "Theorem 3.2",
            SAHU_2025,
            (259,),
            r"d\sqrt{H^{3}K}+\frac{H^{18/4}d^{7/6}K^{1/2}\log(1/\delta^{\prime})}{\epsilon}",
        ),
        note=(
            "δ here is the privacy parameter δ′ of Theorem 3.1. Holds with probability ≥ 1 − 7δ for the "
            "confidence radii of Theorem 3.2 (see dpverify.bounds.constants). " + _HE_ZHOU_NOTE
        ),
    ),
    _dp_lsvi_ucbpp(
        name="dp-lsvi-ucb++/lemma-c.5",
        expression=_LSVI_UCBPP_TERM
        + H ** _R(18, 4) * d ** _R(7, 6) * K ** _R(1, 2) * sympy.log(10 * d * K * H / delta) / epsilon,
        stated=r"\tilde{O}\left(d\sqrt{H^{3}K}+\frac{H^{18/4}d^{7/6}K^{1/2}\log(10dKH/\delta)}{\epsilon}\right)",
        source=Source(
            "Sahu 2025",
            "Lemma C.5 and its proof (Appendix C)",
            SAHU_2025,
            (799, 813),
            r"d\sqrt{H^{3}K}+\frac{H^{18/4}d^{7/6}K^{1/2}\log(10dKH/\delta)}{\epsilon}",
        ),
        note=(
            "The appendix version of Theorem 3.2: same rates, but the logarithm is log(10dKH/δ) with δ "
            "the failure probability of the regret bound (that of L in Lemma A.1), not the privacy δ′."
        ),
    ),
    _dp_lsvi_ucbpp(
        name="dp-lsvi-ucb++/conclusion",
        expression=sympy.sqrt(H**3 * K) + H ** _R(19, 8) * d ** _R(15, 8) * K ** _R(3, 4) / epsilon,
        stated=r"\tilde{O}\left(\sqrt{H^{3}K}+H^{19/8}d^{15/8}K^{3/4}/\epsilon\right)",
        source=Source(
            "Sahu 2025",
            "Section 5 (Conclusions and future works)",
            SAHU_2025,
            (279,),
            r"\sqrt{H^{3}K}+H^{19/8}d^{15/8}K^{3/4}/\epsilon",
        ),
        note=(
            "Disagrees with the abstract and Theorem 3.2 of the same paper in every exponent of the "
            "privacy term and drops the factor d of the non-private term."
        ),
    ),
    _dp_lsvi_ucbpp(
        name="dp-lsvi-ucb++/arxiv-v2",
        reference="Sahu 2025, later version (arXiv:2504.09339v2)",
        expression=_LSVI_UCBPP_TERM + H ** _R(15, 4) * d ** _R(7, 6) * K ** _R(1, 2) / epsilon,
        stated=r"\widetilde{O}(d \sqrt{H^3 K} + H^{15/4} d^{7/6} K^{1/2} / \epsilon)",
        source=Source(
            "arXiv:2504.09339v2",
            "abstract",
            None,
            (),
            r"H^{15/4} d^{7/6} K^{1/2} / \epsilon",
        ),
        note="A third variant: H^{15/4} instead of H^{18/4}. " + _HE_ZHOU_NOTE,
    ),
    # ---------------------------------------------------------------- linear mixture MDP
    BoundEntry(
        name="ucrl-vtr/liao-2021",
        algorithm="UCRL-VTR",
        reference="Jia et al. 2020; Ayoub et al. 2020",
        setting="linear mixture MDP",
        privacy="none",
        privacy_definition="none",
        expression=d * sympy.sqrt(H**3 * T),
        stated=r"\widetilde{\mathcal{O}}(d\sqrt{H^{3}T})",
        source=Source("Liao et al. 2021", "related work", LIAO_2021, (23,), r"\widetilde{\mathcal{O}}(d\sqrt{H^{3}T})"),
        note="Under T = KH equals √(d²H⁴K), the non-private term of the JDP linear-mixture bounds.",
    ),
    BoundEntry(
        name="jdp-ucrl-vtr/luyo-2021",
        algorithm="JDP-UCRL-VTR",
        reference="Luyo et al. 2021",
        setting="linear mixture MDP",
        privacy="JDP",
        privacy_definition="JDP (as cited in Sahu 2025)",
        expression=_UCRL_VTR_JDP_TERM + H ** _R(9, 4) * d ** _R(3, 4) * K ** _R(1, 2) / epsilon ** _R(1, 2),
        stated=r"\tilde{O}(\sqrt{d^{2}H^{4}K}+H^{9/4}d^{3/4}K^{1/2}/\epsilon^{1/2})",
        source=Source(
            "Sahu 2025",
            "Section 1.1 (Linear Mixture MDPs)",
            SAHU_2025,
            (31,),
            r"\sqrt{d^{2}H^{4}K}+H^{9/4}d^{3/4}K^{1/2}/\epsilon^{1/2}",
        ),
        base="ucrl-vtr/liao-2021",
    ),
    BoundEntry(
        name="private-linopt-vi/zhou-2022",
        algorithm="Private-LinOpt-VI",
        reference="Zhou 2022",
        setting="linear mixture MDP",
        privacy="JDP",
        privacy_definition="JDP (as cited in Sahu 2025)",
        expression=_UCRL_VTR_JDP_TERM + H ** _R(5, 2) * d ** _R(7, 4) * K ** _R(1, 2) / epsilon ** _R(1, 2),
        stated=r"\tilde{O}(\sqrt{d^{2}H^{4}K}+H^{5/2}d^{7/4}K^{1/2}/\epsilon^{1/2})",
        source=Source(
            "Sahu 2025",
            "Section 1.1 (Linear Mixture MDPs)",
            SAHU_2025,
            (31,),
            r"\sqrt{d^{2}H^{4}K}+H^{5/2}d^{7/4}K^{1/2}/\epsilon^{1/2}",
        ),
        base="ucrl-vtr/liao-2021",
        note=(
            "Sahu 2025 says it 'improved on' JDP-UCRL-VTR, yet its privacy term has larger exponents of "
            "H (5/2 vs 9/4) and d (7/4 vs 3/4) at the same K and ε rates (see the claim checks)."
        ),
    ),
    BoundEntry(
        name="ldp-ucrl-vtr/upper",
        algorithm="LDP-UCRL-VTR",
        reference="Liao et al. 2021",
        setting="linear mixture MDP",
        privacy="LDP",
        privacy_definition="(ε, δ)-LDP",
        expression=d ** _R(5, 4)
        * H ** _R(7, 4)
        * T ** _R(3, 4)
        * sympy.log(1 / delta) ** _R(1, 4)
        / sympy.sqrt(epsilon),
        stated=r"\widetilde{\mathcal{O}}(d^{5/4}H^{7/4}T^{3/4}\left(\log(1/\delta)\right)^{1/4}\sqrt{1/\varepsilon})",
        source=Source(
            "Liao et al. 2021",
            "Section 1 (contributions); Section 7 (conclusion)",
            LIAO_2021,
            (17, 37),
            r"d^{5/4}H^{7/4}T^{3/4}\left(\log(1/\delta)\right)^{1/4}\sqrt{1/\varepsilon}",
        ),
        base="ucrl-vtr/liao-2021",
        note="A single term: the whole bound is the privacy cost (it does not reduce to UCRL-VTR as ε → ∞).",
    ),
    BoundEntry(
        name="ldp-ucrl-vtr/lower-linear-mixture",
        algorithm="any ε-LDP algorithm (lower bound of Liao et al. 2021)",
        reference="Liao et al. 2021",
        setting="linear mixture MDP",
        privacy="LDP",
        privacy_definition="ε-LDP",
        kind="lower",
        notation="Ω",
        expression=d * H * sympy.sqrt(T) / (sympy.exp(epsilon) * (sympy.exp(epsilon) - 1)),
        stated=r"\Omega(dH\sqrt{T}/\left(e^{\varepsilon}(e^{\varepsilon}-1)\right))",
        source=Source(
            "Liao et al. 2021",
            "Section 1 (contributions); Section 7 (conclusion)",
            LIAO_2021,
            (21, 37),
            r"\Omega(dH\sqrt{T}/\left(e^{\varepsilon}(e^{\varepsilon}-1)\right))",
        ),
        note="For pure ε-LDP; the upper bound ldp-ucrl-vtr/upper is for (ε, δ)-LDP.",
    ),
    BoundEntry(
        name="ldp-ucrl-vtr/lower-contextual-bandit",
        algorithm="any ε-LDP algorithm (lower bound of Liao et al. 2021)",
        reference="Liao et al. 2021",
        setting="contextual bandit",
        privacy="LDP",
        privacy_definition="ε-LDP",
        kind="lower",
        notation="Ω",
        expression=d * sympy.sqrt(T) / (sympy.exp(epsilon) * (sympy.exp(epsilon) - 1)),
        stated=r"\Omega(d\sqrt{T}/\left(e^{\varepsilon}(e^{\varepsilon}-1)\right))",
        source=Source(
            "Liao et al. 2021",
            "Section 1 (contributions)",
            LIAO_2021,
            (21,),
            r"\Omega(d\sqrt{T}/\left(e^{\varepsilon}(e^{\varepsilon}-1)\right))",
        ),
        note="Contextual linear bandits (H = 1), a by-product of the linear-mixture lower bound.",
    ),
    # ---------------------------------------------------------------- tabular
    BoundEntry(
        name="pucb/vietri-2020",
        algorithm="PUCB",
        reference="Vietri et al. 2020",
        setting="tabular",
        privacy="JDP",
        privacy_definition="ε-JDP",
        expression=sympy.sqrt(H**4 * S * A * T) + S * A * H**3 * (S + H) / epsilon,
        stated=r"\widetilde{\mathcal{O}}(\sqrt{H^{4}SAT}+SAH^{3}(S+H)/\varepsilon)",
        source=Source(
            "Liao et al. 2021",
            "Section 1; related work",
            LIAO_2021,
            (7, 25),
            r"\widetilde{\mathcal{O}}(\sqrt{H^{4}SAT}+SAH^{3}(S+H)/\varepsilon)",
        ),
        note="Sahu 2025 cites Vietri et al. 2020 (line 27) without a rate; the rate is from Liao et al. 2021.",
    ),
    BoundEntry(
        name="garcelon-2020/upper",
        algorithm="LDP optimistic algorithm of Garcelon et al.",
        reference="Garcelon et al. 2020",
        setting="tabular",
        privacy="LDP",
        privacy_definition="LDP (as cited in Liao et al. 2021)",
        expression=sympy.Max(H ** _R(3, 2) * S**2 * A * sympy.sqrt(T) / epsilon, H * S * sympy.sqrt(A * T)),
        stated=r"\widetilde{\mathcal{O}}(\max\left\{H^{3/2}S^{2}A\sqrt{T}/\varepsilon,HS\sqrt{AT}\right\})",
        source=Source(
            "Liao et al. 2021",
            "Section 1; related work",
            LIAO_2021,
            (7, 25),
            r"\max\left\{H^{3/2}S^{2}A\sqrt{T}/\varepsilon,HS\sqrt{AT}\right\}",
        ),
    ),
    BoundEntry(
        name="garcelon-2020/lower",
        algorithm="any ε-LDP algorithm (lower bound of Garcelon et al.)",
        reference="Garcelon et al. 2020",
        setting="tabular",
        privacy="LDP",
        privacy_definition="LDP (as cited in Liao et al. 2021)",
        kind="lower",
        notation="Ω̃",
        expression=sympy.sqrt(H * S * A * T) / sympy.Min(sympy.exp(epsilon) - 1, 1),
        stated=r"\widetilde{\Omega}(\sqrt{HSAT}/\min\left\{\exp(\varepsilon)-1,1\right\})",
        source=Source(
            "Liao et al. 2021",
            "related work",
            LIAO_2021,
            (25,),
            r"\sqrt{HSAT}/\min\left\{\exp(\varepsilon)-1,1\right\}",
        ),
    ),
    # ---------------------------------------------------------------- bandits (one round per user: K = T, H = 1)
    BoundEntry(
        name="linucb/abbasi-yadkori-2011",
        algorithm="OFUL (LinUCB)",
        reference="Abbasi-Yadkori, Pál & Szepesvári 2011",
        setting="contextual bandit",
        privacy="none",
        privacy_definition="none",
        expression=d * sympy.sqrt(T),
        stated=r"\tilde{O}(d\sqrt{T})",
        source=Source("Abbasi-Yadkori et al. 2011 (NeurIPS)", "Theorem 3 (its Õ form)", None, (),
                      r"\tilde{O}(d\sqrt{T})"),
        note=(
            "The high-probability bound of Theorem 3, 4√(Td log(λ + TL/d))(λ^{1/2}S + R√(2 log(1/δ) + "
            "d log(1 + TL/(λd)))), is Õ(d√T); δ there is the failure probability, not a privacy parameter. Read "
            "from the paper, not checked line by line against a text here."
        ),
    ),
    BoundEntry(
        name="jdp-linucb/shariff-sheffet-2018",
        algorithm="private linear UCB with the tree-based algorithm and Gaussian noise",
        reference="Shariff & Sheffet 2018 (NeurIPS; arXiv:1810.00068)",
        setting="contextual bandit",
        privacy="JDP",
        privacy_definition="(ε, δ)-JDP",
        expression=d * sympy.sqrt(T) + d ** _R(3, 4) * sympy.sqrt(T) / sympy.sqrt(epsilon),
        stated=r"\tilde{O}(d\sqrt{T}+d^{3/4}\sqrt{T}/\sqrt{\epsilon})",
        source=Source("Shariff & Sheffet 2018", "regret of the Gaussian-noise instantiation (its Õ form)", None, (),
                      r"d^{3/4}\sqrt{T}/\sqrt{\epsilon}"),
        base="linucb/abbasi-yadkori-2011",
        note=(
            "The shifted-regulariser confidence radius with ρ_max of order √d·log(1/δ)^{1/2}/ε for the "
            "Gaussian noise gives the additive privacy term √(dT)·√ρ_max = d^{3/4}√T/√ε up to logarithms (δ "
            "enters through log(1/δ)^{1/4}, hidden here). Only the abstract was reachable for a line-by-line check: "
            "the rate is the one the later literature attributes to the paper (the central-model Õ(√T) that "
            "Zheng et al. 2020 and Chowdhury & Zhou 2022 compare the local model's T^{3/4} with), its d and ε "
            "exponents derived here from the paper's radius."
        ),
    ),
    BoundEntry(
        name="ldp-linucb/zheng-2020",
        algorithm="LDP generalized linear bandits (contextual, Gaussian mechanisms on x xᵀ and x·r)",
        reference="Zheng, Cai, Huang, Li & Wang 2020 (NeurIPS; arXiv:2006.00701)",
        setting="contextual bandit",
        privacy="LDP",
        privacy_definition="(ε, δ)-LDP",
        expression=T ** _R(3, 4) / epsilon,
        stated=r"\tilde{\mathcal{O}}(T^{3/4}/\varepsilon)",
        source=Source("Zheng et al. 2020", "abstract", None, (), r"\tilde{\mathcal{O}}(T^{3/4}/\varepsilon)"),
        base="linucb/abbasi-yadkori-2011",
        note=(
            "Stated in the abstract for generalized linear bandits under (ε, δ)-LDP, 'conjectured to be optimal'; "
            "d and log(1/δ) are hidden in Õ there. A single term: the whole bound is the privacy cost (it does not "
            "reduce to OFUL's d√T as ε → ∞)."
        ),
    ),
    BoundEntry(
        name="ucb/auer-2002",
        algorithm="UCB1",
        reference="Auer, Cesa-Bianchi & Fischer 2002",
        setting="multi-armed bandit",
        privacy="none",
        privacy_definition="none",
        expression=sympy.sqrt(A * T),
        stated=r"\tilde{O}(\sqrt{AT})",
        source=Source("Auer et al. 2002", "Theorem 1 (gap-free form)", None, (), r"\tilde{O}(\sqrt{AT})"),
        note=(
            "Theorem 1 bounds the expected regret by 8Σ_a log T/Δ_a + (1 + π²/3)ΣΔ_a; its worst case over the "
            "gaps is O(√(AT log T)) (e.g. Lattimore & Szepesvári 2020, Theorem 7.2). A is the number of arms."
        ),
    ),
    BoundEntry(
        name="dp-ucb/mishra-thakurta-2015",
        algorithm="Private UCB (tree-based Laplace counters)",
        reference="Mishra & Thakurta 2015; Tossou & Dimitrakakis 2016",
        setting="multi-armed bandit",
        privacy="JDP",
        privacy_definition="ε-DP of the action sequence (implies ε-JDP)",
        expression=sympy.sqrt(A * T) + A / epsilon,
        stated=r"\tilde{O}(\sqrt{AT}+A/\epsilon)",
        source=Source("Mishra & Thakurta 2015 (UAI); Tossou & Dimitrakakis 2016 (AAAI)", "regret of Private UCB "
                      "(gap-free form)", None, (), r"\tilde{O}(\sqrt{AT}+A/\epsilon)"),
        base="ucb/auer-2002",
        note=(
            "The papers state gap-dependent bounds (Tossou & Dimitrakakis 2016's abstract: the continual-release "
            "variants of previous work reach only O(ε⁻² log² T); their interval-based DP-UCB O(ε⁻¹ + log T), gaps "
            "and A hidden). With tree counters a sum's noise is O(log^{1.5}T/ε), so an arm of gap Δ is pulled "
            "O(log T/Δ² + log^{1.5}T/(εΔ)) times: the gap-free regret is Õ(√(AT) + A/ε), the form recorded here "
            "(the rate of the Ω(√(AT) + A log T/ε)-type lower bounds the later literature states). Derived here, "
            "not quoted: no paper text was checked line by line."
        ),
    ),
    # ---------------------------------------------------------------- general function approximation
    BoundEntry(
        name="he-zhou-2026/general-fa",
        algorithm="batched exponential-mechanism algorithm of He & Zhou",
        reference="He & Zhou 2026 (arXiv:2605.07049v1)",
        setting="general function approximation",
        privacy="JDP",
        privacy_definition="differential privacy for online RL (JDP-type; the abstract says 'differential privacy')",
        expression=K ** _R(3, 5),
        stated=r"\widetilde{O}(K^{3/5})",
        source=Source("arXiv:2605.07049v1", "abstract", None, (), r"\widetilde{O}(K^{3/5})"),
        note=(
            "Only the K-dependence is stated in the abstract (model-free setting); it says this matches "
            "the state of the art for the linear case and that recent private linear-function-approximation "
            "results have fundamental gaps (see the notes of the √K-type linear-MDP entries)."
        ),
    ),
)

#: Immutable mapping from machine name to entry, in registration order.
REGISTRY: Mapping[str, BoundEntry] = MappingProxyType({e.name: e for e in _ENTRIES})

_CLAIMS: tuple[Claim, ...] = (
    Claim(
        "claim/dp-lsvi-ucb++-over-ngo-2022",
        "dp-lsvi-ucb++/theorem-3.2",
        "ngo-2022/linear-mdp",
        Source("Sahu 2025", "abstract", SAHU_2025, (5,), "which surpasses previous state-of-the-art algorithms"),
    ),
    Claim(
        "claim/dp-lsvi-ucb++-over-luyo-2021",
        "dp-lsvi-ucb++/theorem-3.2",
        "luyo-2021/linear-mdp",
        Source("Sahu 2025", "abstract", SAHU_2025, (5,), "which surpasses previous state-of-the-art algorithms"),
    ),
    Claim(
        "claim/dp-lsvi-ucb++-v2-over-ngo-2022",
        "dp-lsvi-ucb++/arxiv-v2",
        "ngo-2022/linear-mdp",
        Source("arXiv:2504.09339v2", "abstract", None, (), "improving over previous private methods"),
    ),
    Claim(
        "claim/ngo-2022-over-luyo-2021",
        "ngo-2022/linear-mdp",
        "luyo-2021/linear-mdp",
        Source("Sahu 2025", "abstract", SAHU_2025, (5,), "and was subsequently improved to"),
    ),
    Claim(
        "claim/zhou-2022-over-luyo-2021",
        "private-linopt-vi/zhou-2022",
        "jdp-ucrl-vtr/luyo-2021",
        Source(
            "Sahu 2025",
            "Section 1.1 (Linear Mixture MDPs)",
            SAHU_2025,
            (31,),
            "improved on this bound with Private-LinOpt-VI",
        ),
    ),
)

#: Immutable mapping from claim name to claim.
CLAIMS: Mapping[str, Claim] = MappingProxyType({c.name: c for c in _CLAIMS})


def get(name: str) -> BoundEntry:
    """The entry called ``name``; raises InvalidParameterError naming the parameter otherwise."""
    if not isinstance(name, str) or name not in REGISTRY:
        raise InvalidParameterError("name", "must be a registered bound (see `dpverify bounds list`)", name)
    return REGISTRY[name]


def entries(
    *, setting: str | None = None, privacy: str | None = None, kind: str | None = None
) -> tuple[BoundEntry, ...]:
    """Registered entries, optionally filtered by setting, privacy model and kind."""
    if setting is not None:
        one_of("setting", setting, SETTINGS)
    if privacy is not None:
        one_of("privacy", privacy, PRIVACY_MODELS)
    if kind is not None:
        one_of("kind", kind, KINDS)
    return tuple(
        e
        for e in REGISTRY.values()
        if (setting is None or e.setting == setting)
        and (privacy is None or e.privacy == privacy)
        and (kind is None or e.kind == kind)
    )


def _check_references() -> None:
    for entry in REGISTRY.values():
        if entry.base is not None and entry.base not in REGISTRY:
            raise InvalidParameterError("base", "must name a registered bound", entry.base)
    for claim in CLAIMS.values():
        get(claim.improver)
        get(claim.baseline)


_check_references()
