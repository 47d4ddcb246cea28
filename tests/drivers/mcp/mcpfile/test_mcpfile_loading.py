"""Loading gen-mcp files: the corpus, versions, defaults, tolerance, load-time errors, overrides."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
import yaml
from mcpfile_support import mcp_file, tool
from mcs_mcp.mcpfile.driver import MCPFileDriver
from mcs_mcp.mcpfile.loader import override_names

import mcs
from mcs.errors import ConfigurationError

HTTP = {"http": {"method": "GET", "url": "http://127.0.0.1:9/users"}}


def corpus_files(corpus: Path) -> list[Path]:
    return sorted((corpus / "testdata").glob("*.yaml"))


def expected_names(data: dict) -> list[str]:
    names = [t["name"] for t in data.get("tools") or []]
    names += ["prompt_" + p["name"] for p in data.get("prompts") or []]
    names += ["resource_" + r["name"] for r in data.get("resources") or []]
    names += ["resource_template_" + r["name"] for r in data.get("resourceTemplates") or []]
    return names


def test_every_corpus_file_loads_except_the_invalid_version_one(corpus: Path) -> None:
    loaded, refused = [], []
    for path in corpus_files(corpus):
        try:
            MCPFileDriver(path)
            loaded.append(path.name)
        except ConfigurationError:
            refused.append(path.name)
    assert refused == ["pkg__mcpfile__testdata__invalid-file-version.yaml"]
    assert len(loaded) == len(corpus_files(corpus)) - 1


def test_tool_lists_match_the_corpus_files(corpus: Path) -> None:
    for path in corpus_files(corpus):
        if "invalid-file-version" in path.name:
            continue
        data = yaml.safe_load(path.read_text())
        driver = MCPFileDriver(path)
        assert [t.name for t in driver.list_tools()] == expected_names(data), path.name
        for t in driver.list_tools():
            assert t.meta["original_name"] in {x["name"] for k in ("tools", "prompts", "resources", "resourceTemplates") for x in data.get(k) or []}


def test_invalid_version_error_says_what_to_change(corpus: Path) -> None:
    path = corpus / "testdata" / "pkg__mcpfile__testdata__invalid-file-version.yaml"
    with pytest.raises(ConfigurationError) as error:
        MCPFileDriver(path)
    message = str(error.value)
    assert "'0.0.1'" in message and 'mcpFileVersion: "0.1.0"' in message and "servers:" in message


@pytest.mark.parametrize(
    ("version", "hint"),
    [("0.2.0", "kind: MCPToolDefinitions"), ("1.0.0", 'mcpFileVersion: "0.1.0"'), (None, "add 'mcpFileVersion")],
)
def test_other_versions_are_refused_with_a_hint(write_file, version, hint) -> None:
    data = mcp_file(tool("t", HTTP))
    if version is None:
        del data["mcpFileVersion"]
    else:
        data["mcpFileVersion"] = version
    with pytest.raises(ConfigurationError, match="mcpFileVersion") as error:
        MCPFileDriver(write_file(data))
    assert hint in str(error.value)


def test_the_0_2_0_pair_loads_with_its_server_config(corpus: Path, write_file) -> None:
    definitions = corpus / "testdata" / "pkg__config__definitions__testdata__full-demo.yaml"
    server = write_file({
        "kind": "MCPServerConfig", "schemaVersion": "0.2.0",
        "runtime": {"transportProtocol": "streamablehttp",
                    "streamableHttpConfig": {"port": 8443, "basePath": "/api/mcp", "stateless": False,
                                             "health": {"livenessPath": "/live"}},
                    "clientTlsConfig": {"insecureSkipVerify": True}},
    })
    driver = mcs.load_driver("mcpfile", path=definitions, server_config=server)
    settings = driver.runtime_settings()
    assert (settings["port"], settings["base_path"], settings["stateless"]) == (8443, "/api/mcp", False)
    assert driver.health_settings() == {"enabled": True, "liveness_path": "/live", "readiness_path": "/readyz"}
    assert driver.file.http_options.verify is False
    assert [t.name for t in driver.list_tools()] == ["clone_repo", "ensure_dir_exists", "get_repo_url"]


def test_a_0_2_0_definitions_file_without_server_config_gets_the_default_runtime(corpus: Path) -> None:
    driver = MCPFileDriver(corpus / "testdata" / "pkg__config__definitions__testdata__full-demo.yaml")
    assert driver.runtime_settings()["transport"] == "streamablehttp"
    assert driver.runtime_settings()["port"] == 3000


def test_a_server_config_passed_as_path_is_refused_with_directions(write_file) -> None:
    server = write_file({"kind": "MCPServerConfig", "schemaVersion": "0.2.0"})
    with pytest.raises(ConfigurationError, match="server_config="):
        MCPFileDriver(server)


def test_0_2_0_schema_version_and_kind_are_checked(write_file) -> None:
    with pytest.raises(ConfigurationError, match="schemaVersion"):
        MCPFileDriver(write_file({"kind": "MCPToolDefinitions", "schemaVersion": "0.3.0", "name": "n", "version": "1"}))
    with pytest.raises(ConfigurationError, match="invalid kind"):
        MCPFileDriver(write_file({"kind": "Other", "schemaVersion": "0.2.0", "name": "n", "version": "1"}))


def test_no_runtime_means_streamable_http_on_port_3000(write_file) -> None:
    settings = MCPFileDriver(write_file(mcp_file(tool("t", HTTP)))).runtime_settings()
    assert settings == {
        "transport": "streamablehttp", "port": 3000, "base_path": "/mcp", "stateless": True,
        "tls": None, "auth": None,
        "logging": {"level": "info", "encoding": "json", "output_paths": ["stderr"],
                    "error_output_paths": ["stderr"], "initial_fields": {}, "development": False,
                    "disable_caller": False, "disable_stacktrace": False, "enable_mcp_logs": True},
        "name": "test-server", "version": "1.0.0", "instructions": "",
    }


def test_runtime_fields_reach_runtime_settings(write_file) -> None:
    data = mcp_file(tool("t", HTTP), instructions="Use t.\n", runtime={
        "transportProtocol": "streamablehttp",
        "streamableHttpConfig": {
            "port": 8443, "tls": {"certFile": "/c.crt", "keyFile": "/k.key"},
            "auth": {"authorizationServers": ["https://auth.example"], "jwksUri": "https://auth.example/jwks"},
        },
        "loggingConfig": {"level": "debug", "encoding": "console", "outputPaths": ["stdout"], "enableMcpLogs": False},
    })
    settings = MCPFileDriver(write_file(data)).runtime_settings()
    assert settings["tls"] == {"cert_file": "/c.crt", "key_file": "/k.key"}
    assert settings["auth"] == {"authorization_servers": ["https://auth.example"],
                                "jwks_uri": "https://auth.example/jwks", "issuer": None, "audience": None}
    assert settings["logging"] == {"level": "debug", "encoding": "console", "output_paths": ["stdout"],
                                   "error_output_paths": ["stderr"], "initial_fields": {}, "development": False,
                                   "disable_caller": False, "disable_stacktrace": False, "enable_mcp_logs": False}
    assert settings["instructions"] == "Use t.\n"


def test_stdio_runtime(corpus: Path) -> None:
    driver = MCPFileDriver(corpus / "testdata" / "pkg__mcpfile__testdata__server-runtime-stdio.yaml")
    assert driver.runtime_settings()["transport"] == "stdio"
    assert driver.health_settings() is None


def test_unknown_transport_and_bad_port_are_refused(write_file) -> None:
    with pytest.raises(ConfigurationError, match="transportProtocol"):
        MCPFileDriver(write_file(mcp_file(runtime={"transportProtocol": "sse"})))
    with pytest.raises(ConfigurationError, match="port"):
        MCPFileDriver(write_file(mcp_file(runtime={"transportProtocol": "streamablehttp",
                                                   "streamableHttpConfig": {"port": 0}})))


def test_unknown_keys_nulls_and_key_case_are_accepted_as_go_accepts_them(write_file) -> None:
    data = mcp_file(
        {**tool("t", HTTP), "somethingNew": {"x": 1}, "title": None, "requiredScopes": None},
        Instructions="case-insensitive key", runtime=None, prompts=None, futureField=[1, 2],
    )
    driver = MCPFileDriver(write_file(data))
    assert driver.runtime_settings()["instructions"] == "case-insensitive key"
    assert driver.runtime_settings()["port"] == 3000
    assert [t.name for t in driver.list_tools()] == ["t"]


def test_wrong_scalar_types_are_refused_as_go_refuses_them(write_file) -> None:
    with pytest.raises(ConfigurationError, match="port"):
        MCPFileDriver(write_file(mcp_file(runtime={"transportProtocol": "streamablehttp",
                                                   "streamableHttpConfig": {"port": "3000"}})))
    with pytest.raises(ConfigurationError, match="version"):
        MCPFileDriver(write_file("mcpFileVersion: 0.1.0\nname: n\nversion: 1.0\n"))


def test_a_tool_without_input_schema_gets_an_empty_object_schema(write_file) -> None:
    data = mcp_file({"name": "t", "description": "d", "invocation": HTTP})
    (only,) = MCPFileDriver(write_file(data)).list_tools()
    assert only.input_schema == {"type": "object", "properties": {}}


def test_a_non_object_input_schema_is_refused(write_file) -> None:
    data = mcp_file({"name": "t", "description": "d", "inputSchema": {"type": "string"}, "invocation": HTTP})
    with pytest.raises(ConfigurationError, match="type object"):
        MCPFileDriver(write_file(data))


def test_missing_description_and_duplicate_names_are_refused(write_file) -> None:
    with pytest.raises(ConfigurationError, match="description is required"):
        MCPFileDriver(write_file(mcp_file({"name": "t", "invocation": HTTP})))
    with pytest.raises(ConfigurationError, match="used twice"):
        MCPFileDriver(write_file(mcp_file(tool("t", HTTP), tool("t", HTTP))))


def test_an_invocation_needs_exactly_one_kind(write_file) -> None:
    both = {"http": HTTP["http"], "cli": {"command": "true"}}
    with pytest.raises(ConfigurationError, match="exactly one"):
        MCPFileDriver(write_file(mcp_file(tool("t", both))))


def test_a_placeholder_without_property_names_the_tool_and_placeholder(write_file) -> None:
    url = {"http": {"method": "GET", "url": "http://127.0.0.1:9/users/{userId}"}}
    with pytest.raises(ConfigurationError) as error:
        MCPFileDriver(write_file(mcp_file(tool("get_user", url, {"id": {"type": "string"}}))))
    assert "get_user" in str(error.value) and "{userId}" in str(error.value)
    cli = {"cli": {"command": "echo {missing}"}}
    with pytest.raises(ConfigurationError, match=r"\{missing\}"):
        MCPFileDriver(write_file(mcp_file(tool("echo", cli))))


def test_malformed_templates_are_refused(write_file) -> None:
    for url in ("http://h/{a", "http://h/a}", "http://h/${}"):
        with pytest.raises(ConfigurationError):
            MCPFileDriver(write_file(mcp_file(tool("t", {"http": {"method": "GET", "url": url}},
                                                   {"a": {"type": "string"}}))))


def test_invalid_method_and_body_options_are_refused(write_file) -> None:
    with pytest.raises(ConfigurationError, match="method"):
        MCPFileDriver(write_file(mcp_file(tool("t", {"http": {"method": "TRACE", "url": "http://h/"}}))))
    both = {"http": {"method": "POST", "url": "http://h/", "bodyRoot": "a", "bodyAsArray": True}}
    with pytest.raises(ConfigurationError, match="mutually exclusive"):
        MCPFileDriver(write_file(mcp_file(tool("t", both, {"a": {"type": "string"}}))))


def test_resource_templates_need_a_valid_rfc6570_template(write_file) -> None:
    data = mcp_file(resourceTemplates=[{
        "name": "r", "description": "d", "uriTemplate": "file:///{bad name}",
        "inputSchema": {"type": "object", "properties": {}}, "invocation": HTTP,
    }])
    with pytest.raises(ConfigurationError, match="URI template"):
        MCPFileDriver(write_file(data))


def test_static_resources_cannot_use_argument_placeholders(write_file) -> None:
    data = mcp_file(resources=[{
        "name": "r", "description": "d", "uri": "file:///r",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}},
        "invocation": {"cli": {"command": "cat {a}"}},
    }])
    with pytest.raises(ConfigurationError, match="static resource"):
        MCPFileDriver(write_file(data))


def test_genmcp_environment_overrides_apply(write_file, monkeypatch) -> None:
    monkeypatch.setenv("GENMCP_STREAMABLEHTTPCONFIG_PORT", "9000")
    monkeypatch.setenv("GENMCP_STREAMABLEHTTPCONFIG_STATELESS", "false")
    monkeypatch.setenv("GENMCP_STREAMABLEHTTPCONFIG_TLS_CERTFILE", "/c.crt")
    monkeypatch.setenv("GENMCP_STREAMABLEHTTPCONFIG_TLS_KEYFILE", "/k.key")
    monkeypatch.setenv("GENMCP_LOGGINGCONFIG_OUTPUTPATHS", "/out/1,/out/2")
    monkeypatch.setenv("GENMCP_LOGGINGCONFIG_INITIALFIELDS", '{"service": "genmcp"}')
    driver = MCPFileDriver(write_file(mcp_file(tool("t", HTTP))))
    settings = driver.runtime_settings()
    assert settings["port"] == 9000 and settings["stateless"] is False
    assert settings["tls"] == {"cert_file": "/c.crt", "key_file": "/k.key"}
    assert settings["logging"]["output_paths"] == ["/out/1", "/out/2"]
    assert driver.file.runtime.logging_config.initial_fields == {"service": "genmcp"}


def test_genmcp_transport_override_and_bad_values(write_file, monkeypatch) -> None:
    path = write_file(mcp_file(tool("t", HTTP)))
    monkeypatch.setenv("GENMCP_TRANSPORTPROTOCOL", "stdio")
    assert MCPFileDriver(path).runtime_settings()["transport"] == "stdio"
    monkeypatch.setenv("GENMCP_STREAMABLEHTTPCONFIG_PORT", '"9000"')
    with pytest.raises(ConfigurationError, match="GENMCP_STREAMABLEHTTPCONFIG_PORT"):
        MCPFileDriver(path)
    assert MCPFileDriver(path, apply_env_overrides=False).runtime_settings()["transport"] == "streamablehttp"


def test_override_names_follow_go_field_names() -> None:
    names = override_names()
    for expected in ("GENMCP_TRANSPORTPROTOCOL", "GENMCP_STREAMABLEHTTPCONFIG_PORT",
                     "GENMCP_STREAMABLEHTTPCONFIG_AUTH_JWKSURI", "GENMCP_LOGGINGCONFIG_ENABLEMCPLOGS",
                     "GENMCP_STREAMABLEHTTPCONFIG_HEALTH_LIVENESSPATH", "GENMCP_CLIENTTLSCONFIG_CACERTFILES"):
        assert expected in names


def test_scopes_and_annotations_reach_the_tools(corpus: Path, write_file) -> None:
    (only,) = MCPFileDriver(corpus / "testdata" / "pkg__mcpfile__testdata__one-server-tools.yaml").list_tools()
    assert only.annotations == {"readOnlyHint": True, "idempotentHint": False, "openWorldHint": False,
                                "destructiveHint": False, "title": "Users Provider"}
    data = mcp_file(tool("admin", HTTP, requiredScopes=["admin:read", "admin:write"]))
    (admin,) = MCPFileDriver(write_file(data)).list_tools()
    assert admin.meta["required_scopes"] == ("admin:read", "admin:write")


def test_driver_meta(corpus: Path) -> None:
    driver = MCPFileDriver(corpus / "testdata" / "pkg__mcpfile__testdata__full-demo.yaml")
    assert driver.meta.protocol == "MCP" and driver.meta.spec_format == "MCP File"
    assert driver.meta.name == "git-github-example" and driver.meta.version == "1.0.0"
    assert driver.meta.transport == "HTTP, CLI"


def test_the_reference_examples_load(corpus: Path, write_file) -> None:
    import re

    text = (corpus / "reference" / "docs__mcp_file_format.md").read_text()
    examples = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if b.lstrip().startswith("mcpFileVersion")]
    assert len(examples) >= 9
    refused = []
    for example in examples:
        try:
            MCPFileDriver(write_file(example))
        except ConfigurationError as error:
            refused.append(str(error))
    # Only the OAuth snippet, whose tool is elided ("# ... rest of tool definition"), is incomplete.
    assert len(refused) == 1 and "admin_tool" in refused[0] and "invocation is required" in refused[0]


@pytest.mark.parametrize(
    ("name", "transport", "port", "tls"),
    [
        ("pkg__mcpfile__testdata__full-demo.yaml", "streamablehttp", 8008, None),
        ("pkg__mcpfile__testdata__one-server-tls.yaml", "streamablehttp", 7007,
         {"cert_file": "/path/to/server.crt", "key_file": "/path/to/server.key"}),
        ("pkg__mcpfile__testdata__server-runtime-stdio.yaml", "stdio", 3000, None),
        ("pkg__mcpfile__testdata__one-server-tools.yaml", "streamablehttp", 3000, None),
    ],
)
def test_corpus_runtimes_match_genmcp_parser_expectations(corpus: Path, name, transport, port, tls) -> None:
    settings = MCPFileDriver(corpus / "testdata" / name).runtime_settings()
    assert (settings["transport"], settings["port"], settings["tls"]) == (transport, port, tls)
    assert settings["base_path"] == "/mcp" and settings["stateless"] is True


def test_corpus_prompts_and_resources_match_genmcp_parser_expectations(corpus: Path) -> None:
    data = corpus / "testdata"
    (prompt,) = MCPFileDriver(data / "pkg__mcpfile__testdata__one-server-prompts.yaml").prompts()
    assert (prompt.name, prompt.title) == ("code_review", "Request Code Review")
    assert [(a.name, a.title, a.description, a.required) for a in prompt.arguments] == [
        ("code", "Code", "The code to review", True)]
    (resource,) = MCPFileDriver(data / "pkg__mcpfile__testdata__one-server-resources.yaml").resources()
    assert (resource.uri, resource.mime_type, resource.size) == ("http://localhost:5000/access.log", "text/plain", 1024)
    (template,) = MCPFileDriver(data / "pkg__mcpfile__testdata__one-server-resource-templates.yaml").resource_templates()
    assert (template.uri_template, template.mime_type) == ("weather://forecast/{city}/{date}", "application/json")
    assert template.input_schema["required"] == ["city", "date"]


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def _invisible(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in text if unicodedata.category(c) == "Cf"]


def test_names_titles_and_descriptions_carry_no_invisible_characters(tmp_path: Path) -> None:
    schema = {"type": "object", "title": f"Ask{HIDDEN}",
              "properties": {"who": {"type": "string", "description": f"Who asks{HIDDEN}.", "default": "me"}}}
    data = mcp_file(
        {"name": "ask", "title": f"Ask{HIDDEN}", "description": f"Asks{HIDDEN}.", "inputSchema": schema,
         "annotations": {"title": f"Ask it{HIDDEN}"}, "invocation": HTTP},
        instructions=f"Be kind{HIDDEN}.",
        prompts=[{"name": f"greet{HIDDEN}", "title": f"Greet{HIDDEN}", "description": f"Greets{HIDDEN}.",
                  "arguments": [{"name": "who", "description": f"Whom{HIDDEN}."}],
                  "invocation": {"cli": {"command": "echo hi"}}}],
        resources=[{"name": f"notes{HIDDEN}", "description": f"The notes{HIDDEN}.", "uri": "file:///notes",
                    "invocation": HTTP}],
        resourceTemplates=[{"name": f"note{HIDDEN}", "description": f"One note{HIDDEN}.",
                            "uriTemplate": "file:///notes/{id}", "invocation": {"http": {
                                "method": "GET", "url": "http://127.0.0.1:9/notes/{id}"}},
                            "inputSchema": {"type": "object", "properties": {
                                "id": {"type": "string", "description": f"Its id{HIDDEN}."}}}}],
    )
    path = tmp_path / "hidden.yaml"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")  # JSON is YAML
    driver = MCPFileDriver(path)
    tools = driver.list_tools()
    shown = [json.dumps([t.name, t.title, t.description, t.input_schema, t.annotations], ensure_ascii=False) for t in tools]
    shown += [json.dumps([str(spec) for spec in driver.prompts() + driver.resources() + driver.resource_templates()],
                         ensure_ascii=False),
              driver.file.instructions, driver.get_function_description()]
    assert "Who asks." in shown[0] and "Asks." in shown[0] and "Its id." in shown[3]
    assert [p.name for p in driver.prompts()] == ["greet"]
    assert [_invisible(text) for text in shown] == [[]] * len(shown)
