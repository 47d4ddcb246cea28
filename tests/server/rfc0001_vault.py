"""An RFC-0001 server whose tool takes a secret, for the client's log tests.

    python rfc0001_vault.py PORT     serve over HTTP on 127.0.0.1:PORT

``unlock``'s ``password`` is a ``SecretStr`` (its schema says ``format: password``,
``writeOnly``); a wrong one fails with an error that quotes it (a careless server).
"""

from __future__ import annotations

import sys

from pydantic import SecretStr

import mcs
from mcs.functions import FunctionDriver
from mcs.server.backend import DriverBackend
from mcs.server.runner import serve

PASSWORD = "open-sesame-4711"


@mcs.tool
def unlock(password: SecretStr) -> str:
    """Unlock the vault with its password."""
    if password.get_secret_value() != PASSWORD:
        raise ValueError(f"{password.get_secret_value()} is not the password")
    return "unlocked"


if __name__ == "__main__":
    serve(DriverBackend(FunctionDriver([unlock], name="vault")), transport="http", host="127.0.0.1",
          port=int(sys.argv[1]))
