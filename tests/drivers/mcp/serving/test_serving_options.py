"""ServeOptions from gen-mcp runtime settings, GENMCP_ overrides and CLI flags."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from mcs_mcp.serving import LoggingOptions, OAuthOptions, ServeOptions, TLSOptions
from mcs_mcp.serving.cli import apply_flags, is_mcp_file
from mcs_mcp.serving.options import apply_genmcp_env, genmcp_env_names

from mcs.errors import ConfigurationError

RUNTIME = {
    "transport": "streamablehttp",
    "port": 8443,
    "base_path": "/api/mcp/",
    "stateless": False,
    "tls": {"cert_file": "/etc/ssl/server.crt", "key_file": "/etc/ssl/server.key"},
    "auth": {"authorization_servers": ["https://auth.example.com"], "jwks_uri": "https://auth.example.com/jwks",
             "issuer": None, "audience": None},
    "logging": {"level": "warn", "encoding": "json", "output_paths": ["/var/log/mcp.log"], "enable_mcp_logs": False},
    "name": "weather", "version": "2.0.0", "instructions": "Use get_forecast first.",
}


def test_runtime_settings_become_serve_options() -> None:
    options = ServeOptions.from_runtime_settings(RUNTIME)
    assert options.transport == "streamablehttp" and options.port == 8443
    assert options.base_path == "/api/mcp"
    assert options.stateless is False
    assert options.tls == TLSOptions("/etc/ssl/server.crt", "/etc/ssl/server.key")
    assert options.auth == OAuthOptions(authorization_servers=("https://auth.example.com",),
                                        jwks_uri="https://auth.example.com/jwks")
    assert options.logging == LoggingOptions("warn", "json", ("/var/log/mcp.log",), False)
    assert (options.name, options.version, options.instructions) == ("weather", "2.0.0", "Use get_forecast first.")
    assert options.url == "https://127.0.0.1:8443/api/mcp"
    assert options.host == "127.0.0.1"


def test_empty_runtime_settings_give_the_safe_defaults() -> None:
    options = ServeOptions.from_runtime_settings({})
    assert options == ServeOptions()
    assert options.logging.enable_mcp_logs is True


@pytest.mark.parametrize(
    "settings",
    [{"transport": "websocket"}, {"port": "eighty"}, {"port": 70000}, {"tls": {"cert_file": "/x"}},
     {"logging": {"level": "loud"}}, {"logging": {"encoding": "xml"}}],
)
def test_bad_runtime_settings_are_configuration_errors(settings: dict[str, object]) -> None:
    with pytest.raises(ConfigurationError):
        ServeOptions.from_runtime_settings(settings)


def test_genmcp_environment_overrides_runtime_fields() -> None:
    env = {
        "GENMCP_TRANSPORTPROTOCOL": "stdio",
        "GENMCP_STREAMABLEHTTPCONFIG_PORT": "9000",
        "GENMCP_STREAMABLEHTTPCONFIG_STATELESS": "true",
        "GENMCP_STREAMABLEHTTPCONFIG_AUTH_AUDIENCE": "https://mcp.example.com/mcp",
        "GENMCP_LOGGINGCONFIG_OUTPUTPATHS": "/out/1,/out/2",
        "GENMCP_LOGGINGCONFIG_ENABLEMCPLOGS": "true",
        "UNRELATED": "x",
    }
    merged = apply_genmcp_env(RUNTIME, env)
    assert merged["transport"] == "stdio" and merged["port"] == 9000 and merged["stateless"] is True
    assert merged["auth"]["audience"] == "https://mcp.example.com/mcp"
    assert merged["auth"]["jwks_uri"] == "https://auth.example.com/jwks"  # untouched fields stay
    assert merged["logging"]["output_paths"] == ["/out/1", "/out/2"]
    assert RUNTIME["port"] == 8443  # the input is not modified
    options = ServeOptions.from_runtime_settings(merged)
    assert options.transport == "stdio" and options.logging.enable_mcp_logs is True


def test_genmcp_environment_values_are_type_checked_like_gen_mcp() -> None:
    with pytest.raises(ConfigurationError, match="GENMCP_STREAMABLEHTTPCONFIG_PORT"):
        apply_genmcp_env({}, {"GENMCP_STREAMABLEHTTPCONFIG_PORT": '"9000"'})
    with pytest.raises(ConfigurationError, match="true or false"):
        apply_genmcp_env({}, {"GENMCP_LOGGINGCONFIG_ENABLEMCPLOGS": "maybe"})
    tls = apply_genmcp_env({}, {"GENMCP_STREAMABLEHTTPCONFIG_TLS_CERTFILE": "/c.pem",
                                "GENMCP_STREAMABLEHTTPCONFIG_TLS_KEYFILE": "/k.pem"})
    assert tls == {"tls": {"cert_file": "/c.pem", "key_file": "/k.pem"}}
    assert "GENMCP_STREAMABLEHTTPCONFIG_BASEPATH" in genmcp_env_names()


def _args(**values: object) -> argparse.Namespace:
    defaults: dict[str, object] = {"transport": None, "host": None, "port": None, "serve_option": None}
    defaults.update(values)
    return argparse.Namespace(**defaults)


def test_command_line_flags_win_over_the_file() -> None:
    base = ServeOptions.from_runtime_settings(RUNTIME)
    options = apply_flags(base, _args(
        transport="http", host="0.0.0.0", port=9100,
        serve_option=["base_path=/x", "stateful=false", "oauth_audience=https://a/mcp", "log_level=debug",
                      "allowed_hosts=mcp.internal:*,other:*", "mcp_logs=true"],
    ))
    assert (options.host, options.port, options.base_path, options.stateless) == ("0.0.0.0", 9100, "/x", True)
    assert options.auth is not None and options.auth.audience == "https://a/mcp"
    assert options.auth.jwks_uri == "https://auth.example.com/jwks"
    assert options.logging.level == "debug" and options.logging.encoding == "json"
    assert options.logging.enable_mcp_logs is True
    assert options.allowed_hosts == ("mcp.internal:*", "other:*")
    assert apply_flags(base, _args(transport="stdio")).transport == "stdio"


def test_mcp_files_are_recognised_by_their_content(tmp_path: Path) -> None:
    v1 = tmp_path / "a.yaml"
    v1.write_text("mcpFileVersion: 0.1.0\nname: x\nversion: 1.0.0\ntools: []\n")
    v2 = tmp_path / "b.yml"
    v2.write_text("kind: MCPToolDefinitions\nschemaVersion: 0.2.0\n")
    as_json = tmp_path / "c.json"
    as_json.write_text('{"mcpFileVersion": "0.1.0"}')
    other = tmp_path / "toolbox.yaml"
    other.write_text("drivers: [functions]\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text("mcpFileVersion: [unclosed\n")
    assert [is_mcp_file(p) for p in (v1, v2, as_json, other, broken, tmp_path / "missing.yaml")] == [
        True, True, True, False, False, False,
    ]


def test_mcp_file_s3_5_every_logging_field_does_what_zap_does(tmp_path: Path) -> None:
    import logging

    from mcs_mcp.serving.logs import configure_logging
    from mcs_mcp.serving.options import logging_options

    out, errors = tmp_path / "mcp-server.log", tmp_path / "mcp-server-error.log"
    options = logging_options({
        "level": "info", "encoding": "json", "output_paths": [f"file://{out}"], "error_output_paths": [str(errors)],
        "initial_fields": {"service": "mcp-api", "version": "1.0.0"},
    })
    log = logging.getLogger("mcs.seed_test")
    undo = configure_logging(options)
    try:
        log.info("ready")
        log.error("failed")
    finally:
        undo()
    ready, failed = (json.loads(line) for line in out.read_text().splitlines())
    assert (ready["msg"], ready["service"], ready["version"]) == ("ready", "mcp-api", "1.0.0")
    assert ready["caller"] == "serving/test_serving_options.py:" + ready["caller"].rsplit(":", 1)[1]
    assert "stacktrace" not in ready
    assert "test_mcp_file_s3_5_every_logging_field_does_what_zap_does" in failed["stacktrace"]

    full = logging_options({"output_paths": ["/dev/full"], "error_output_paths": [str(errors)]})
    undo = configure_logging(full)  # every write to /dev/full fails: the logging itself errs
    try:
        log.warning("lost")
    finally:
        undo()
    assert "logging error" in errors.read_text() and "mcs.seed_test" in errors.read_text()

    quiet = logging_options({"encoding": "console", "output_paths": [str(out)], "development": True,
                             "disable_caller": True, "disable_stacktrace": True})
    undo = configure_logging(quiet)
    try:
        log.warning("careful")
    finally:
        undo()
    line = out.read_text().splitlines()[-1]
    assert line.endswith("WARNING mcs.seed_test: careful")


def test_mcp_file_s3_5_development_takes_stack_traces_from_warnings(tmp_path: Path) -> None:
    import logging

    from mcs_mcp.serving.logs import configure_logging
    from mcs_mcp.serving.options import logging_options

    out = tmp_path / "dev.log"
    undo = configure_logging(logging_options({"encoding": "json", "output_paths": [str(out)], "development": True}))
    try:
        logging.getLogger("mcs.seed_test").warning("careful")
    finally:
        undo()
    assert "stacktrace" in json.loads(out.read_text())


def test_mcp_file_s3_5_an_output_url_of_another_scheme_is_refused() -> None:
    from mcs_mcp.serving.options import logging_options

    with pytest.raises(ConfigurationError, match="only stdout, stderr, file paths and file:// URLs"):
        logging_options({"output_paths": ["syslog://127.0.0.1:514"]})
