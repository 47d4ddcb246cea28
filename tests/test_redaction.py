"""mcs.redaction: the forms a driver's credentials may be echoed in, and scrubbing them."""

from __future__ import annotations

import base64

from mcs.redaction import REDACTED, credential_forms, redact, scrub_value, secret_mask


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


def test_a_property_two_variants_define_keeps_the_secrets_of_both() -> None:
    secret = {"type": "string", "format": "password"}
    schema = {"type": "object", "anyOf": [
        {"properties": {"creds": {"type": "object", "properties": {"pw": secret}}}},
        {"properties": {"creds": {"type": "object", "properties": {"token": secret}}}},
    ]}
    redacted = redact({"creds": {"pw": "pw-1234", "token": "tok-1234"}}, secret_mask(schema))
    assert "pw-1234" not in str(redacted) and "tok-1234" not in str(redacted)
