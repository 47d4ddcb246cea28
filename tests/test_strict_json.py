"""STRICT_JSON reads JSON as RFC 8259 defines it: no NaN or infinities, no number out of range."""

from __future__ import annotations

import pytest

from mcs.strict_json import STRICT_JSON


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", '{"a": -Infinity}', "1e999", "[-1e400]"])
def test_what_python_reads_but_json_has_not_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match=r"not a JSON number|out of range"):
        STRICT_JSON.decode(text)


def test_json_reads_as_json_loads_reads_it() -> None:
    assert STRICT_JSON.decode('{"a": [1, 2.5, -3e10, "x", null, true]}') == {"a": [1, 2.5, -3e10, "x", None, True]}
