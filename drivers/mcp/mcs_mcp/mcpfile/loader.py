"""Reading gen-mcp files: versions, defaults, ``GENMCP_*`` overrides, checks, compilation.

:func:`load` reads a ``mcpFileVersion: 0.1.0`` file, or a 0.2.0 pair (``kind:
MCPToolDefinitions`` plus an optional ``kind: MCPServerConfig``), and returns a
:class:`LoadedFile` whose primitives carry compiled invokers. Everything that can be
wrong with a file is reported here, as :class:`mcs.errors.ConfigurationError` naming the
file, the primitive and the field; nothing is left to fail at call time except values.
"""

from __future__ import annotations

import dataclasses
import json
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ValidationError

from mcs.errors import ConfigurationError
from mcs.tools import visible_text
from mcs.validation import compile_validator
from mcs_mcp.mcpfile import extends, model, shell
from mcs_mcp.mcpfile.cli import LINKED_PATH, UNKNOWN_PATH, CliInvoker, CliOptions, compile_cli
from mcs_mcp.mcpfile.http import HttpInvoker, HttpOptions, compile_http, ssl_context
from mcs_mcp.mcpfile.uritemplate import UriTemplate

MCP_FILE_VERSION = "0.1.0"
SCHEMA_VERSION = "0.2.0"
KIND_DEFINITIONS = "MCPToolDefinitions"
KIND_SERVER = "MCPServerConfig"
ENV_PREFIX = "GENMCP"

PrimitiveKind = Literal["tool", "prompt", "resource", "resource_template"]
Invoker = HttpInvoker | CliInvoker


@dataclass(frozen=True)
class Primitive:
    """One tool, prompt, resource or resource template, compiled."""

    kind: PrimitiveKind
    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    required_scopes: tuple[str, ...]
    invoker: Invoker
    annotations: dict[str, Any] = field(default_factory=dict)
    arguments: tuple[model.PromptArgument, ...] = ()
    uri: str = ""
    uri_template: UriTemplate | None = None
    mime_type: str = ""
    size: int = 0


@dataclass(frozen=True)
class LoadedFile:
    """A whole file (or pair), ready to serve and call."""

    path: Path
    format_version: str  # "0.1.0" or "0.2.0"
    name: str
    version: str
    instructions: str
    runtime: model.ServerRuntime
    primitives: tuple[Primitive, ...]
    http_options: HttpOptions
    cli_options: CliOptions


