"""The MCP file format 0.1.0 section by section, where the seeds audit found gaps: the runtime
(3), loggingConfig (3.5), HTTP retries and credentials (6.1), templateVariables (6.2) and
overrides (6.4); and the MCS spec's capabilities (5) and description modes (7) for files."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcpfile_support import Recorder, Reply, mcp_file, tool
from support.servers import free_port

from mcs.context import AgentContext
from mcs.errors import ConfigurationError, ExecutionError

NewDriver = Callable[..., Any]
WriteFile = Callable[..., Path]
GIT_STATUS = {"cli": {"command": "git status {depth}"}}


# ------------------------------------------------------------------ 6.2 templateVariables


def test_mcp_file_s6_2_a_template_variable_no_placeholder_uses_is_refused(write_file: WriteFile) -> None:
    invocation = {"cli": {"command": "git status", "templateVariables": {"depth": {"format": "--depth {depth}"}}}}
    path = write_file(mcp_file(tool("status", invocation, {"depth": {"type": "integer"}})))
    with pytest.raises(ConfigurationError, match=r"templateVariables\.depth is not used: the command has no \{depth\}"):
        from mcs_mcp.mcpfile import MCPFileDriver

        MCPFileDriver(path)


def test_mcp_file_s6_4_an_override_that_drops_a_used_format_is_warned_about(
    write_file: WriteFile, new_driver: NewDriver, caplog: pytest.LogCaptureFixture
) -> None:
    data = mcp_file(  # the format's own "CLI Extension" example
        tool("git_clone", {"extends": {
            "from": "baseGitCommand", "extend": {"command": " {repoUrl}"},
            "override": {"templateVariables": {"operation": {"format": "clone"}}},
        }}, {"repoUrl": {"type": "string"}, "verbose": {"type": "boolean"}}, ["repoUrl"]),
        invocationBases={"baseGitCommand": {"cli": {
            "command": "git {operation} {verbose}",
            "templateVariables": {"verbose": {"format": "--verbose", "omitIfFalse": True}},
        }}},
    )
    with caplog.at_level(logging.WARNING, "mcs_mcp.mcpfile"):
        new_driver(write_file(data))
    [warning] = caplog.records
    assert "drops 'verbose'" in warning.getMessage() and "{verbose}" in warning.getMessage()
    assert "'--verbose'" in warning.getMessage()


# ------------------------------------------------------------------ 3 runtime, 3.5 logging


def test_mcp_file_s3_streamable_http_without_its_config_is_refused(write_file: WriteFile) -> None:
    from mcs_mcp.mcpfile import MCPFileDriver

    data = mcp_file(tool("t", GIT_STATUS, {"depth": {"type": "integer"}}),
                    runtime={"transportProtocol": "streamablehttp"})
    with pytest.raises(ConfigurationError, match="streamableHttpConfig is required when transportProtocol"):
        MCPFileDriver(write_file(data))
    assert MCPFileDriver(write_file(mcp_file(tool("t", GIT_STATUS, {"depth": {"type": "integer"}})))
                         ).runtime_settings()["port"] == 3000


def test_mcp_file_s3_5_an_encoding_zap_does_not_know_is_refused(write_file: WriteFile) -> None:
    from mcs_mcp.mcpfile import MCPFileDriver

    data = mcp_file(tool("t", GIT_STATUS, {"depth": {"type": "integer"}}), runtime={
        "transportProtocol": "stdio", "loggingConfig": {"encoding": "logfmt"}})
    with pytest.raises(ConfigurationError, match=r'encoding must be "json" or "console".*logfmt'):
        MCPFileDriver(write_file(data))


def test_mcp_file_s3_5_every_logging_field_reaches_the_runtime_settings(
    write_file: WriteFile, new_driver: NewDriver, tmp_path: Path
) -> None:
    data = mcp_file(tool("t", GIT_STATUS, {"depth": {"type": "integer"}}), runtime={
        "transportProtocol": "stdio", "loggingConfig": {  # the format's section 7.2 example, on tmp_path
            "level": "info", "encoding": "json", "development": True, "disableCaller": True,
            "disableStacktrace": True, "outputPaths": [f"file://{tmp_path}/mcp-server.log", "stdout"],
            "errorOutputPaths": [str(tmp_path / "mcp-server-error.log"), "stderr"],
            "initialFields": {"service": "mcp-api", "version": "1.0.0"}, "enableMcpLogs": True,
        }})
    logging_settings = new_driver(write_file(data)).runtime_settings()["logging"]
    assert logging_settings == {
        "level": "info", "encoding": "json",
        "output_paths": [f"file://{tmp_path}/mcp-server.log", "stdout"],
        "error_output_paths": [str(tmp_path / "mcp-server-error.log"), "stderr"],
        "initial_fields": {"service": "mcp-api", "version": "1.0.0"},
        "development": True, "disable_caller": True, "disable_stacktrace": True, "enable_mcp_logs": True,
    }


# ------------------------------------------------------------------ 6.1 HTTP: retries


def _get(recorder: Recorder, method: str = "GET") -> dict[str, Any]:
    return mcp_file(tool("fetch", {"http": {"method": method, "url": f"{recorder.url}/flaky"}}))


def test_mcp_file_s6_1_an_idempotent_request_answered_503_is_retried(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    recorder.replies["/flaky"] = [Reply(status=503, body=b"busy"), Reply(body=b'{"done": true}')]
    driver = new_driver(write_file(_get(recorder)), backoff=0.01)
    assert driver.call_tool("fetch") == {"done": True}
    assert [r.method for r in recorder.requests] == ["GET", "GET"]


def test_mcp_file_s6_1_a_post_answered_503_is_not_retried(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    recorder.replies["/flaky"] = [Reply(status=503, body=b"busy"), Reply(body=b'{"done": true}')]
    driver = new_driver(write_file(_get(recorder, "POST")), backoff=0.01)
    with pytest.raises(ExecutionError, match="503"):
        driver.call_tool("fetch")
    assert len(recorder.requests) == 1


def test_mcp_file_s6_1_a_retry_that_would_pass_the_deadline_is_not_started(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    recorder.replies["/flaky"] = Reply(status=503, body=b"busy", headers={"Retry-After": "120"})
    driver = new_driver(write_file(_get(recorder)), backoff=0.01, timeout=5)
    with pytest.raises(ExecutionError, match="503"):
        driver.call_tool("fetch")
    assert len(recorder.requests) == 1


async def test_mcp_file_s6_1_async_calls_retry_too(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    recorder.replies["/flaky"] = [Reply(status=502), Reply(status=504), Reply(body=b'{"done": 3}')]
    driver = new_driver(write_file(_get(recorder)), backoff=0.01)
    assert await driver.acall_tool("fetch") == {"done": 3}
    assert len(recorder.requests) == 3


# ------------------------------------------------------------------ 6.1 HTTP: forwarded credentials


def test_mcp_file_s6_1_credential_forwarding_works_when_the_application_passes_the_header(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    invocation = {"http": {"method": "GET", "url": f"{recorder.url}/proxy",
                           "headers": {"Authorization": "{headers.Authorization}"}}}
    driver = new_driver(write_file(mcp_file(tool("proxy", invocation))), allow_credential_forwarding=True)
    assert driver.forwarded_credentials == ("tool 'proxy': {headers.Authorization}",)
    caller = AgentContext(metadata={"header:authorization": "Bearer user-token"})
    driver.call_tool("proxy", context=caller)
    assert recorder.last.headers["authorization"] == "Bearer user-token"
    with pytest.raises(ExecutionError) as error:
        driver.call_tool("proxy")
    assert "this call's context carries none" in error.value.message
    assert "never hands a caller's credentials to a driver" in error.value.message


# ------------------------------------------------------------------ MCS spec 5 and 7 for files


def test_mcs_spec_s5_an_mcp_file_checks_its_hosts_and_shell(
    write_file: WriteFile, new_driver: NewDriver, recorder: Recorder
) -> None:
    down = f"http://127.0.0.1:{free_port()}"
    data = mcp_file(
        tool("fetch", {"http": {"method": "GET", "url": f"{recorder.url}/a/{{id}}"}}, {"id": {"type": "string"}}),
        tool("other", {"http": {"method": "POST", "url": f"{recorder.url}/b"}}),
        tool("status", GIT_STATUS, {"depth": {"type": "integer"}}),
    )
    driver = new_driver(write_file(data))
    assert driver.supports("healthcheck")
    report = driver.healthcheck()
    assert report == {"status": "ok", "checks": {recorder.url: "ok", "bash": "ok"}}
    assert [r.method for r in recorder.requests] == ["HEAD"]  # one per origin, and no tool ran
    broken = new_driver(write_file(mcp_file(tool("gone", {"http": {"method": "GET", "url": down + "/x"}}))), timeout=2)
    assert broken.healthcheck() == {"status": "error", "checks": {down: "unreachable (ConnectError)"}}


def test_mcs_spec_s7_a_large_file_is_described_in_discovery_mode(write_file: WriteFile, new_driver: NewDriver) -> None:
    properties = {f"field_{i}": {"type": "string", "description": "x" * 80} for i in range(12)}
    tools = [tool(f"op_{n}", {"cli": {"command": "echo done"}}, properties) for n in range(60)]
    driver = new_driver(write_file(mcp_file(*tools)))
    description = driver.get_function_description()
    assert "search_tools" in description and "describe_tool" in description
    assert driver.get_tool("op_59") is not None
    small = new_driver(write_file(mcp_file(tools[0])))
    assert "search_tools" not in small.get_function_description()
    docs = (Path(__file__).resolve().parents[4] / "docs" / "mcpfile.md").read_text(encoding="utf-8")
    assert "## Description mode" in docs and "discovery" in docs
