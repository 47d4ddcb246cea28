"""Argument validation: why the pipeline validates with jsonschema-rs.

Measured on the input schemas of every operation in the GitHub REST spec of the corpus
(as the REST driver builds them), in the same run:

* compile: building a validator for every tool, with ``mcs.validation.compile_validator``
  (jsonschema-rs behind it) and with ``jsonschema.Draft202012Validator`` (+ ``check_schema``);
* validate: the median time to check one tool's arguments, for a valid object (every
  required argument present with a value of its type) and for an invalid one (``{}``
  for a tool with required arguments), through our ``ArgumentValidator.validate`` (which
  also repairs and writes the LLM-facing message) and through jsonschema's
  ``is_valid`` / ``iter_errors``. Goal (item 9): refusing ``{}`` costs at most what
  jsonschema's ``iter_errors`` does.

The ``jsonschema`` package is measured only when installed (the ``mcp`` SDK brings it).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from bench._support import check
from mcs.errors import InvalidInputError
from mcs.validation import compile_validator

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "openapi"
SPEC = "github_api.github.com_2020-08.json"
_SAMPLE_VALUES: dict[str, Any] = {
    "string": "x",
    "integer": 1,
    "number": 1.5,
    "boolean": True,
    "array": [],
    "object": {},
}


def _sample(schema: Mapping[str, Any]) -> Any:
    """A plain value the schema accepts (first type, first enum member), or ``None``."""
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or (kind is None and "properties" in schema):
        return _valid_arguments(schema)
    return _SAMPLE_VALUES.get(kind) if isinstance(kind, str) else None


def _valid_arguments(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """Every required property with a plain value of its type, or ``None`` if not derivable."""
    properties = schema.get("properties", {})
    arguments = {}
    for name in schema.get("required", ()):
        value = _sample(properties.get(name, {}))
        if value is None:
            return None
        arguments[name] = value
    return arguments


def _median_us(run: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter_ns()
        run()
        samples.append(time.perf_counter_ns() - started)
    return statistics.median(samples) / 1000.0


def _accepts(validator: Any, arguments: dict[str, Any]) -> bool:
    """Whether ``arguments`` pass as they are (a sample the derivation got wrong is dropped)."""
    try:
        return validator.validate(arguments) is arguments
    except InvalidInputError:
        return False


def _ours_invalid(validator: Any, arguments: dict[str, Any]) -> None:
    try:
        validator.validate(arguments)
    except InvalidInputError:
        return
    raise AssertionError("the invalid arguments were accepted")


def main() -> None:
    spec = CORPUS / SPEC
    if not spec.is_file():
        print(f"skipped: {spec} is absent (the shared corpus is not beside this checkout)")
        return
    from mcs_rest import RestDriver

    with RestDriver(str(spec), base_url="http://127.0.0.1:9") as driver:
        schemas = {tool.name: dict(tool.input_schema) for tool in driver.list_tools()}
    print(f"{len(schemas)} tool input schemas from {SPEC}")

    started = time.perf_counter()
    ours = {name: compile_validator(schema, tool=name) for name, schema in schemas.items()}
    compile_ours = time.perf_counter() - started

    cases = [(name, args) for name, schema in schemas.items() if (args := _valid_arguments(schema)) is not None]
    invalid = [name for name, schema in schemas.items() if schema.get("required")]
    cases = [(name, args) for name, args in cases if _accepts(ours[name], args)]

    rows = [
        ("compile every validator (s)", compile_ours, None),
        ("validate valid arguments (µs, median)", statistics.median(
            _median_us(lambda v=ours[n], a=a: v.validate(a), 50) for n, a in cases), None),
        ("refuse {} with the LLM message (µs, median)", statistics.median(
            _median_us(lambda v=ours[n]: _ours_invalid(v, {}), 20) for n in invalid), None),
    ]
    try:
        import jsonschema
    except ImportError:
        print("jsonschema is not installed: only jsonschema-rs is measured")
    else:
        started = time.perf_counter()
        theirs = {}
        for name, schema in schemas.items():
            jsonschema.Draft202012Validator.check_schema(schema)
            theirs[name] = jsonschema.Draft202012Validator(schema)
        compile_theirs = time.perf_counter() - started
        valid_theirs = statistics.median(
            _median_us(lambda v=theirs[n], a=a: v.is_valid(a), 50) for n, a in cases)
        invalid_theirs = statistics.median(
            _median_us(lambda v=theirs[n]: list(v.iter_errors({})), 20) for n in invalid)
        rows = [
            (rows[0][0], rows[0][1], compile_theirs),
            (rows[1][0], rows[1][1], valid_theirs),
            (rows[2][0], rows[2][1], invalid_theirs),
        ]
    print(f"{'':<46} {'mcs (jsonschema-rs)':>20} {'jsonschema':>12} {'ratio':>7}")
    for label, mine, other in rows:
        if other is None:
            print(f"{label:<46} {mine:>20.3f}")
            continue
        verdict = ""
        if label.startswith("refuse"):  # item 9: a refusal costs no more than jsonschema's
            verdict = f"  ours / jsonschema {mine / other:.2f} " + check(
                "refusing {} with the LLM message, x jsonschema's iter_errors", mine / other, 1.0, item="9")
        print(f"{label:<46} {mine:>20.3f} {other:>12.3f} {other / mine:>6.1f}x{verdict}")
    print(f"({len(cases)} valid samples, {len(invalid)} tools with required arguments)")


if __name__ == "__main__":
    main()
