"""Checks the sub-commands run before any work that the library cannot make for them: cluster addresses.

Sizes are the library's to refuse (:mod:`dpverify.limits`, :mod:`dpverify.audit.resources`), before anything is
allocated, forked or connected to.
"""

from __future__ import annotations

import re

from dpverify.errors import InvalidParameterError

_ADDRESS = re.compile(r"^(tcp|tls|inproc|ucx|ws|wss)://[^\s:/]+:(\d{1,5})$")


def check_scheduler(option: str, address: str | None) -> None:
    """A Dask scheduler address must look like ``tcp://host:port`` (port 1..65535) before connecting."""
    if address is None:
        return
    match = _ADDRESS.match(address)
    if match is None or not 0 < int(match.group(2)) < 65536:
        raise InvalidParameterError(option, "must be a scheduler address like tcp://host:8786", address)
