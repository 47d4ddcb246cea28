"""mcs.redaction: the forms a driver's credentials may be echoed in, and scrubbing them."""

from __future__ import annotations

import base64

from mcs.redaction import REDACTED, credential_forms, scrub_value


def test_credential_forms_cover_the_token_the_basic_pair_and_their_encodings():
    basic = "Basic " + base64.b64encode(b"alice:pa ss+word").decode()
    forms = credential_forms(["Bearer tok/en 1", basic, "key"])
    assert {"Bearer tok/en 1", "tok/en 1", "tok%2Fen%201", "tok%2Fen+1", "alice:pa ss+word", "pa ss+word"} <= set(forms)
    assert "key" not in forms  # too short to scrub from free text
    assert list(forms) == sorted(forms, key=len, reverse=True)


def test_scrub_value_reaches_every_string_of_a_nested_answer():
    answer = {"message": "got tok-123", "extensions": {"tok-123": ["x tok-123", 5, None]}}
    scrubbed = scrub_value(answer, credential_forms(["Bearer tok-123"]))
    assert scrubbed == {"message": f"got {REDACTED}", "extensions": {REDACTED: [f"x {REDACTED}", 5, None]}}
