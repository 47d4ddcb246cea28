"""Prompt templates per model family, and how tools are rendered for a model (DESIGN.md, section 6).

A template is a text file with YAML front matter (see ``docs/prompts.md``)::

    ---
    name: claude
    globs: ["claude-*", "anthropic/*"]
    call_format: mcs_json            # the call syntax the body teaches (CALL_FORMATS)
    description_style: json          # how tools are rendered for it (DESCRIPTION_STYLES)
    description: Anthropic Claude.
    ---
    You have access to the tools of {driver_name}. ...
    {function_description}
    ...
    {call_example}

Placeholders are ``{name}`` with ``name`` one of :data:`TEMPLATE_VARIABLES`; any other
brace (a JSON example such as ``{"tool": ...}``) is literal text. Templates are checked
when they are loaded: unknown front-matter keys, an unknown call format, a bad glob, a
missing ``{function_description}`` or an unknown placeholder raise :class:`TemplateError`
naming the file, so a mistake never reaches a model as a blank in a prompt.

:class:`PromptRegistry` picks the template for a model name: among the templates with a
glob matching the name (case-insensitively), the most specific glob wins (see
:func:`glob_specificity`); the template named ``default`` serves everything else.
The shipped templates load lazily into :func:`default_registry`.
"""

from __future__ import annotations

import difflib
import fnmatch
import heapq
import json
import os
import re
import sys
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from types import FrameType
from typing import Any, Literal, get_args

from mcs.errors import ConfigurationError
from mcs.native import map_subschemas
from mcs.tools import Tool

__all__ = [
    "CALL_FORMATS",
    "DEFAULT_TEMPLATE",
    "DESCRIPTION_STYLES",
    "REQUIRED_VARIABLES",
    "TEMPLATE_VARIABLES",
    "CallFormat",
    "DescriptionStyle",
    "PromptRegistry",
    "PromptTemplate",
    "TemplateError",
    "UnknownModelWarning",
    "call_example",
    "clean_schema",
    "default_registry",
    "glob_specificity",
    "render_function_description",
    "render_system_message",
    "shipped_templates",
    "target_llms",
]

CallFormat = Literal["mcs_json", "hermes", "llama3_json", "mistral", "pythonic"]
#: The call syntaxes a template may teach; every one is read by :mod:`mcs.parsing`.
CALL_FORMATS: tuple[str, ...] = get_args(CallFormat)

DescriptionStyle = Literal["json", "openai", "typescript"]
#: ``json``: one line per tool, ``{"name", "description", "parameters"}``;
#: ``openai``: one line per tool in the OpenAI ``{"type": "function", "function": ...}``
#: shape Hermes, Qwen, Llama and Mistral chat templates were trained on;
#: ``typescript``: a ``namespace functions`` block, the shape OpenAI models read tools in.
DESCRIPTION_STYLES: tuple[str, ...] = get_args(DescriptionStyle)

#: The placeholders a template body may use; ``function_description`` is mandatory.
TEMPLATE_VARIABLES = frozenset({"function_description", "driver_name", "model_name", "call_example"})
REQUIRED_VARIABLES = frozenset({"function_description"})

DEFAULT_TEMPLATE = "default"

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_TEMPLATE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_FRONT_MATTER_KEYS = frozenset({"name", "globs", "call_format", "description", "description_style"})
_TEMPLATE_SUFFIXES = (".md", ".txt")


_PACKAGE_DIR = str(Path(__file__).resolve().parent) + os.sep


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning point at the first caller outside ``mcs``.

    A driver selects the template twice per system message (tools, then prompt); both
    warnings then name the caller's own line, so Python's default filter shows one.
    """
    frame: FrameType | None = sys._getframe(1)  # the function that calls warnings.warn: stacklevel 1
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    return level


class UnknownModelWarning(UserWarning):
    """A model name that looks like a misspelt family (``gtp-4o``, ``claud-3``).

    No template matches it, so the default template (MCS JSON calls) serves it: right
    for a family without a template (``deepseek-r1``, ``phi-4``: no warning), wrong for a
    typo. Raised when the name's leading word is close to a family's; the message names
    that family.
    """


_FAMILY_WORD = re.compile(r"[a-z]+")


def _close_family(model_name: str, templates: Iterable[PromptTemplate]) -> str | None:
    """The glob of a family whose leading word is close to the model name's (``gtp`` -> ``gpt-*``)."""
    word = _FAMILY_WORD.match(model_name.lower().rsplit("/", 1)[-1])
    if word is None:
        return None
    families: dict[str, str] = {}
    for template in templates:
        for glob in template.globs:
            leading = _FAMILY_WORD.match(glob.lower())
            if leading is not None and len(leading.group()) > 2 and glob[leading.end():][:1] != "/":
                families.setdefault(leading.group(), glob)
    close = difflib.get_close_matches(word.group(), list(families), n=1, cutoff=0.6)
    return families[close[0]] if close else None


class TemplateError(ConfigurationError):
    """A prompt template is malformed, or no template can serve a request.

    The message names the template's file (or name) and the offending field or variable.
    """