def read_yaml(path: Path) -> Any:
    """Parse ``path`` as YAML.

    Raises:
        ConfigurationError: the file is missing, unreadable or not YAML.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigurationError(f"cannot read the MCP file {path}: {exc.strerror or exc}") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigurationError(f"{path} is not valid YAML: {exc}") from None


def load(
    path: str | Path,
    server_config: str | Path | None = None,
    *,
    http_options: HttpOptions | None = None,
    cli_options: CliOptions | None = None,
    apply_env_overrides: bool = True,
    environ: Mapping[str, str] | None = None,
) -> LoadedFile:
    """Load a gen-mcp file; see the module docstring.

    Raises:
        ConfigurationError: the file (or pair) is refused; the message says what to change.
    """
    path = Path(path)
    data = read_yaml(path)
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{path}: an MCP file is a YAML mapping at the top level")
    kind = _str_key(data, "kind")
    if kind == KIND_SERVER:
        raise ConfigurationError(
            f"{path} is a server configuration (kind: {KIND_SERVER}); pass it as server_config= "
            f"and the tool definitions (kind: {KIND_DEFINITIONS}) as path="
        )
    if kind is not None:
        definitions: model._Definitions = _definitions_020(path, data, kind)
        runtime = _server_config_020(Path(server_config)) if server_config is not None else None
        version = SCHEMA_VERSION
    else:
        if server_config is not None:
            raise ConfigurationError(
                f"{path} is an mcpFileVersion 0.1.0 file, which holds its own runtime; "
                "server_config= is only for 0.2.0 pairs"
            )
        file010 = _file_010(path, data)
        definitions, runtime, version = file010, file010.runtime, MCP_FILE_VERSION
    check_http_config(runtime, where=str(server_config if kind is not None and server_config else path))
    runtime = with_runtime_defaults(runtime)
    if apply_env_overrides:
        runtime = apply_overrides(runtime, os.environ if environ is None else environ)
    check_runtime(runtime, where=str(path))
    if not definitions.name:
        raise ConfigurationError(f"{path}: 'name' is required (the server's name)")
    if not definitions.version:
        raise ConfigurationError(f"{path}: 'version' is required (the toolset's version)")
    client_tls = runtime.client_tls_config
    http = http_options or HttpOptions()
    if client_tls is not None:
        verify = ssl_context(client_tls.ca_cert_files, client_tls.ca_cert_dir, client_tls.insecure_skip_verify)
        http = dataclasses.replace(http, verify=verify)
    cli = cli_options or CliOptions()
    primitives = _compile_primitives(path, definitions, http, cli)
    return LoadedFile(
        path=path,
        format_version=version,
        name=definitions.name,
        version=definitions.version,
        instructions=visible_text(definitions.instructions),
        runtime=runtime,
        primitives=primitives,
        http_options=http,
        cli_options=cli,
    )


# ----------------------------------------------------------------------------- versions


def _str_key(data: Mapping[str, Any], key: str) -> str | None:
    for k, v in data.items():
        if isinstance(k, str) and k.lower() == key.lower():
            return v if isinstance(v, str) else (None if v is None else str(v))
    return None


def _validated(cls: type[model._GoModel], data: Any, where: str) -> Any:
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        problems = []
        for error in exc.errors()[:5]:
            loc = ".".join(str(p) for p in error["loc"])
            problems.append(f"{loc or 'top level'}: {error['msg']}")
        raise ConfigurationError(f"{where}: " + "; ".join(problems)) from None


def _file_010(path: Path, data: Mapping[str, Any]) -> model.MCPFile010:
    version = _str_key(data, "mcpFileVersion")
    schema_version = _str_key(data, "schemaVersion")
    if version != MCP_FILE_VERSION:
        if version is None and schema_version is not None:
            hint = f"a 0.2.0 tool definitions file also needs 'kind: {KIND_DEFINITIONS}'"
        elif version is None:
            hint = f"add 'mcpFileVersion: \"{MCP_FILE_VERSION}\"' at the top"
        elif version == SCHEMA_VERSION:
            hint = (
                f"0.2.0 files use 'kind: {KIND_DEFINITIONS}' and 'schemaVersion: \"0.2.0\"' instead of "
                "mcpFileVersion, with the runtime in a separate 'kind: MCPServerConfig' file"
            )
        elif version.startswith("0.0"):
            hint = (
                "migrate it: the 'servers:' list is gone, its one server's name, version and tools "
                f"move to the top level, then set 'mcpFileVersion: \"{MCP_FILE_VERSION}\"'"
            )
        else:
            hint = f"set 'mcpFileVersion: \"{MCP_FILE_VERSION}\"' and check the file against that format"
        raise ConfigurationError(
            f"{path}: unsupported mcpFileVersion {version!r}; this driver reads {MCP_FILE_VERSION} "
            f"(and the 0.2.0 pair): {hint}"
        )
    return _validated(model.MCPFile010, data, str(path))  # type: ignore[no-any-return]


def _definitions_020(path: Path, data: Mapping[str, Any], kind: str) -> model.ToolDefinitions020:
    if kind != KIND_DEFINITIONS:
        raise ConfigurationError(f"{path}: invalid kind {kind!r}, expected {KIND_DEFINITIONS} (or {KIND_SERVER})")
    version = _str_key(data, "schemaVersion")
    if version != SCHEMA_VERSION:
        raise ConfigurationError(
            f"{path}: invalid schemaVersion {version!r}; set 'schemaVersion: \"{SCHEMA_VERSION}\"' "
            "and check the file against that format"
        )
    return _validated(model.ToolDefinitions020, data, str(path))  # type: ignore[no-any-return]


def _server_config_020(path: Path) -> model.ServerRuntime | None:
    data = read_yaml(path)
    if not isinstance(data, Mapping):
        raise ConfigurationError(f"{path}: a server configuration is a YAML mapping")
    kind = _str_key(data, "kind")
    if kind != KIND_SERVER:
        raise ConfigurationError(
            f"{path}: server_config= needs 'kind: {KIND_SERVER}', got {kind!r}"
        )
    version = _str_key(data, "schemaVersion")
    if version != SCHEMA_VERSION:
        raise ConfigurationError(f"{path}: invalid schemaVersion {version!r}; set 'schemaVersion: \"{SCHEMA_VERSION}\"'")
    config: model.ServerConfig020 = _validated(model.ServerConfig020, data, str(path))
    return config.runtime


# ----------------------------------------------------------------------------- runtime


def check_http_config(runtime: model.ServerRuntime | None, *, where: str) -> None:
    """Refuse ``transportProtocol: streamablehttp`` without ``streamableHttpConfig``, which the
    format requires (section 3); a file with no ``runtime`` at all gets the default."""
    if (
        runtime is not None
        and runtime.transport_protocol == model.TRANSPORT_STREAMABLE_HTTP
        and runtime.streamable_http_config is None
    ):
        raise ConfigurationError(
            f"{where}: runtime.streamableHttpConfig is required when transportProtocol is streamablehttp "
            f"(at least its port: streamableHttpConfig: {{port: {model.DEFAULT_PORT}}}); leave the whole "
            f"runtime out for the default, streamable HTTP on port {model.DEFAULT_PORT}"
        )


def with_runtime_defaults(runtime: model.ServerRuntime | None) -> model.ServerRuntime:
    """gen-mcp's defaults: no runtime means streamable HTTP on port 3000, ``/mcp``, stateless."""
    if runtime is None:
        runtime = model.ServerRuntime.model_validate({"transportProtocol": model.TRANSPORT_STREAMABLE_HTTP})
    if runtime.transport_protocol == model.TRANSPORT_STREAMABLE_HTTP and runtime.streamable_http_config is None:
        http = model.StreamableHTTPConfig.model_validate({"port": model.DEFAULT_PORT})
        runtime = runtime.model_copy(update={"streamable_http_config": http})
    return runtime


