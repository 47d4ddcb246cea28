"""Cross-check with openapi-core: every argument set the driver's validator accepts, for every
operation of the OpenAPI 3 corpus specs, gives a request openapi-core's request validator
accepts (a property test: hypothesis draws the arguments from each tool's input schema).

Two things openapi-core cannot read are set aside, each for a stated reason:

* Stripe's ``style: deepObject`` beyond what OpenAPI defines (arrays: ``expand[]=a``;
  ``anyOf`` an object or an integer: ``created``; form body fields such as
  ``billing[address][city]=x``) is Stripe's convention; openapi-core fails to deserialise
  it, for a query parameter even when it is absent. The spec copy openapi-core reads
  declares those parameters as plain ``form``, and argument sets that put an object or a
  list in such a body field are not drawn (optional ones are left out of the draw); the
  driver's encoding of them is tested against the loopback server (``test_rest_calls``).
* An empty list or object in a form body has no encoding at all (nothing is sent), nor has
  a required body all of whose fields are empty: such argument sets are not drawn.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import orjson
import pytest
from core_requests import core_request
from hypothesis import HealthCheck, assume, given, settings
from hypothesis.errors import Unsatisfiable
from jsonschema_path import SchemaPath
from mcs_rest import RestDriver, _auth
from rest_paths import CORPUS, NOTES, PETSTORE
from schema_strategies import arguments

from mcs.errors import InvalidInputError
from mcs.tools import ToolCall

OPENAPI = CORPUS / "openapi"
# OpenAPI 3 specs of the corpus (the YAML copies of Stripe and GitHub hold the same operations).
SPECS = [
    "stripe_spec3_2022-04-12.json", "github_api.github.com_2020-08.json", "twilio_api_v2010.json",
    *(f"oai-examples/examples/v3.0/{name}" for name in (
        "petstore.yaml", "petstore-expanded.yaml", "uspto.yaml", "link-example.yaml",
        "api-with-examples.yaml", "callback-example.yaml")),
]


def _credentials(driver: RestDriver) -> dict[str, str]:
    """A credential for every scheme the driver can send, so openapi-core's security check passes."""
    out: dict[str, str] = {}
    for scheme in _auth.describe_schemes(driver.spec.root, driver.spec.is_swagger):
        if scheme.kind == "http basic":
            out[scheme.name] = "user:pw"
        elif scheme.kind.startswith("apiKey") or scheme.kind in ("http bearer", "oauth2", "openIdConnect"):
            out[scheme.name] = "t0ken"
    return out


def _for_openapi_core(root: Any) -> Any:
    """The spec as openapi-core can read it: deepObject arrays declared as form arrays."""
    document = orjson.loads(orjson.dumps(root, option=orjson.OPT_NON_STR_KEYS))

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("style") == "deepObject" and (node.get("schema") or {}).get("type") != "object":
                node["style"] = "form"
            properties = (node.get("schema") or {}).get("properties") or {}
            encodings = node.get("encoding") if "schema" in node else None
            for field, encoding in (encodings or {}).items():
                if (isinstance(encoding, dict) and encoding.get("style") == "deepObject"
                        and (properties.get(field) or {}).get("type") != "object"):
                    encoding["style"] = "form"
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(document)
    return document


def _unreadable_form_field(op: Any, args: dict[str, Any]) -> bool:
    """A form body field openapi-core cannot read back: one sent in Stripe's bracket
    convention (a deepObject field holding an object or a list), or an empty list or object,
    which form encoding cannot carry at all."""
    if op.body is None or op.body.kind != "form":
        return False
    by_arg = {p.arg: p.name for p in op.params if p.location == "body"}
    for arg, value in args.items():
        if arg not in by_arg:
            continue
        if isinstance(value, dict | list) and (not value or by_arg[arg] in op.body.deep_fields):
            return True
    return False


def _bracketed_fields(op: Any) -> frozenset[str]:
    """The arguments of ``op`` sent in Stripe's bracket convention (deepObject form fields)."""
    if op.body is None or op.body.kind != "form":
        return frozenset()
    return frozenset(p.arg for p in op.params if p.location == "body" and p.name in op.body.deep_fields)


def _requires_bracketed_field(op: Any) -> bool:
    if op.body is None or op.body.kind != "form":
        return False
    required = set(op.input_schema.get("required") or ())
    return any(p.arg in required and p.name in op.body.deep_fields for p in op.params if p.location == "body")


def _check_operation(driver: RestDriver, validator: Any, op: Any, examples: int, refused: list[str]) -> bool:
    """Draw argument sets for ``op``; record each request openapi-core refuses. ``False``
    when every drawn set was set aside (see the module docstring)."""
    tool = driver.get_tool(op.name)
    assert tool is not None

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(args=arguments(dict(tool.input_schema), omit=_bracketed_fields(op)))
    def check(args: dict[str, Any]) -> None:
        try:
            invocation = driver.prepare(ToolCall(tool.name, args))
        except InvalidInputError:
            assume(False)  # only argument sets the driver's validator accepts
        assume(not _unreadable_form_field(op, invocation.arguments))
        try:
            _, plan = driver._plan(invocation)
        except InvalidInputError:
            assume(False)  # a value the request cannot carry (an empty path segment): nothing is sent
        applied = [_auth.apply(s, s.oauth.token() if s.oauth else None) for s in plan.schemes]
        request = core_request(plan.request(applied))
        assume(request.body is not None or op.body is None or not op.body.required)
        errors = list(validator.iter_errors(request))
        if errors:
            refused.append(f"{op.name} {invocation.arguments}: {errors[0]} ({errors[0].__cause__})")

    try:
        check()
    except Unsatisfiable:
        return False
    return True


def _cross_check(path: Path, examples: int) -> None:
    from openapi_core import Config, OpenAPI

    probe = RestDriver(path)
    try:
        for op in probe.operations.values():
            probe.base_url_for(op)
        base = None
    except Exception:
        base = "http://localhost"  # a spec without servers: openapi-core then accepts any host
    finally:
        probe.close()
    driver = RestDriver(path, auth=_credentials(probe), base_url=base, description_mode="inline")
    document = SchemaPath.from_dict(
        _for_openapi_core(driver.spec.root), base_uri=path.resolve().as_uri(), resolved_cache_maxsize=65536,
    )
    openapi = OpenAPI(document, config=Config(spec_validator_cls=None))
    validator = openapi.request_validator
    refused: list[str] = []
    unsatisfied: list[str] = []
    with driver, warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Unsupported scheme type")  # openapi-core on oauth2 schemes
        for op in driver.operations.values():
            if not _check_operation(driver, validator, op, examples, refused):
                unsatisfied.append(op.name)
    assert refused == [], "\n".join(refused)
    # Operations whose every argument set was set aside: only those that require a field in
    # Stripe's bracket convention (see the module docstring) may be among them.
    assert [name for name in unsatisfied if not _requires_bracketed_field(driver.operations[name])] == []


@pytest.mark.parametrize("name", SPECS)
def test_arguments_the_driver_accepts_make_requests_openapi_core_accepts(corpus, name):
    path = OPENAPI / name
    with RestDriver(path) as driver:
        size = len(driver.operations)
    _cross_check(path, examples=1 if size > 100 else 4)


@pytest.mark.parametrize("path", [PETSTORE, NOTES], ids=["petstore", "notes"])
def test_the_test_specs_pass_the_cross_check_too(path):
    _cross_check(path, examples=10)