# --------------------------------------------------------------------------- globs


def _glob_tokens(glob: str) -> list[tuple[bool, str]]:
    """Split a glob into ``(is_wildcard, text)`` tokens; a ``[...]`` class is one wildcard."""
    tokens: list[tuple[bool, str]] = []
    i = 0
    while i < len(glob):
        char = glob[i]
        if char in "*?":
            tokens.append((True, char))
            i += 1
        elif char == "[":
            j = i + 1
            if glob[j : j + 1] == "!":
                j += 1
            if glob[j : j + 1] == "]":  # a leading ']' is part of the class, as in fnmatch
                j += 1
            end = glob.find("]", j)
            if end < 0:
                raise ValueError(f"unclosed '[' at position {i}")
            tokens.append((True, glob[i : end + 1]))
            i = end + 1
        else:
            tokens.append((False, char))
            i += 1
    return tokens


def _check_glob(glob: object) -> str:
    if not isinstance(glob, str) or not glob:
        raise ValueError(f"a glob must be a non-empty string, got {glob!r}")
    if any(c.isspace() for c in glob):
        raise ValueError(f"glob {glob!r} contains whitespace")
    try:
        _glob_tokens(glob)
    except ValueError as exc:
        raise ValueError(f"glob {glob!r}: {exc}") from None
    return glob


def glob_specificity(glob: str) -> tuple[int, int, int]:
    """How specific ``glob`` is; a larger tuple wins when several templates match.

    Compared in order: the number of literal characters (``claude-3-5*`` beats
    ``claude-*`` beats ``*``), then fewer wildcards (``*``, ``?`` and ``[...]`` count one
    each), then the longer literal prefix (``qwen*`` beats ``*qwen``). A template
    combining two families' words (``*hermes*llama*``) therefore beats either alone. A
    remaining tie goes to the template registered last, so a user's template wins over
    a shipped one with the same glob.
    """
    tokens = _glob_tokens(glob.lower())
    literal = sum(1 for wild, _ in tokens if not wild)
    wildcards = len(tokens) - literal
    prefix = 0
    for wild, _ in tokens:
        if wild:
            break
        prefix += 1
    return literal, -wildcards, prefix


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """One validated template; build it directly or with :meth:`from_text` / :meth:`from_file`.

    Construction checks every field, so an instance always renders: every placeholder in
    ``body`` is one of :data:`TEMPLATE_VARIABLES` and ``{function_description}`` is present.
    """

    name: str
    globs: tuple[str, ...]
    call_format: CallFormat
    body: str
    description: str = ""
    description_style: DescriptionStyle = "json"
    source: str | None = field(default=None, compare=False)
    _patterns: tuple[tuple[re.Pattern[str], tuple[int, int, int]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        where = self.source or f"template {self.name!r}"

        def fail(message: str) -> TemplateError:
            return TemplateError(f"{where}: {message}")

        if not isinstance(self.name, str) or not _TEMPLATE_NAME.match(self.name):
            raise fail(f"name {self.name!r} must match {_TEMPLATE_NAME.pattern}")
        globs = self.globs
        if isinstance(globs, str) or not isinstance(globs, Iterable):
            raise fail(f"globs must be a list of model-name globs, got {globs!r}")
        globs = tuple(globs)
        if not globs:
            raise fail("globs must list at least one model-name glob ('*' for any model)")
        for glob in globs:
            try:
                _check_glob(glob)
            except ValueError as exc:
                raise fail(f"bad glob: {exc}") from None
        object.__setattr__(self, "globs", globs)
        if self.call_format not in CALL_FORMATS:
            raise fail(f"call_format {self.call_format!r} is not one of {', '.join(CALL_FORMATS)}")
        if self.description_style not in DESCRIPTION_STYLES:
            raise fail(
                f"description_style {self.description_style!r} is not one of {', '.join(DESCRIPTION_STYLES)}"
            )
        if not isinstance(self.description, str):
            raise fail("description must be a string")
        if not isinstance(self.body, str) or not self.body.strip():
            raise fail("the template body is empty")
        used = set(_PLACEHOLDER.findall(self.body))
        unknown = sorted(used - TEMPLATE_VARIABLES)
        if unknown:
            raise fail(
                f"unknown variable {{{unknown[0]}}} in the body; allowed: "
                + ", ".join(f"{{{v}}}" for v in sorted(TEMPLATE_VARIABLES))
            )
        missing = sorted(REQUIRED_VARIABLES - used)
        if missing:
            raise fail(f"the body must use the variable {{{missing[0]}}}")
        object.__setattr__(
            self, "_patterns",
            tuple((re.compile(fnmatch.translate(g.lower())), glob_specificity(g)) for g in globs),
        )

    @property
    def variables(self) -> frozenset[str]:
        """The placeholders the body uses."""
        return frozenset(_PLACEHOLDER.findall(self.body))

    def match(self, model_name: str) -> tuple[int, int, int] | None:
        """The specificity of this template's best glob matching ``model_name``, or ``None``."""
        name = model_name.strip().lower()
        best: tuple[int, int, int] | None = None
        for pattern, score in self._patterns:
            if pattern.match(name) and (best is None or score > best):
                best = score
        return best

    def render(self, **values: str) -> str:
        """The body with its placeholders filled.

        Raises:
            TemplateError: a placeholder the body uses has no value.
        """
        missing = sorted(self.variables - values.keys())
        if missing:
            raise TemplateError(f"{self.source or self.name}: no value for {{{missing[0]}}}")
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.body)

    @classmethod
    def from_text(cls, text: str, *, source: str | None = None) -> PromptTemplate:
        """Parse a template file's text: ``---`` YAML front matter ``---`` then the body.

        Raises:
            TemplateError: the text is not a valid template; the message names ``source``.
        """
        where = source or "<template>"
        lines = text.lstrip("\ufeff").splitlines(keepends=True)
        if not lines or lines[0].strip() != "---":
            raise TemplateError(f"{where}: a template starts with a '---' line and YAML front matter")
        try:
            end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        except StopIteration:
            raise TemplateError(f"{where}: the front matter has no closing '---' line") from None
        import yaml  # on first use: `import mcs` stays light

        # libyaml's loader reads the same safe subset in about a tenth of the instructions.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        try:
            meta = yaml.load("".join(lines[1:end]), Loader=loader)
        except yaml.YAMLError as exc:
            raise TemplateError(f"{where}: the front matter is not valid YAML: {exc}") from None
        if not isinstance(meta, Mapping):
            raise TemplateError(f"{where}: the front matter must be a YAML mapping")
        unknown = sorted(set(meta) - _FRONT_MATTER_KEYS)
        if unknown:
            raise TemplateError(
                f"{where}: unknown front-matter field {unknown[0]!r}; allowed: "
                + ", ".join(sorted(_FRONT_MATTER_KEYS))
            )
        for key in ("name", "globs", "call_format"):
            if key not in meta:
                raise TemplateError(f"{where}: the front matter needs a {key!r} field")
        globs = meta["globs"]
        if not isinstance(globs, list):
            raise TemplateError(f"{where}: globs must be a list of model-name globs, got {globs!r}")
        return cls(
            name=meta["name"],
            globs=tuple(globs),
            call_format=meta["call_format"],
            body="".join(lines[end + 1 :]).strip("\n"),
            description=meta.get("description") or "",
            description_style=meta.get("description_style", "json"),
            source=source,
        )

    @classmethod
    def from_file(cls, path: str | Path | Traversable) -> PromptTemplate:
        """Load and validate one template file (UTF-8)."""
        file = Path(path) if isinstance(path, str) else path
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"{file}: cannot read the template: {exc}") from None
        return cls.from_text(text, source=str(file))


