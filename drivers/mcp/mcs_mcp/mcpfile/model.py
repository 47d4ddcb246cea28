"""The gen-mcp file format as validated data (``mcpFileVersion: 0.1.0`` and the 0.2.0 pair).

The models read what gen-mcp reads, the way Go's ``encoding/json`` reads it after
``sigs.k8s.io/yaml`` turned the YAML into JSON:

* unknown keys are ignored, and keys match field names case-insensitively;
* ``null`` means "not given" (the field keeps its default);
* scalar types are strict (``port: "3000"`` or ``version: 1.0`` are refused, as Go refuses
  to put a string into an int or a number into a string).

Invocations stay raw mappings here (``{"http": {...}}``); :mod:`.extends` resolves them and
:mod:`.loader` compiles them, because their meaning depends on ``invocationBases``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

TRANSPORT_STREAMABLE_HTTP = "streamablehttp"
TRANSPORT_STDIO = "stdio"
DEFAULT_PORT = 3000
DEFAULT_BASE_PATH = "/mcp"
DEFAULT_LIVENESS_PATH = "/healthz"
DEFAULT_READINESS_PATH = "/readyz"


def _go_like_keys(model: type[BaseModel], data: Any) -> Any:
    """Drop ``null`` values and match keys to aliases case-insensitively (exact match first)."""
    if not isinstance(data, Mapping):
        return data
    aliases = {field.alias or name for name, field in model.model_fields.items()}
    by_lower = {alias.lower(): alias for alias in aliases}
    exact = {key for key in data if isinstance(key, str) and key in aliases}
    out: dict[str, Any] = {}
    for key, value in data.items():
        if value is None or not isinstance(key, str):
            continue
        target = key if key in aliases else by_lower.get(key.lower(), key)
        if target != key and target in exact:
            continue
        out[target] = value
    return out


class _GoModel(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, populate_by_name=False, frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any) -> Any:
        return _go_like_keys(cls, data)


class TLSConfig(_GoModel):
    cert_file: str = Field("", alias="certFile")
    key_file: str = Field("", alias="keyFile")


class AuthConfig(_GoModel):
    authorization_servers: list[str] = Field(default_factory=list, alias="authorizationServers")
    jwks_uri: str = Field("", alias="jwksUri")


class HealthConfig(_GoModel):
    """0.2.0 only: liveness and readiness endpoints of the streamable HTTP server."""

    enabled: bool | None = None
    liveness_path: str = Field("", alias="livenessPath")
    readiness_path: str = Field("", alias="readinessPath")


class StreamableHTTPConfig(_GoModel):
    port: int = 0
    base_path: str = Field("", alias="basePath")
    stateless: bool | None = None  # gen-mcp: true when unset
    auth: AuthConfig | None = None
    tls: TLSConfig | None = None
    health: HealthConfig | None = None


class StdioConfig(_GoModel):
    pass


class LoggingConfig(_GoModel):
    level: str = ""
    development: bool = False
    disable_caller: bool = Field(False, alias="disableCaller")
    disable_stacktrace: bool = Field(False, alias="disableStacktrace")
    encoding: str = ""
    output_paths: list[str] = Field(default_factory=list, alias="outputPaths")
    error_output_paths: list[str] = Field(default_factory=list, alias="errorOutputPaths")
    initial_fields: dict[str, Any] | None = Field(None, alias="initialFields")
    enable_mcp_logs: bool | None = Field(None, alias="enableMcpLogs")


class ClientTLSConfig(_GoModel):
    """0.2.0 only: how outbound HTTPS calls verify servers."""

    ca_cert_files: list[str] = Field(default_factory=list, alias="caCertFiles")
    ca_cert_dir: str = Field("", alias="caCertDir")
    insecure_skip_verify: bool = Field(False, alias="insecureSkipVerify")


class ServerRuntime(_GoModel):
    transport_protocol: str = Field("", alias="transportProtocol")
    streamable_http_config: StreamableHTTPConfig | None = Field(None, alias="streamableHttpConfig")
    stdio_config: StdioConfig | None = Field(None, alias="stdioConfig")
    logging_config: LoggingConfig | None = Field(None, alias="loggingConfig")
    client_tls_config: ClientTLSConfig | None = Field(None, alias="clientTlsConfig")


class ToolAnnotations(_GoModel):
    title: str | None = None
    read_only_hint: bool | None = Field(None, alias="readOnlyHint")
    destructive_hint: bool | None = Field(None, alias="destructiveHint")
    idempotent_hint: bool | None = Field(None, alias="idempotentHint")
    open_world_hint: bool | None = Field(None, alias="openWorldHint")

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``ToolAnnotations`` keys that are set."""
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only_hint,
            "destructiveHint": self.destructive_hint,
            "idempotentHint": self.idempotent_hint,
            "openWorldHint": self.open_world_hint,
        }
        return {k: v for k, v in pairs.items() if v is not None}


class PromptArgument(_GoModel):
    name: str = ""
    title: str = ""
    description: str = ""
    required: bool = False


class _Primitive(_GoModel):
    name: str = ""
    title: str = ""
    description: str = ""
    input_schema: dict[str, Any] | None = Field(None, alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(None, alias="outputSchema")
    invocation: dict[str, Any] | None = None
    required_scopes: list[str] = Field(default_factory=list, alias="requiredScopes")


class ToolSpec(_Primitive):
    annotations: ToolAnnotations | None = None


class PromptSpecModel(_Primitive):
    arguments: list[PromptArgument] = Field(default_factory=list)


class ResourceModel(_Primitive):
    mime_type: str = Field("", alias="mimeType")
    size: int = 0
    uri: str = ""


class ResourceTemplateModel(_Primitive):
    mime_type: str = Field("", alias="mimeType")
    uri_template: str = Field("", alias="uriTemplate")


class _Definitions(_GoModel):
    name: str = ""
    version: str = ""
    instructions: str = ""
    invocation_bases: dict[str, dict[str, Any] | None] = Field(default_factory=dict, alias="invocationBases")
    tools: list[ToolSpec] = Field(default_factory=list)
    prompts: list[PromptSpecModel] = Field(default_factory=list)
    resources: list[ResourceModel] = Field(default_factory=list)
    resource_templates: list[ResourceTemplateModel] = Field(default_factory=list, alias="resourceTemplates")


class MCPFile010(_Definitions):
    """A whole ``mcpFileVersion: 0.1.0`` file."""

    mcp_file_version: str = Field("", alias="mcpFileVersion")
    runtime: ServerRuntime | None = None


class ToolDefinitions020(_Definitions):
    """The ``kind: MCPToolDefinitions`` half of a 0.2.0 pair."""

    kind: str = ""
    schema_version: str = Field("", alias="schemaVersion")


class ServerConfig020(_GoModel):
    """The ``kind: MCPServerConfig`` half of a 0.2.0 pair."""

    kind: str = ""
    schema_version: str = Field("", alias="schemaVersion")
    runtime: ServerRuntime | None = None
