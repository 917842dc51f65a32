"""Neighbouring relations: which pairs of datasets a privacy guarantee compares.

The same statistic has a different sensitivity under each relation, so every mechanism states the
relation its sensitivity holds under, and a ledger composes releases under one relation only.

- ``REPLACE_ONE`` (bounded DP): D′ is D with one user's data replaced by arbitrary other data. This is
  the relation of joint DP in Sahu 2025 (neighbouring user sequences differ in one user, §2 and the
  proof of Theorem A.1) and of local DP in Liao et al. 2021 (any two inputs of one user).
- ``ADD_REMOVE_ONE`` (unbounded DP): D′ is D with one user added or removed.

For a sum of per-user terms each of norm ≤ B, the ℓ2 sensitivity is B under add/remove and 2B under
replacement (√2·B for a sum of rank-one matrices xxᵀ in Frobenius norm, see docs/accounting.md).
"""

from __future__ import annotations

from enum import Enum

from dpverify.errors import InvalidParameterError


class Neighbouring(str, Enum):
    """A neighbouring relation between datasets of users."""

    REPLACE_ONE = "replace-one"
    ADD_REMOVE_ONE = "add-remove-one"

    @classmethod
    def parse(cls, value: str | Neighbouring) -> Neighbouring:
        """Accept the enum or its string value; raise InvalidParameterError otherwise."""
        if isinstance(value, Neighbouring):
            return value
        for member in cls:
            if value == member.value:
                return member
        raise InvalidParameterError(
            "relation", f"must be one of {', '.join(m.value for m in cls)}", value
        )