# --------------------------------------------------------------------------- registry


class PromptRegistry:
    """Templates by name, and the choice of one for a model name.

    ``add`` replaces a template of the same name (that is how a user or a driver
    overrides a shipped template); ``load_dir`` adds every ``*.md`` / ``*.txt`` file of
    a folder. Thread-safe for concurrent reads and adds.
    """

    def __init__(self, templates: Iterable[PromptTemplate] = ()) -> None:
        self._templates: dict[str, PromptTemplate] = {}
        self._order: dict[str, int] = {}
        self._counter = 0
        self._lock = threading.Lock()
        for template in templates:
            self.add(template)

    def add(self, template: PromptTemplate) -> PromptTemplate:
        """Register ``template``, replacing any template with the same name; returns it."""
        if not isinstance(template, PromptTemplate):
            raise TypeError(f"expected a PromptTemplate, got {type(template).__name__}")
        with self._lock:
            self._counter += 1
            self._order[template.name] = self._counter  # before the template: select() reads both unlocked
            self._templates[template.name] = template
        return template

    def load_dir(self, path: str | Path | Traversable) -> list[PromptTemplate]:
        """Load every template file in ``path`` (not recursive), in file-name order.

        All files are validated before any is added, so a bad folder changes nothing.

        Raises:
            TemplateError: a file is invalid, two files declare the same name, or
                ``path`` is not a folder.
        """
        folder = Path(path) if isinstance(path, str) else path
        if not folder.is_dir():
            raise TemplateError(f"{folder}: not a folder of prompt templates")
        files = sorted(
            (f for f in folder.iterdir() if f.is_file() and f.name.endswith(_TEMPLATE_SUFFIXES)),
            key=lambda f: f.name,
        )
        loaded: list[PromptTemplate] = []
        seen: dict[str, str] = {}
        for file in files:
            template = PromptTemplate.from_file(file)
            if template.name in seen:
                raise TemplateError(
                    f"{file}: duplicate template name {template.name!r}, already declared in {seen[template.name]}"
                )
            seen[template.name] = str(file)
            loaded.append(template)
        for template in loaded:
            self.add(template)
        return loaded

    def get(self, name: str) -> PromptTemplate | None:
        return self._templates.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._templates

    def __iter__(self) -> Iterator[PromptTemplate]:
        return iter(list(self._templates.values()))

    def __len__(self) -> int:
        return len(self._templates)

    def names(self) -> list[str]:
        return sorted(self._templates)

    def copy(self) -> PromptRegistry:
        """An independent registry with the same templates (and the same tie order)."""
        clone = PromptRegistry()
        with self._lock:
            clone._templates = dict(self._templates)
            clone._order = dict(self._order)
            clone._counter = self._counter
        return clone

    def select(self, model_name: str | None) -> PromptTemplate:
        """The template for ``model_name``: the most specific matching glob, else ``default``.

        Matching is case-insensitive. See :func:`glob_specificity` for the order; ties go
        to the template added last. ``None`` or an empty name gets ``default``.

        Raises:
            TemplateError: nothing matches and there is no template named ``default``.
        """
        best: tuple[tuple[int, int, int], int, PromptTemplate] | None = None
        if model_name and model_name.strip():
            for name, template in list(self._templates.items()):
                score = template.match(model_name)
                if score is None:
                    continue
                key = (score, self._order[name], template)
                if best is None or key[:2] > best[:2]:
                    best = key
        if best is not None and best[2].name != DEFAULT_TEMPLATE:
            return best[2]
        fallback = self._templates.get(DEFAULT_TEMPLATE)
        if model_name and model_name.strip() and fallback is not None:
            others = [t for n, t in list(self._templates.items()) if n != DEFAULT_TEMPLATE]
            family = _close_family(model_name, others)
            if family is not None:  # a family's name misspelt; an unknown family is no mistake
                warnings.warn(
                    f"no prompt template is made for model {model_name!r} (did you mean a {family} "
                    "model?); the default template (MCS JSON calls) is used",
                    UnknownModelWarning,
                    stacklevel=_caller_stacklevel(),
                )
        if fallback is None:
            raise TemplateError(
                f"no prompt template matches model {model_name!r} and there is no "
                f"{DEFAULT_TEMPLATE!r} template; add one named {DEFAULT_TEMPLATE!r}"
            )
        return fallback

    @classmethod
    def shipped(cls) -> PromptRegistry:
        """A new registry holding the templates shipped with MCS."""
        registry = cls()
        registry.load_dir(shipped_templates())
        return registry


