"""Spec validation through prance and openapi-spec-validator: `mcs rest check` and validate_spec."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from mcs_rest import RestDriver, SpecError
from rest_paths import CORPUS, NOTES, PETSTORE

import mcs
from mcs.cli import main

OPENAPI = CORPUS / "openapi"
_TOP_LEVEL = re.compile(rb'(^|\n)[ \t]*(openapi|swagger)\s*:|"(openapi|swagger)"\s*:\s*"[23]')
SPECS = sorted(
    p for p in OPENAPI.rglob("*") if p.suffix in (".json", ".yaml", ".yml") and _TOP_LEVEL.search(p.read_bytes())
) if OPENAPI.is_dir() else []
ACTIONS = {"refuse", "skip the operation", "coerce", "ignore"}

BROKEN = """\
openapi: 3.0.3
info: {title: Broken, version: "1"}
paths:
  /pets/{petId}:
    get:
      operationId: getPet
      parameters:
        - name: limit
          schema: {type: integer, default: ten}
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Missing"}
  /pets:
    get:
      operationId: getPet
      summary: 12
    post:
      operationId: addPet
      requestBody:
        content:
          application/json:
            schema: {$ref: "../outside.yaml#/Pet"}
      responses:
        "200": {description: ok}
"""


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    (tmp_path / "api").mkdir()
    (tmp_path / "outside.yaml").write_text("Pet: {type: object, properties: {name: {type: string}}}\n")
    path = tmp_path / "api" / "spec.yaml"
    path.write_text(BROKEN)
    return path


def _report(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    code = main(["rest", "check", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("path", SPECS, ids=[p.relative_to(OPENAPI).as_posix() for p in SPECS])
def test_every_corpus_spec_goes_through_mcs_rest_check(corpus, capsys, path):
    code, report = _report(capsys, str(path))
    assert code == (1 if report["problems"] else 0)
    for problem in report["problems"]:
        assert problem["pointer"] == "" or problem["pointer"].startswith("/")
        assert problem["message"] and problem["action"] in ACTIONS and problem["detail"]
    if not report["refused"]:
        with RestDriver(path) as driver:
            assert len(driver.operations) == report["operations"]


@pytest.mark.parametrize("name", [
    "oai-examples/examples/v3.0/petstore.yaml", "oai-examples/examples/v3.0/petstore-expanded.yaml",
    "oai-examples/examples/v2.0/yaml/petstore.yaml",
])
def test_the_petstore_examples_have_no_problem(corpus, capsys, name):
    assert main(["rest", "check", str(OPENAPI / name)]) == 0
    assert "no problems" in capsys.readouterr().out


def test_every_problem_has_its_pointer_and_what_the_loader_does(broken, capsys):
    code, report = _report(capsys, str(broken))
    assert code == 1 and report["refused"] is True
    found = {(p["pointer"], p["action"]): p for p in report["problems"]}
    missing_ref = found[("/paths/~1pets~1{petId}/get/responses/200/content/application~1json/schema", "refuse")]
    assert "'#/components/schemas/Missing' does not resolve" in missing_ref["message"]
    assert "a parameter needs 'name' and 'in'" in missing_ref["detail"]
    outside = found[("/paths/~1pets/post/requestBody/content/application~1json/schema", "refuse")]
    assert "leaves the spec's folder" in outside["message"]
    assert "'ten' is not of type 'integer'" in found[("/paths/~1pets~1{petId}/get/parameters/0/schema", "refuse")]["message"]
    listed = {(p["pointer"], p["action"], p["message"]) for p in report["problems"]}
    assert ("/paths/~1pets/get/summary", "coerce", '12 is not of type "string"') in listed
    assert ("/paths/~1pets/get", "coerce", '"responses" is a required property') in listed
    assert "validate_responses" in next(p["detail"] for p in report["problems"] if "responses" in p["message"])
    assert ("/paths/~1pets/get", "coerce", "Operation ID 'getPet' for 'get' in '/pets' is not unique") in listed


def test_skipping_invalid_operations_turns_refusals_into_skips(broken, capsys):
    code, report = _report(capsys, str(broken), "--skip-invalid-operations")
    assert code == 1 and report["refused"] is False and report["operations"] == 1
    assert {p["action"] for p in report["problems"]} == {"skip the operation", "coerce"}
    with pytest.warns(UserWarning, match=r"left out \(invalid_operations='skip'\)"):
        driver = RestDriver(broken, invalid_operations="skip")
    with driver:
        assert [(op.method, op.path) for op in driver.operations.values()] == [("GET", "/pets")]


def test_references_outside_the_folder_are_followed_only_when_allowed(broken, capsys):
    _, strict = _report(capsys, str(broken))
    _, allowed = _report(capsys, str(broken), "--allow-external-refs")
    assert any("leaves the spec's folder" in p["message"] for p in strict["problems"])
    assert not any("outside.yaml" in p["message"] for p in allowed["problems"])


def test_text_output_names_each_problem_and_the_outcome(broken, capsys):
    assert main(["rest", "check", str(broken)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{broken}: 8 problems (prance ")
    assert lines[-1] == "mcs-rest refuses this spec"
    assert "    mcs-rest: coerce: the operation is offered; this part is read as it stands" in lines


def test_a_file_that_is_no_spec_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "notes.txt"
    path.write_text("just: [text\n")
    assert main(["rest", "check", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mcs: ") and "\n" not in err


def test_validate_spec_is_off_by_default_and_clean_specs_load_silently():
    with RestDriver(NOTES) as plain, RestDriver(NOTES, validate_spec=True) as checked:
        assert plain.spec_report is None
        assert checked.spec_report is not None and checked.spec_report.ok


def test_validate_spec_warns_with_every_problem_and_keeps_the_report(tmp_path):
    spec = PETSTORE.read_text().replace("operationId: deletePet", "operationId: showPetById")
    path = tmp_path / "petstore.yaml"
    path.write_text(spec)
    with pytest.warns(UserWarning, match=r"(?s)1 problem \(prance .*Operation ID 'showPetById'.*stable hash suffix"):
        driver = RestDriver(path, validate_spec=True)
    with driver:
        assert driver.spec_report is not None
        assert [p.action for p in driver.spec_report.problems] == ["coerce"]


def test_validate_spec_puts_the_report_in_the_loaders_error(broken):
    with pytest.raises(SpecError) as info:
        RestDriver(broken, validate_spec=True)
    message = str(info.value)
    assert "a parameter needs 'name' and 'in'" in message.splitlines()[0]
    assert "8 problems (prance" in message and "mcs-rest refuses this spec" in message


def test_load_driver_takes_validate_spec_as_the_issue_names_it(tmp_path):
    path = tmp_path / "petstore.yaml"
    path.write_text(PETSTORE.read_text().replace("operationId: deletePet", "operationId: showPetById"))
    with pytest.warns(UserWarning, match="1 problem"):
        driver = mcs.load_driver("rest", spec=str(path), validate_spec=True)
    with driver:
        report = driver.spec_report
        assert report is not None
        assert [(p.pointer.split("/")[1], p.action) for p in report.problems] == [("paths", "coerce")]