#: zap's level names, as ``loggingConfig.level`` takes them.
ZAP_LEVELS = ("debug", "info", "warn", "error", "dpanic", "panic", "fatal")


def check_runtime(runtime: model.ServerRuntime, *, where: str) -> None:
    """Refuse a transport gen-mcp does not know, a port outside 1..65535, TLS without
    both files, and a logging encoding or level zap does not know."""
    if runtime.transport_protocol not in (model.TRANSPORT_STREAMABLE_HTTP, model.TRANSPORT_STDIO):
        raise ConfigurationError(
            f"{where}: runtime.transportProtocol must be one of ({model.TRANSPORT_STDIO}, "
            f"{model.TRANSPORT_STREAMABLE_HTTP}), got {runtime.transport_protocol!r}"
        )
    http = runtime.streamable_http_config
    if runtime.transport_protocol == model.TRANSPORT_STREAMABLE_HTTP and http is not None:
        if not 0 < http.port < 65536:
            raise ConfigurationError(f"{where}: runtime.streamableHttpConfig.port must be 1 to 65535, got {http.port}")
        if http.tls is not None and (not http.tls.cert_file or not http.tls.key_file):
            raise ConfigurationError(f"{where}: runtime.streamableHttpConfig.tls needs both certFile and keyFile")
    logging = runtime.logging_config
    if logging is not None:
        if logging.encoding not in ("", "json", "console"):
            raise ConfigurationError(
                f"{where}: runtime.loggingConfig.encoding must be \"json\" or \"console\" (zap's "
                f"encoders), got {logging.encoding!r}"
            )
        if logging.level and logging.level.lower() not in ZAP_LEVELS:
            raise ConfigurationError(
                f"{where}: runtime.loggingConfig.level must be one of {', '.join(ZAP_LEVELS)}, got {logging.level!r}"
            )