def shipped_templates() -> Traversable:
    """The folder of shipped templates.

    In an installed wheel they are package data (``mcs/_prompts``); in a source checkout
    or an editable install they are the repository's ``prompts/`` folder.
    """
    packaged = resources.files("mcs") / "_prompts"
    if packaged.is_dir():
        return packaged
    source = Path(__file__).resolve().parent.parent / "prompts"
    if source.is_dir():
        return source
    raise TemplateError(
        "the shipped prompt templates are missing (neither mcs/_prompts nor prompts/ exists); "
        "reinstall mcs"
    )


_default: PromptRegistry | None = None
_default_lock = threading.Lock()


def default_registry() -> PromptRegistry:
    """The process-wide registry of shipped templates, loaded on first use.

    Adding to it changes the prompts of every driver without its own
    ``prompt_templates``; to change one driver only, pass it
    ``prompt_templates=default_registry().copy()`` with your templates added.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = PromptRegistry.shipped()
    return _default


def target_llms(registry: PromptRegistry | None = None) -> tuple[str, ...]:
    """The model-name globs ``registry`` (default: the shipped templates) has prompts for.

    This is what a driver declares as ``DriverMeta.target_llms`` (MCS spec, section 3):
    ``"*"`` for the generic template, then every other template's globs, each once, in
    the registry's order. A driver with its own ``prompt_templates`` declares those.
    """
    chosen = registry if registry is not None else default_registry()
    globs: list[str] = []
    for template in chosen:
        globs.extend(g for g in template.globs if g not in globs)
    if "*" in globs:
        globs.remove("*")
        globs.insert(0, "*")
    return tuple(globs) or ("*",)


# --------------------------------------------------------------------------- call examples

_EXAMPLE_NAME = "tool_name"
_EXAMPLE_ARGUMENTS: dict[str, Any] = {"argument": "value"}


def _sample_value(schema: Any) -> Any:
    if not isinstance(schema, Mapping):
        return "value"
    for key in ("const", "default"):
        if key in schema and schema[key] is not None:
            return schema[key]
    for key in ("enum", "examples"):
        values = schema.get(key)
        if isinstance(values, list) and values:
            return values[0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    return {"integer": 1, "number": 1.5, "boolean": True, "array": [], "object": {}}.get(
        kind if isinstance(kind, str) else "", "value"
    )


def _example_call(tools: Sequence[Tool] | None) -> tuple[str, dict[str, Any]]:
    if not tools:
        return _EXAMPLE_NAME, dict(_EXAMPLE_ARGUMENTS)
    tool = tools[0]
    properties = tool.input_schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return tool.name, {}
    required = [r for r in tool.input_schema.get("required", []) if r in properties]
    names = required[:2] or list(properties)[:1]
    return tool.name, {name: _sample_value(properties[name]) for name in names}


def call_example(call_format: CallFormat, tools: Sequence[Tool] | None = None) -> str:
    """One call written in ``call_format``, as a template's ``{call_example}`` shows it.

    Without ``tools`` the call names ``tool_name`` with ``{"argument": "value"}``, a
    placeholder no model mistakes for a real tool; with ``tools`` it calls the first
    one with sample values for its first required arguments.
    """
    name, arguments = _example_call(tools)
    args = json.dumps(arguments, ensure_ascii=False)
    if call_format == "mcs_json":
        return f'{{"tool": {json.dumps(name)}, "arguments": {args}}}'
    if call_format == "hermes":
        return f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": {args}}}\n</tool_call>'
    if call_format == "llama3_json":
        return f'{{"name": {json.dumps(name)}, "parameters": {args}}}'
    if call_format == "mistral":
        return f'[TOOL_CALLS] [{{"name": {json.dumps(name)}, "arguments": {args}}}]'
    if call_format == "pythonic":
        inner = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
        return f"[{name}({inner})]"
    raise ValueError(f"unknown call format {call_format!r}")


# --------------------------------------------------------------------------- descriptions

_NOISE_KEYS = frozenset({"title", "$schema", "$id", "$comment"})
# Reading order for a model: what a value is before the details of its parts.
_KEY_ORDER = ("type", "description", "enum", "const", "default", "properties", "required", "items")


def _is_null(schema: Any) -> bool:
    return isinstance(schema, Mapping) and schema.get("type") == "null" and len(schema) == 1


def clean_schema(schema: Any) -> Any:
    """``schema`` without what a model does not need: generated ``title``\\ s, ``$schema``,
    ``$comment``, ``additionalProperties: false``. Optional values written as
    ``anyOf: [X, {"type": "null"}]`` become ``X`` with ``"null"`` added to its type.
    Every type, enum, default, description, constraint and ``required`` list is kept.
    """
    if not isinstance(schema, Mapping):
        return schema
    node = {k: v for k, v in schema.items() if k not in _NOISE_KEYS}
    if node.get("additionalProperties") is False:
        del node["additionalProperties"]
    options = node.get("anyOf")
    if isinstance(options, list) and len(options) == 2 and any(_is_null(o) for o in options):
        other = next(o for o in options if not _is_null(o))
        if isinstance(other, Mapping) and isinstance(other.get("type"), str) and "$ref" not in other:
            del node["anyOf"]
            merged = {**other, **node}
            merged["type"] = [other["type"], "null"]
            node = merged
    cleaned = map_subschemas(node, clean_schema)
    ordered = {key: cleaned[key] for key in _KEY_ORDER if key in cleaned}
    ordered.update((key, value) for key, value in cleaned.items() if key not in ordered)
    return ordered


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _compact(value: Any) -> str:
    """JSON without the spaces after ``,`` and ``:``: the same facts in fewer tokens."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_DEFS_KEYS = ("$defs", "definitions")
