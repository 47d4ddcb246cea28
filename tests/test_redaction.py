"""mcs.redaction: the forms a driver's credentials may be echoed in, and scrubbing them."""

from __future__ import annotations

import base64
import logging
import threading
from collections.abc import Iterator

import pytest

from mcs.redaction import (
    REDACTED,
    credential_forms,
    excerpt,
    redact,
    scrub,
    scrub_value,
    scrubbed_logs,
    secret_mask,
)


def test_credential_forms_cover_the_token_the_basic_pair_and_their_encodings():
    basic = "Basic " + base64.b64encode(b"alice:pa ss+word").decode()
    forms = credential_forms(["Bearer tok/en 1", basic, "key"])
    assert {"Bearer tok/en 1", "tok/en 1", "alice:pa ss+word", "pa ss+word"} <= set(forms)
    assert "key" not in forms  # too short to scrub from free text
    assert list(forms) == sorted(forms, key=len, reverse=True)
    echoed = ["tok%2Fen%201", "tok%2Fen+1", "tok/en%201", "alice%3Apa%20ss%2Bword", "pa+ss%2Bword"]
    assert scrub(" | ".join(echoed), forms) == " | ".join([REDACTED] * len(echoed))


def test_credential_forms_list_encodings_only_where_scrub_would_not_find_them():
    forms = credential_forms(["Bearer tok/en 1", "Bearer a/b"])
    assert "tok%2Fen%201" not in forms and "tok%2Fen+1" not in forms  # scrub("tok/en 1") replaces them
    assert {"a%2Fb"} <= set(forms) and "a/b" not in forms  # "a/b" is too short to scrub; its encoding is not
    assert scrub("key=a%2Fb", forms) == f"key={REDACTED}"


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


# ---------------------------------------------------------------- other libraries' logs


def _captured(name: str) -> tuple[logging.Logger, list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    logger = logging.getLogger(name)
    logger.addHandler(Keep(logging.DEBUG))
    logger.setLevel(logging.DEBUG)
    return logger, records


@pytest.fixture
def httpx_log() -> Iterator[tuple[logging.Logger, list[logging.LogRecord]]]:
    logger, records = _captured("httpx")
    yield logger, records
    logger.handlers.clear()
    logger.setLevel(logging.NOTSET)


def test_a_library_record_written_inside_scrubbed_logs_carries_no_secret(httpx_log):
    logger, records = httpx_log
    with scrubbed_logs(lambda: credential_forms(["Bearer tok/en-1234"])):
        logger.info("HTTP Request: %s %s", "GET", "http://h/x?key=tok%2Fen-1234")
        logger.debug("header %r", ("authorization", "Bearer tok/en-1234"))
    assert [r.getMessage() for r in records] == [
        "HTTP Request: GET http://h/x?key=[redacted]", "header ('authorization', '[redacted]')",
    ]
    assert all("tok" not in repr(r.args) for r in records)


def test_records_without_a_secret_or_outside_the_block_are_left_as_they_are(httpx_log):
    logger, records = httpx_log
    args = ("GET", "http://h/x")
    with scrubbed_logs(lambda: ["tok-1234"]):
        logger.info("HTTP Request: %s %s", *args)
    logger.info("after: %s", "tok-1234")
    assert [(r.msg, r.args) for r in records] == [("HTTP Request: %s %s", args), ("after: %s", ("tok-1234",))]


def test_a_record_written_by_another_thread_during_the_block_is_scrubbed_too(httpx_log):
    logger, records = httpx_log
    with scrubbed_logs(lambda: ["tok-1234"]):
        worker = threading.Thread(target=logger.warning, args=("failed with %s", "tok-1234"))
        worker.start()
        worker.join()
    assert [r.getMessage() for r in records] == ["failed with [redacted]"]


def test_an_exception_text_is_scrubbed_and_nested_blocks_add_up(httpx_log):
    logger, records = httpx_log
    with scrubbed_logs(lambda: ["outer-1234"]), scrubbed_logs(lambda: ["inner-5678"]):
        try:
            raise ValueError("bad outer-1234")
        except ValueError:
            logger.exception("inner-5678 refused")
    (record,) = records
    assert record.getMessage() == "[redacted] refused"
    assert "outer-1234" not in logging.Formatter().format(record)


# ---------------------------------------------------------------- excerpt


def test_an_excerpt_scrubs_before_it_cuts_so_no_part_of_a_secret_is_left():
    text = "x" * 18 + "tok-123456789"
    assert excerpt(text, ["tok-123456789"], 20) == "x" * 18 + "[r..."
    assert excerpt(text, [], 20) == "x" * 18 + "to..."


def test_an_excerpt_folds_whitespace_and_finds_a_secret_as_folding_writes_it():
    assert excerpt("said:\n  pass \n word\t!", ["pass  word"], 100) == "said: [redacted] !"
    assert excerpt("a\n b", [], 10, fold=False) == "a\n b"
