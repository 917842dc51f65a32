"""Exceptions raised by dpverify.

Every error that a user can cause by passing bad input is an :class:`InvalidParameterError`
(a :class:`ValueError`): its message names the parameter and the rule it broke, so the command
line can print it as one line and exit with status 2.
"""

from __future__ import annotations


class DpverifyError(Exception):
    """Base class of every error dpverify raises on purpose."""


class InvalidParameterError(DpverifyError, ValueError):
    """A parameter broke a stated rule.

    Attributes:
        parameter: the name of the parameter, as the caller spelled it.
        rule: the rule it broke, phrased as what it must be ("must be > 0").
        value: the offending value (kept for programmatic use; shown with ``repr``).
    """

    def __init__(self, parameter: str, rule: str, value: object = None) -> None:
        self.parameter = parameter
        self.rule = rule
        self.value = value
        super().__init__(f"{parameter} {rule} (got {_shown(value)})")

    def __reduce__(self) -> tuple:
        # Rebuild from the three fields, so the error crosses process boundaries (worker pools) intact.
        return (type(self), (self.parameter, self.rule, self.value))


def _shown(value: object) -> str:
    """``repr(value)``, but an integer of hundreds of digits by its size (such a repr is unreadable, and above
    4300 digits Python refuses to write it)."""
    if isinstance(value, int) and value.bit_length() > 128:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1} digits"
    return repr(value)


class NumericalError(DpverifyError, ArithmeticError):
    """A computation could not produce a trustworthy (conservative) number.

    Raised instead of returning NaN, a negative divergence or an ε that might be below the truth.
    """