SHARED_DEFINITIONS_LEAD = "Definitions the tools below refer to with $ref:"


def shared_definitions(tools: Sequence[Tool]) -> tuple[dict[str, Any], list[Tool]]:
    """The ``$defs`` that several tools carry, lifted into one table, and the tools
    without them (a definition only one tool uses stays with it).

    Tools of one spec share their definitions (a REST API's ``Pod``, ``Issue``...): a
    description that repeats each tool's closure of them grows with tools x definitions.
    A name two tools define differently is not lifted.
    """
    seen: dict[str, Any] = {}
    users: dict[str, int] = {}
    clashing: set[str] = set()
    for tool in tools:
        for key in _DEFS_KEYS:
            defs = tool.input_schema.get(key)
            if not isinstance(defs, Mapping):
                continue
            for name, body in defs.items():
                first = seen.setdefault(name, body)
                if first is not body and first != body:
                    clashing.add(name)
                users[name] = users.get(name, 0) + 1
    table = {name: seen[name] for name, count in users.items() if count > 1 and name not in clashing}
    if not table:
        return {}, list(tools)
    stripped = []
    for tool in tools:
        schema = dict(tool.input_schema)
        changed = False
        for key in _DEFS_KEYS:
            defs = schema.get(key)
            if isinstance(defs, Mapping) and any(name in table for name in defs):
                rest = {name: body for name, body in defs.items() if name not in table}
                if rest:
                    schema[key] = rest
                else:
                    del schema[key]
                changed = True
        stripped.append(replace(tool, input_schema=schema) if changed else tool)
    return table, stripped


def _function_entry(tool: Tool) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": tool.name}
    if tool.description:
        entry["description"] = tool.description
    entry["parameters"] = clean_schema(tool.input_schema)
    return entry


def _json_lines(tools: Sequence[Tool], entry: Any) -> str:
    table, tools = shared_definitions(tools)
    lines = [_compact(entry(tool)) for tool in tools]
    if table:
        cleaned = {name: clean_schema(body) for name, body in table.items()}
        lines.insert(0, f"{SHARED_DEFINITIONS_LEAD} {_compact({'$defs': cleaned})}")
    return "\n".join(lines)