# gen-mcp builds its variable names from Go field names: GENMCP_ + path of field names, uppercased.
_GO_NAMES: dict[type[BaseModel], dict[str, str]] = {
    model.ServerRuntime: {
        "transport_protocol": "TRANSPORTPROTOCOL",
        "streamable_http_config": "STREAMABLEHTTPCONFIG",
        "stdio_config": "STDIOCONFIG",
        "logging_config": "LOGGINGCONFIG",
        "client_tls_config": "CLIENTTLSCONFIG",
    },
    model.StreamableHTTPConfig: {
        "port": "PORT", "base_path": "BASEPATH", "stateless": "STATELESS", "auth": "AUTH",
        "tls": "TLS", "health": "HEALTH",
    },
    model.AuthConfig: {"authorization_servers": "AUTHORIZATIONSERVERS", "jwks_uri": "JWKSURI"},
    model.TLSConfig: {"cert_file": "CERTFILE", "key_file": "KEYFILE"},
    model.HealthConfig: {"enabled": "ENABLED", "liveness_path": "LIVENESSPATH", "readiness_path": "READINESSPATH"},
    model.StdioConfig: {},
    model.LoggingConfig: {
        "level": "LEVEL", "development": "DEVELOPMENT", "disable_caller": "DISABLECALLER",
        "disable_stacktrace": "DISABLESTACKTRACE", "encoding": "ENCODING", "output_paths": "OUTPUTPATHS",
        "error_output_paths": "ERROROUTPUTPATHS", "initial_fields": "INITIALFIELDS",
        "enable_mcp_logs": "ENABLEMCPLOGS",
    },
    model.ClientTLSConfig: {
        "ca_cert_files": "CACERTFILES", "ca_cert_dir": "CACERTDIR", "insecure_skip_verify": "INSECURESKIPVERIFY",
    },
}


def override_names() -> list[str]:
    """Every ``GENMCP_*`` variable gen-mcp reads for the runtime, for docs and tests."""
    names: list[str] = []

    def walk(cls: type[BaseModel], prefix: str) -> None:
        for attr, go in _GO_NAMES[cls].items():
            sub = _nested_model(cls, attr)
            if sub is not None:
                walk(sub, f"{prefix}_{go}")
            else:
                names.append(f"{prefix}_{go}")

    walk(model.ServerRuntime, ENV_PREFIX)
    return names


def _nested_model(cls: type[BaseModel], attr: str) -> type[BaseModel] | None:
    annotation = cls.model_fields[attr].annotation
    for candidate in (annotation, *typing.get_args(annotation)):
        if isinstance(candidate, type) and candidate in _GO_NAMES:
            return candidate
    return None


def apply_overrides(runtime: model.ServerRuntime, environ: Mapping[str, str]) -> model.ServerRuntime:
    """Apply ``GENMCP_*`` environment overrides the way gen-mcp does.

    Strings are taken as they are, booleans as Go's ``ParseBool`` reads them, integers in
    base 10, lists split on commas, maps as JSON. A section that was absent is created only
    when one of its variables is set.

    Raises:
        ConfigurationError: a value of the wrong type, naming the variable.
    """
    if not any(key.startswith(ENV_PREFIX + "_") for key in environ):
        return runtime
    updated = _override(model.ServerRuntime, runtime.model_dump(by_alias=False), ENV_PREFIX, environ)
    return model.ServerRuntime.model_validate(_to_aliases(model.ServerRuntime, updated or {}))


