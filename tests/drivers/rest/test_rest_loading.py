"""Loading every corpus spec, lazy refs with cycle detection, and errors that name the place."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema_rs
import pytest
from mcs_rest import RestDriver, SpecError
from mcs_rest._schema import SchemaConverter
from mcs_rest._spec import Spec, parse_document
from rest_paths import CORPUS, PETSTORE
from rest_server import Running

from mcs.errors import ConfigurationError
from mcs.validation import compile_validator

OPENAPI = CORPUS / "openapi"


_TOP_LEVEL = re.compile(rb'(^|\n)[ \t]*(openapi|swagger)\s*:|"(openapi|swagger)"\s*:\s*"[23]')


def _is_spec(path: Path) -> bool:
    return _TOP_LEVEL.search(path.read_bytes()) is not None


def _corpus_files() -> list[Path]:
    if not OPENAPI.is_dir():
        return []
    return sorted(p for p in OPENAPI.rglob("*") if p.suffix in (".json", ".yaml", ".yml"))


# Documents in the corpus that are broken on purpose (prance's own failure tests).
EXPECTED_BROKEN = {"issue_78/openapi.json": "tests/specs/issue_78/_schemas.json"}
FILES = _corpus_files()
SPECS = [p for p in FILES if _is_spec(p) and p.relative_to(OPENAPI).as_posix().split("prance-tests/")[-1] not in EXPECTED_BROKEN]
FRAGMENTS = [p for p in FILES if not _is_spec(p)]


def _id(path: Path) -> str:
    return path.relative_to(OPENAPI).as_posix()


@pytest.mark.parametrize("path", SPECS, ids=[_id(p) for p in SPECS])
def test_every_corpus_spec_loads_and_every_tool_schema_compiles(corpus, path):
    with RestDriver(path) as driver:
        tools = driver.list_tools()
        for tool in tools:
            compile_validator(tool.input_schema, tool=tool.name)
            json.dumps(tool.input_schema)  # finite and JSON-ready
        assert len(driver.operations) == sum(1 for t in tools if "method" in t.meta)


@pytest.mark.parametrize("path", FRAGMENTS, ids=[_id(p) for p in FRAGMENTS])
def test_a_document_that_is_not_a_spec_gets_an_error_naming_it(corpus, path):
    with pytest.raises(SpecError) as info:
        RestDriver(path)
    assert path.name in str(info.value)


def test_a_ref_that_does_not_resolve_names_the_operation_and_the_ref(corpus):
    with pytest.raises(SpecError) as info:
        RestDriver(OPENAPI / "prance-tests" / "issue_78" / "openapi.json")
    message = str(info.value)
    assert "paths./endpoint.post.requestBody" in message
    assert "tests/specs/issue_78/_schemas.json#/$defs/Body" in message


def test_invalid_yaml_names_line_and_column():
    with pytest.raises(SpecError) as info:
        parse_document(b"openapi: 3.0.0\npaths: [unclosed\n", "bad.yaml")
    assert "bad.yaml" in str(info.value) and "line" in str(info.value)


def test_a_missing_file_is_a_configuration_error():
    with pytest.raises(ConfigurationError) as info:
        RestDriver("no/such/spec.yaml")
    assert "no/such/spec.yaml" in str(info.value)


def test_an_unsupported_version_is_refused():
    with pytest.raises(SpecError) as info:
        RestDriver({"openapi": "4.0.0", "paths": {}})
    assert "4.0.0" in str(info.value)


def test_a_spec_given_as_a_dict_loads():
    spec = {"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
            "paths": {"/x": {"get": {"operationId": "getX", "responses": {}}}}}
    with RestDriver(spec) as driver:
        assert [t.name for t in driver.list_tools()] == ["getX"]


def test_stripe_component_schemas_in_cycles_become_finite_schemas_with_defs(corpus):
    spec = Spec.load(OPENAPI / "stripe_spec3_2022-04-12.json")
    converter = SchemaConverter(spec)
    recursive = 0
    for name in spec.root["components"]["schemas"]:
        schema, needs = converter.convert({"$ref": f"#/components/schemas/{name}"}, spec.root_key, name)
        document = {**schema, "$defs": converter.defs_for(needs)} if needs else schema
        json.dumps(document)
        jsonschema_rs.validator_for(document)
        recursive += bool(needs)
    assert recursive >= 73


def test_kubernetes_property_named_ref_is_a_property_not_a_reference(corpus):
    spec = Spec.load(OPENAPI / "kubernetes_swagger.json")
    converter = SchemaConverter(spec)
    ref = "#/definitions/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
    schema, needs = converter.convert({"$ref": ref}, spec.root_key, "test")
    assert schema == {"$ref": "#/$defs/io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"}
    body = converter.defs_for(needs)["io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"]
    assert body["properties"]["$ref"] == {"type": "string"}
    assert body["properties"]["not"] == schema  # recursive: a reference the LLM can follow


def test_docker_integer_yaml_keys_and_x_nullable(corpus):
    with RestDriver(OPENAPI / "docker_engine_api.yaml") as driver:
        update = driver.get_tool("ContainerUpdate").input_schema
    # the body parameter's allOf is merged and flattened into top-level arguments
    assert update["properties"]["PidsLimit"]["type"] == ["integer", "null"]
    assert update["properties"]["Init"]["type"] == ["boolean", "null"]
    spec = Spec.load(OPENAPI / "docker_engine_api.yaml")
    assert 200 in spec.root["paths"]["/containers/json"]["get"]["responses"]


def test_prance_recursive_specs_resolve_recursion_to_defs(corpus):
    spec = Spec.load(OPENAPI / "prance-tests" / "recursive_objs.yaml")
    converter = SchemaConverter(spec)
    schema, needs = converter.convert({"$ref": "#/definitions/Recursive"}, spec.root_key, "test")
    assert schema == {"$ref": "#/$defs/Recursive"}
    assert set(needs) == {"Recursive"}
    json.dumps({**schema, "$defs": converter.defs_for(needs)})


def test_external_refs_outside_the_spec_folder_are_refused(tmp_path):
    inner = tmp_path / "api"
    inner.mkdir()
    (tmp_path / "secret.yaml").write_text("type: string\n")
    (inner / "spec.yaml").write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n"
        "      parameters:\n        - {name: q, in: query, schema: {$ref: '../secret.yaml'}}\n"
        "      responses: {}\n"
    )
    with pytest.raises(SpecError) as info:
        RestDriver(inner / "spec.yaml")
    assert "leaves the spec's folder" in str(info.value)
    with RestDriver(inner / "spec.yaml", allow_external_refs=True) as driver:
        assert driver.list_tools()[0].input_schema["properties"]["q"] == {"type": "string"}


def test_one_allowed_folder_given_as_text_allows_that_folder_only(tmp_path):
    # As text, the folder was once read as a folder per character: "." among them allowed
    # every file under the current folder.
    (tmp_path / "api").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "name.yaml").write_text("type: string\n")
    (tmp_path / "secret.yaml").write_text("type: integer\n")
    def spec(ref: str) -> Path:
        path = tmp_path / "api" / f"spec{len(ref)}.yaml"
        path.write_text(
            "openapi: 3.0.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n"
            f"      parameters:\n        - {{name: q, in: query, schema: {{$ref: '{ref}'}}}}\n"
            "      responses: {}\n"
        )
        return path

    with RestDriver(spec("../shared/name.yaml"), allow_external_refs=str(tmp_path / "shared")) as driver:
        assert driver.list_tools()[0].input_schema["properties"]["q"] == {"type": "string"}
    with pytest.raises(SpecError, match="leaves the spec's folder"):
        RestDriver(spec("../secret.yaml"), allow_external_refs=str(tmp_path / "shared"))
    with pytest.raises(SpecError, match="leaves the spec's folder"):
        RestDriver(spec("../secret.yaml"), allow_external_refs=tmp_path / "shared")


def test_external_refs_inside_the_spec_folder_are_followed(corpus):
    with RestDriver(OPENAPI / "oai-examples/examples/v2.0/yaml/petstore-separate/spec/swagger.yaml") as driver:
        names = [t.name for t in driver.list_tools()]
    assert "addPet" in names


def test_yaml_dates_stay_strings(tmp_path):
    path = tmp_path / "dated.yaml"
    path.write_text(
        "openapi: 3.0.0\ninfo: {title: t, version: 2020-08-01}\npaths:\n  /x:\n    get:\n"
        "      parameters:\n        - {name: since, in: query, schema: {type: string, default: 2020-01-01}}\n"
        "      responses: {}\n"
    )
    with RestDriver(path) as driver:
        assert driver.list_tools()[0].input_schema["properties"]["since"]["default"] == "2020-01-01"


def test_the_test_petstore_loads_from_its_path():
    assert PETSTORE.is_file()
    with RestDriver(PETSTORE) as driver:
        assert "listPets" in driver.operations


# ---------------------------------------------------------------- a spec fetched from a URL


def test_a_spec_url_redirected_within_its_origin_is_followed(api: Running):
    with RestDriver(api.url + "/spec-moved", base_url=api.url + "/v1") as driver:
        assert "listPets" in driver.operations


def test_a_spec_url_redirected_from_127_0_0_1_to_localhost_on_its_port_stays_in_its_origin(api: Running):
    with RestDriver(api.url + "/spec-loopback", base_url=api.url + "/v1") as driver:
        assert "listPets" in driver.operations


def test_a_spec_url_redirected_to_another_origin_is_refused_naming_the_target_and_the_option(api: Running):
    with pytest.raises(SpecError) as info:
        RestDriver(api.url + "/spec-away", base_url=api.url + "/v1")
    message = str(info.value)
    assert f"redirected to http://localhost:{api.state.away_port}/spec.yaml, another origin" in message
    assert "spec_redirect_hosts=['localhost']" in message and "sig=abc" not in message
    assert "--spec-redirect-host" not in message  # the flag is the command line's


def test_a_host_in_spec_redirect_hosts_may_serve_the_spec(api: Running):
    with RestDriver(api.url + "/spec-away", base_url=api.url + "/v1", spec_redirect_hosts=["localhost"]) as driver:
        assert "listPets" in driver.operations


def test_a_spec_url_that_redirects_without_end_is_refused(api: Running):
    with pytest.raises(SpecError, match="redirected more than 5 times"):
        RestDriver(api.url + "/spec-loop", base_url=api.url + "/v1")