def _render_json(tools: Sequence[Tool]) -> str:
    return _json_lines(tools, _function_entry)


def _render_openai(tools: Sequence[Tool]) -> str:
    return _json_lines(tools, lambda tool: {"type": "function", "function": _function_entry(tool)})


# TypeScript rendering: the "namespace functions" shape OpenAI models see their tools in.

_TS_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_TS_NOTE_KEYS = ("format", "pattern", "minLength", "maxLength", "minimum", "maximum",
                 "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
                 "maxItems", "uniqueItems", "minProperties", "maxProperties", "examples")


def _ts_comment_lines(text: str) -> list[str]:
    return [f"// {line}".rstrip() for line in text.strip().splitlines()]


def _ts_notes(schema: Mapping[str, Any]) -> str:
    notes = [f"{key}: {_dumps(schema[key])}" for key in _TS_NOTE_KEYS if key in schema]
    if "default" in schema:
        notes.insert(0, f"default: {_dumps(schema['default'])}")
    items = schema.get("items")
    if isinstance(items, Mapping):
        # an item's own description and constraints have no other place in the type
        item_notes = _ts_notes(items) if not items.get("properties") else ""
        item_text = "; ".join(
            part for part in (str(items.get("description", "")).strip(), item_notes) if part
        )
        if item_text:
            notes.append(f"each item: {item_text}")
    return ", ".join(notes)


def _ts_alias(def_name: str) -> str:
    """The type name a ``$defs`` entry is declared under, and referred to by."""
    return def_name if _TS_IDENTIFIER.match(def_name) else "_" + re.sub(r"[^A-Za-z0-9_]", "_", def_name)