def _override(cls: type[BaseModel], values: dict[str, Any] | None, prefix: str,
              environ: Mapping[str, str]) -> dict[str, Any] | None:
    current = dict(values or {})
    changed = False
    for attr, go in _GO_NAMES[cls].items():
        key = f"{prefix}_{go}"
        sub = _nested_model(cls, attr)
        if sub is not None:
            result = _override(sub, current.get(attr), key, environ)
            if result is not None:
                current[attr] = result
                changed = True
            continue
        if key not in environ:
            continue
        current[attr] = _parse_env(cls, attr, key, environ[key])
        changed = True
    if values is None and not changed:
        return None
    return current


_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def _parse_env(cls: type[BaseModel], attr: str, key: str, raw: str) -> Any:
    annotation = str(cls.model_fields[attr].annotation)
    try:
        if "bool" in annotation:
            if raw in _TRUE:
                return True
            if raw in _FALSE:
                return False
            raise ValueError("not a boolean")
        if "int" in annotation:
            if not raw.lstrip("+-").isdigit():
                raise ValueError("not a base-10 integer")
            return int(raw)
        if "list" in annotation:
            return raw.split(",")
        if "dict" in annotation:
            parsed = json.loads(raw)
            if not isinstance(parsed, dict):
                raise ValueError("not a JSON object")
            return parsed
    except ValueError as exc:
        raise ConfigurationError(f"environment variable {key}={raw!r} cannot be used: {exc}") from None
    return raw


def _to_aliases(cls: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for attr, value in values.items():
        if value is None:
            continue
        info = cls.model_fields[attr]
        sub = _nested_model(cls, attr) if cls in _GO_NAMES else None
        out[info.alias or attr] = _to_aliases(sub, value) if sub is not None and isinstance(value, Mapping) else value
    return out


# ----------------------------------------------------------------------------- primitives


_DEFAULT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


def _input_schema(schema: dict[str, Any] | None, *, where: str, required: bool) -> dict[str, Any]:
    if schema is None:
        if required:
            raise ConfigurationError(f"{where}: inputSchema is required")
        return dict(_DEFAULT_SCHEMA)
    schema = dict(schema)
    declared = schema.get("type")
    if declared in (None, ""):
        schema["type"] = "object"
    elif not isinstance(declared, str) or declared.lower() != "object":
        raise ConfigurationError(f"{where}: inputSchema must have type object at the root, got {declared!r}")
    else:
        schema["type"] = "object"
    if schema.get("properties") is None:
        schema["properties"] = {}
    try:
        compile_validator(schema, tool=where)
    except ConfigurationError as exc:
        raise ConfigurationError(f"{where}: inputSchema is not a valid JSON Schema ({exc})") from None
    return schema


#: Schema keywords whose values are data, not schemas: their strings stay as written.
_SCHEMA_DATA = frozenset({"default", "enum", "const", "examples", "example"})


def _visible_schema(schema: Any) -> Any:
    """``schema`` with every ``title`` and ``description`` string free of invisible format
    characters (:func:`mcs.tools.visible_text`); data keywords (``default``, ``enum``...) as written."""
    if isinstance(schema, list):
        return [_visible_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    return {
        key: visible_text(value) if key in ("title", "description") and isinstance(value, str)
        else value if key in _SCHEMA_DATA else _visible_schema(value)
        for key, value in schema.items()
    }


_P = typing.TypeVar("_P", bound=model._Primitive)


def _visible_primitive(item: _P) -> _P:
    """``item`` with its name, title, description and schemas free of invisible format
    characters, so nothing the model or a person reads holds words that cannot be seen
    (SECURITY.md F2). A name made only of such characters becomes empty and is refused."""
    update: dict[str, Any] = {
        "name": visible_text(item.name), "title": visible_text(item.title),
        "description": visible_text(item.description),
        "input_schema": _visible_schema(item.input_schema), "output_schema": _visible_schema(item.output_schema),
    }
    if isinstance(item, model.PromptSpecModel):
        update["arguments"] = [
            a.model_copy(update={"name": visible_text(a.name), "title": visible_text(a.title),
                                 "description": visible_text(a.description)})
            for a in item.arguments
        ]
    if isinstance(item, model.ToolSpec) and item.annotations is not None and item.annotations.title:
        update["annotations"] = item.annotations.model_copy(update={"title": visible_text(item.annotations.title)})
    return item.model_copy(update=update)


def _visible_definitions(d: model._Definitions) -> model._Definitions:
    """``d`` with every primitive passed through :func:`_visible_primitive`."""
    return d.model_copy(update={
        "tools": [_visible_primitive(t) for t in d.tools],
        "prompts": [_visible_primitive(p) for p in d.prompts],
        "resources": [_visible_primitive(r) for r in d.resources],
        "resource_templates": [_visible_primitive(t) for t in d.resource_templates],
    })


def _compile_primitives(path: Path, d: model._Definitions, http: HttpOptions, cli: CliOptions) -> tuple[Primitive, ...]:
    bases = {name: base for name, base in d.invocation_bases.items() if base is not None}
    for name, base in bases.items():
        extends.resolve(base, bases, where=f"{path}: invocationBases.{name}")
    out: list[Primitive] = []
    seen: dict[tuple[str, str], str] = {}

    def compile_invoker(where: str, name: str, invocation: dict[str, Any] | None, schema: dict[str, Any],
                        *, static: bool = False, allowed: frozenset[str] = frozenset()) -> Invoker:
        if not invocation:
            raise ConfigurationError(f"{where}: invocation is required (http, cli or extends)")
        kind, config = extends.resolve(invocation, bases, where=where)
        if kind == "http":
            invoker = compile_http(config, tool=name, where=where, input_schema=schema, options=http,
                                   allowed_params=allowed)
            if static and invoker.url.params():
                raise ConfigurationError(f"{where}: a static resource URL cannot contain argument placeholders")
            return invoker
        return compile_cli(config, tool=name, where=where, input_schema=schema, options=cli, static=static,
                           allowed_params=allowed)

    def check_common(where: str, kind: str, item: model._Primitive) -> None:
        if not item.name:
            raise ConfigurationError(f"{where}: name is required")
        if not item.description:
            raise ConfigurationError(f"{where}: description is required")
        if (kind, item.name) in seen:
            raise ConfigurationError(f"{where}: the {kind} name {item.name!r} is used twice (also {seen[(kind, item.name)]})")
        seen[(kind, item.name)] = where

    d = _visible_definitions(d)
    for i, tool in enumerate(d.tools):
        where = f"{path}: tool {tool.name!r}" if tool.name else f"{path}: tools[{i}]"
        check_common(where, "tool", tool)
        schema = _input_schema(tool.input_schema, where=where, required=False)
        annotations = tool.annotations.to_mcp() if tool.annotations else {}
        if tool.title and "title" not in annotations:
            annotations["title"] = tool.title
        out.append(Primitive("tool", tool.name, tool.title, tool.description, schema, tool.output_schema,
                             tuple(tool.required_scopes), compile_invoker(where, tool.name, tool.invocation, schema),
                             annotations=annotations))
    for i, prompt in enumerate(d.prompts):
        where = f"{path}: prompt {prompt.name!r}" if prompt.name else f"{path}: prompts[{i}]"
        check_common(where, "prompt", prompt)
        schema = _input_schema(prompt.input_schema, where=where, required=False)
        for argument in prompt.arguments:
            if not argument.name:
                raise ConfigurationError(f"{where}: every prompt argument needs a name")
        out.append(Primitive("prompt", prompt.name, prompt.title, prompt.description, schema, prompt.output_schema,
                             tuple(prompt.required_scopes), compile_invoker(where, prompt.name, prompt.invocation, schema),
                             arguments=tuple(prompt.arguments)))
    for i, resource in enumerate(d.resources):
        where = f"{path}: resource {resource.name!r}" if resource.name else f"{path}: resources[{i}]"
        check_common(where, "resource", resource)
        if not resource.uri:
            raise ConfigurationError(f"{where}: uri is required")
        schema = _input_schema(resource.input_schema, where=where, required=False)
        out.append(Primitive("resource", resource.name, resource.title, resource.description, schema,
                             resource.output_schema, tuple(resource.required_scopes),
                             compile_invoker(where, resource.name, resource.invocation, schema, static=True),
                             uri=resource.uri, mime_type=resource.mime_type, size=resource.size))
    for i, template in enumerate(d.resource_templates):
        where = f"{path}: resource template {template.name!r}" if template.name else f"{path}: resourceTemplates[{i}]"
        check_common(where, "resource template", template)
        if not template.uri_template:
            raise ConfigurationError(f"{where}: uriTemplate is required")
        uri_template = UriTemplate.parse(template.uri_template, where=where)
        schema = _input_schema(template.input_schema, where=where, required=False)
        out.append(Primitive("resource_template", template.name, template.title, template.description, schema,
                             template.output_schema, tuple(template.required_scopes),
                             compile_invoker(where, template.name, template.invocation, schema),
                             uri_template=uri_template, mime_type=template.mime_type))
    _check_shared_directory(path, out, cli)
    return tuple(out)


def _label(primitive: Primitive) -> str:
    return f"{primitive.kind.replace('_', ' ')} {primitive.name!r}"


def _check_shared_directory(path: Path, primitives: list[Primitive], cli: CliOptions) -> None:
    """The rule of a command that takes a model's values, lifted to the file: when any CLI
    command of the file takes one, every CLI command of the file is held to the allow-list,
    also those that take none. They run in the same directory on the same machine, so what
    one writes from a value (``printf '%s' {text} > notes.sh``, ``git clone {repoUrl} repo``)
    the next could run (``bash notes.sh``, ``make -C repo``). ``x-mcs-runsAsCode`` on one
    command's argument lifts that command's own check only: it vouches for that argument,
    not for what another command does with the files it leaves.

    Raises:
        ConfigurationError: naming the command that runs an unlisted program, the line, the
            program, the command that takes the values, and the operator's way out.
    """
    commands = [(p, p.invoker) for p in primitives if isinstance(p.invoker, CliInvoker)]
    for primitive, invoker in commands:
        if not invoker.unlisted:
            continue
        taker = _other_taker(primitive, commands)
        if taker is None:
            continue
        first = invoker.unlisted[0]
        name = first.program
        raise ConfigurationError(
            f"{path}: {_label(primitive)}: {first.where}: runs {name!r}, which is not on the list of programs "
            f"proven to keep values as data, and {_label(taker)} of this file takes the model's values and "
            "can write files in the same directory: what one tool writes from a value (a file, a clone) another "
            f"could run, so every command of a file with such a tool is held to the list, also one that takes no "
            f"value. If {name} runs nothing another tool could have written, the operator can trust it with "
            f"{_trust_option(cli, name)}; x-mcs-runsAsCode on an argument of "
            f"{_label(taker)} does not lift this (it vouches for that argument, not for another tool)"
        )
    _check_configuration_readers(path, commands, cli)
    _check_followers(path, commands)
    _check_unchecked_paths(path, commands)


def _other_taker(primitive: Primitive, commands: list[tuple[Primitive, CliInvoker]]) -> Primitive | None:
    """The first command of the file, other than ``primitive``, that takes a model's values."""
    return next((p for p, other in commands if p is not primitive and other.takes_values), None)


def _check_unchecked_paths(path: Path, commands: list[tuple[Primitive, CliInvoker]]) -> None:
    """The paths a command names whose text is not known before the run (``x=$(cat list); cat --
    "$x"``), or that a symlink the command makes on the way may lead elsewhere (``ln -s -- . x;
    echo hi > out.txt``), are refused in a command that takes a model's value (see :mod:`.cli`),
    and here in any command of a file where another command takes one: that command can write
    the list, or leave the other link.

    Raises:
        ConfigurationError: naming the command, the line, the path and the command that takes
            the values.
    """
    for primitive, invoker in commands:
        found = [(p, UNKNOWN_PATH, "write the path literally, or as a quoted variable the command "
                  "sets to literal text") for p in invoker.unknown_paths]
        found += [(p, LINKED_PATH, "make links in a tool of their own") for p in invoker.linked_paths]
        if not found:
            continue
        taker = _other_taker(primitive, commands)
        if taker is None:
            continue
        first, why, way = found[0]
        raise ConfigurationError(
            f"{path}: {_label(primitive)}: {first.where}: {first.program}: {why}; {_label(taker)} of this file "
            f"takes the model's values. {way[0].upper()}{way[1:]}"
        )


def _check_followers(path: Path, commands: list[tuple[Primitive, CliInvoker]]) -> None:
    """The programs that read past the paths MCS checks (``grep -R`` follows the symlinks inside
    a directory, ``wc --files0-from=list`` reads the files a list names) are refused in a command
    that takes a model's value (see :mod:`.shell`), and here in any command of a file where
    another command takes one: that command can leave the link (``ln -s``, ``cp -r``) or write
    the list.

    Raises:
        ConfigurationError: naming the command, the line, the option and the command that
            takes the values.
    """
    for primitive, invoker in commands:
        if not invoker.followers:
            continue
        taker = _other_taker(primitive, commands)
        if taker is None:
            continue
        first = invoker.followers[0]
        raise ConfigurationError(
            f"{path}: {_label(primitive)}: {first.where}: {first.program} reads past the paths MCS checks (the "
            f"symlinks inside a directory, the files a list names), and {_label(taker)} of this file takes the "
            "model's values and can leave such a link or list in the same directory. Drop the option (grep -r, "
            "ls and du without -L, diff --no-dereference, files as operands)"
        )


def _trust_option(cli: CliOptions, name: str) -> str:
    """The driver option that trusts ``name`` beside what the operator trusts already, as
    Python and as the command line write it."""
    trusted = sorted({*cli.trusted_programs, name})
    return (f"the driver option cli_trusted_programs (in Python cli_trusted_programs={trusted!r}, on the "
            f"command line -o cli_trusted_programs={','.join(trusted)})")


def _check_configuration_readers(path: Path, commands: list[tuple[Primitive, CliInvoker]], cli: CliOptions) -> None:
    """The listed programs that run configuration found in files (:data:`.shell.CONFIG_READERS`:
    git runs ``diff.external`` of ``.git/config``, jq loads ``~/.jq``) are held like unlisted
    programs when a CLI command of the file writes files from a model's value
    (:attr:`.shell.Findings.writers`): that command can write the configuration (``printf '%s'
    {text} > notes.txt`` and ``cp -- {src} {dst}`` make ``.git/config``; a symlink a clone
    brought in leads ``> repo/NOTES`` there). A git that writes is not paired with its own
    write: it read its configuration before. Only the operator's ``cli_trusted_programs``
    lifts this.

    Raises:
        ConfigurationError: naming the command and line that run the program, the writer
            and its line, why, and the operator's way out.
    """
    writers = [(p, w) for p, invoker in commands for w in invoker.writers]
    if not writers:
        return
    for primitive, invoker in commands:
        for reader in invoker.config_readers:
            found = next(((p, w) for p, w in writers
                          if not (p is primitive and w.command == reader.command)), None)
            if found is None:
                continue
            owner, writer = found
            name = reader.program
            base = name.rsplit("/", 1)[-1]
            who = "this tool" if owner is primitive else _label(owner)
            raise ConfigurationError(
                f"{path}: {_label(primitive)}: {reader.where}: {reader.what}, and {who} writes files from the "
                f"model's values ({writer.where}: {writer.what}); {shell.CONFIG_READERS[base]}, which such a "
                "file can be, so a program that runs configuration from files is held to the operator's list "
                f"in a file with such a writer. If the files {name} reads are the operator's alone, the operator "
                f"can trust it with {_trust_option(cli, name)}; x-mcs-runsAsCode does not lift this"
            )