def _ts_type(schema: Any) -> str:
    """The TypeScript type of one schema node; objects span several lines."""
    if schema is True or schema == {} or not isinstance(schema, Mapping):
        return "any"
    if isinstance(schema.get("$ref"), str):
        return _ts_alias(schema["$ref"].rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~"))
    if "const" in schema:
        return _dumps(schema["const"])
    if isinstance(schema.get("enum"), list):
        return " | ".join(_dumps(v) for v in schema["enum"]) or "never"
    for key, joiner in (("anyOf", " | "), ("oneOf", " | "), ("allOf", " & ")):
        options = schema.get(key)
        if isinstance(options, list) and options:
            parts = [_ts_type(o) for o in options]
            return joiner.join(f"({p})" if " | " in p or " & " in p else p for p in parts)
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(_ts_type({**schema, "type": k}) for k in kind)
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else None
    if kind in ("string", "boolean", "null"):
        return str(kind)
    if kind == "number":
        return "number"
    if kind == "integer":
        return "integer"  # not TypeScript, but a model must not send 2.5 where 2 is meant
    if kind == "array":
        prefix = schema.get("prefixItems")
        if isinstance(prefix, list):
            return "[" + ", ".join(_ts_type(p) for p in prefix) + "]"
        item = _ts_type(schema.get("items", True))
        return f"({item})[]" if " " in item and not item.endswith("}") else f"{item}[]"
    if kind == "object":
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            return _ts_object(schema)
        extra = schema.get("additionalProperties")
        if isinstance(extra, Mapping):
            return f"Record<string, {_ts_type(extra)}>"
        return "object"
    return "any"


def _ts_object(schema: Mapping[str, Any]) -> str:
    # Like OpenAI's own rendering, nested members are not indented: indents cost tokens.
    properties: Mapping[str, Any] = schema.get("properties") or {}
    required = set(schema.get("required", []))
    lines = ["{"]
    for name, sub in properties.items():
        sub = sub if isinstance(sub, Mapping) else {}
        description = sub.get("description")
        if isinstance(description, str) and description.strip():
            lines.extend(_ts_comment_lines(description))
        key = name if _TS_IDENTIFIER.match(name) else _dumps(name)
        optional = "" if name in required else "?"
        line = f"{key}{optional}: {_ts_type(sub)},"
        notes = _ts_notes(sub)
        lines.append(f"{line} // {notes}" if notes else line)
    if schema.get("additionalProperties") not in (None, False):
        extra = schema["additionalProperties"]
        lines.append(f"[key: string]: {_ts_type(extra) if isinstance(extra, Mapping) else 'any'},")
    lines.append("}")
    return "\n".join(lines)


def _ts_definitions(defs: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for def_name, def_schema in defs.items():
        if isinstance(def_schema, Mapping) and def_schema.get("description"):
            lines.extend(_ts_comment_lines(def_schema["description"]))
        lines.append(f"type {_ts_alias(def_name)} = {_ts_type(def_schema)};")
    return lines


def _render_typescript(tools: Sequence[Tool]) -> str:
    blocks = ["namespace functions {"]
    table, tools = shared_definitions(tools)
    if table:
        blocks.append("\n".join(["", *_ts_definitions({n: clean_schema(b) for n, b in table.items()})]))
    for tool in tools:
        schema = clean_schema(tool.input_schema)
        lines: list[str] = [""]
        for key in _DEFS_KEYS:
            defs = schema.get(key)
            if isinstance(defs, Mapping):
                lines.extend(_ts_definitions(defs))
        if tool.description:
            lines.extend(_ts_comment_lines(tool.description))
        own = schema.get("description")
        if isinstance(own, str) and own.strip() and own.strip() != tool.description.strip():
            lines.extend(_ts_comment_lines(own))
        properties = schema.get("properties")
        if isinstance(properties, Mapping) and properties:
            lines.append(f"type {tool.name} = (_: {_ts_object(schema)}) => any;")
        elif isinstance(schema.get("additionalProperties"), Mapping) or schema.get("additionalProperties") is True:
            lines.append(f"type {tool.name} = (_: {_ts_type(schema)}) => any;")
        else:
            lines.append(f"type {tool.name} = () => any;")
        blocks.append("\n".join(lines))
    blocks.append("\n} // namespace functions")
    return "\n".join(blocks)


# --------------------------------------------------------------------------- depth limit

#: Inline descriptions show this many levels of nested fields (an argument's fields are
#: level 2); deeper objects become :data:`DEPTH_MARKER` (``describe_tool`` has them whole).
INLINE_MAX_DEPTH = 2
DEPTH_MARKER = "fields left out: describe_tool(name) gives the full schema"
_DEF_PREFIXES = ("#/$defs/", "#/definitions/")
_SAME_LEVEL = ("items", "not", "if", "then", "else", "contains", "additionalItems", "unevaluatedItems")


def _ref_name(node: Mapping[str, Any]) -> str | None:
    ref = node.get("$ref")
    if isinstance(ref, str):
        for prefix in _DEF_PREFIXES:
            if ref.startswith(prefix):
                return ref[len(prefix):]
    return None


class _DepthCut:
    """Cuts the schemas of a set of tools at ``depth`` levels of fields, following
    ``$ref``\\ s: a definition is cut at the shallowest level any tool reaches it from."""

    def __init__(self, defs: Mapping[str, Any], depth: int) -> None:
        self.defs = defs
        self.depth = depth
        self.cut_any = False
        self._fields: dict[str, bool] = {}

    def has_fields(self, node: Any, seen: frozenset[str] = frozenset()) -> bool:
        """Whether ``node`` (through references) describes an object's fields."""
        if not isinstance(node, Mapping):
            return False
        name = _ref_name(node)
        if name is not None:
            if name in seen:
                return True
            known = self._fields.get(name)
            if known is None:
                known = self.has_fields(self.defs.get(name), seen | {name})
                self._fields[name] = known
            return known
        if node.get("properties") or node.get("patternProperties") or isinstance(node.get("additionalProperties"), Mapping):
            return True
        for key in ("items", "not"):
            if self.has_fields(node.get(key), seen):
                return True
        return any(self.has_fields(option, seen) for key in ("anyOf", "oneOf", "allOf", "prefixItems")
                   for option in node.get(key) or () if isinstance(node.get(key), list))

    def cut(self, node: Any, level: int, refs: dict[str, int]) -> Any:
        """``node`` (a value at ``level``; its fields are at ``level + 1``) cut past the
        depth; each definition it still refers to goes into ``refs`` with its level."""
        if not isinstance(node, Mapping):
            return node
        if level > self.depth and self.has_fields(node):
            self.cut_any = True
            kind = node.get("type")
            return {"type": kind if isinstance(kind, str) and kind in ("object", "array") else "object",
                    "description": DEPTH_MARKER}
        name = _ref_name(node)
        if name is not None:
            if refs.get(name, level + 1) > level:
                refs[name] = level
            return node
        out = dict(node)
        for key in ("properties", "patternProperties"):
            value = out.get(key)
            if isinstance(value, Mapping):
                out[key] = {k: self.cut(v, level + 1, refs) for k, v in value.items()}
        if isinstance(out.get("additionalProperties"), Mapping):
            out["additionalProperties"] = self.cut(out["additionalProperties"], level + 1, refs)
        for key in _SAME_LEVEL:
            if isinstance(out.get(key), Mapping):
                out[key] = self.cut(out[key], level, refs)
        for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
            if isinstance(out.get(key), list):
                out[key] = [self.cut(v, level, refs) for v in out[key]]
        return out


def limit_depth(tools: Sequence[Tool], depth: int = INLINE_MAX_DEPTH) -> tuple[list[Tool], bool]:
    """The tools with their schemas cut past ``depth`` levels of nested fields, and
    whether anything was cut.

    Each object deeper than ``depth`` (through ``$ref``\\ s too) becomes ``{"type":
    "object", "description": DEPTH_MARKER}``; a definition no longer reached is dropped.
    The names, types, enums, defaults and ``required`` lists of the first ``depth`` levels
    stay, and so do references to definitions without fields (enums, strings). Only the
    description a model reads shrinks: ``Tool.input_schema`` (validation) and
    ``describe_tool`` keep the whole schema.
    """
    defs: dict[str, Any] = {}
    alone: list[int] = []
    for index, tool in enumerate(tools):
        clash = False
        for key in _DEFS_KEYS:
            own = tool.input_schema.get(key)
            if isinstance(own, Mapping):
                for name, body in own.items():
                    first = defs.setdefault(name, body)
                    clash = clash or (first is not body and first != body)
        if clash:
            alone.append(index)
    if alone and len(tools) > 1:  # a definition name two tools define differently: those tools alone
        skip = set(alone)
        done, cut_any = limit_depth([t for i, t in enumerate(tools) if i not in skip], depth)
        kept = iter(done)
        out: list[Tool] = []
        for i, tool in enumerate(tools):
            if i in skip:
                (one,), changed = limit_depth([tool], depth)
                out.append(one)
                cut_any = cut_any or changed
            else:
                out.append(next(kept))
        return out, cut_any
    cutter = _DepthCut(defs, depth)
    roots: list[tuple[Any, dict[str, int]]] = []
    levels: dict[str, int] = {}
    for tool in tools:
        refs: dict[str, int] = {}
        root = {k: v for k, v in tool.input_schema.items() if k not in _DEFS_KEYS}
        roots.append((cutter.cut(root, 0, refs), refs))
        for name, level in refs.items():
            levels[name] = min(level, levels.get(name, level))
    # Definitions, shallowest first: each is cut at the least level it is reached from.
    bodies: dict[str, tuple[Any, dict[str, int]]] = {}
    queue = sorted((level, name) for name, level in levels.items())
    while queue:
        level, name = heapq.heappop(queue)
        if name in bodies or name not in defs:
            continue
        refs = {}
        bodies[name] = (cutter.cut(defs[name], level, refs), refs)
        for inner, at in refs.items():
            if at < levels.get(inner, at + 1):
                levels[inner] = at
                heapq.heappush(queue, (at, inner))
    if not cutter.cut_any:
        return list(tools), False
    out = []
    for tool, (root, refs) in zip(tools, roots, strict=True):
        reach: set[str] = set()
        stack = [name for name in refs if name in bodies]
        while stack:
            name = stack.pop()
            if name not in reach:
                reach.add(name)
                stack.extend(n for n in bodies[name][1] if n in bodies and n not in reach)
        schema = dict(root)
        for key in _DEFS_KEYS:
            own = tool.input_schema.get(key)
            if isinstance(own, Mapping):
                kept_defs = {name: bodies[name][0] for name in own if name in reach}
                if kept_defs:
                    schema[key] = kept_defs
        out.append(replace(tool, input_schema=schema))
    return out, True


_RENDERERS = {"json": _render_json, "openai": _render_openai, "typescript": _render_typescript}


def render_function_description(
    tools: Sequence[Tool],
    *,
    model_name: str | None = None,
    registry: PromptRegistry | None = None,
    style: DescriptionStyle | None = None,
    max_depth: int | None = INLINE_MAX_DEPTH,
) -> str:
    """The tools rendered for ``model_name``, in the style its template asks for.

    Every tool keeps its name, description and each parameter's type, enum, default,
    description, constraints and required flag; generated noise (``title``,
    ``additionalProperties: false``) is dropped. ``style`` forces a style; otherwise the
    template :meth:`PromptRegistry.select` picks for the model decides (``registry``,
    else :func:`default_registry`). Nested fields deeper than ``max_depth`` levels are cut
    (:func:`limit_depth`, a pointer to ``describe_tool`` in their place); ``None`` keeps all.
    """
    if style is None:
        style = (registry or default_registry()).select(model_name).description_style
    renderer = _RENDERERS.get(style)
    if renderer is None:
        raise ValueError(f"unknown description style {style!r}; expected one of {', '.join(DESCRIPTION_STYLES)}")
    listed = list(tools)
    if max_depth is not None:
        listed, _ = limit_depth(listed, max_depth)
    return renderer(listed)


NO_TOOLS_DESCRIPTION = "No tools are available."


def render_no_tools_message(driver_name: str) -> str:
    """The system prompt of a driver that offers no tools (yet): it tells the model not to try.

    It contains :data:`NO_TOOLS_DESCRIPTION`, the function description of such a driver.
    """
    return f"{driver_name}: {NO_TOOLS_DESCRIPTION} Answer without calling any tool."


def render_system_message(
    *,
    function_description: str,
    model_name: str | None,
    driver_name: str,
    registry: PromptRegistry | None = None,
    tools: Sequence[Tool] | None = None,
) -> str:
    """A complete system prompt: the template for ``model_name`` with its variables filled.

    ``registry`` defaults to :func:`default_registry`. ``tools``, when given, makes the
    call example use the first real tool instead of a placeholder.
    """
    template = (registry or default_registry()).select(model_name)
    return template.render(
        function_description=function_description,
        driver_name=driver_name,
        model_name=model_name or "",
        call_example=call_example(template.call_format, tools),
    )
