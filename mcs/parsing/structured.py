"""Calls in already-decoded data: provider messages and JSON objects models write.

Recognised shapes (each documented in the project's format notes):

* OpenAI chat: a completion (``choices[].message``), a message, ``tool_calls[]`` with
  ``function.arguments`` as a JSON string, legacy ``function_call``.
* OpenAI Responses: ``output[]`` items of ``type: function_call`` (id from ``call_id``).
* Anthropic: ``content[]`` blocks of ``type: tool_use`` (``input`` is an object), a whole
  message or a bare list of blocks.
* Gemini: ``candidates[].content.parts[].functionCall`` with ``args``, bare parts.
* Objects models write: ``{"tool"|"name"|"function"|"func"|"action": ...,
  "arguments"|"parameters"|"params"|"args"|"input"|"action_input": ...}``, lists of
  them, ``{"tool_calls": [...]}`` (xLAM), and name-as-key dumps
  ``[{"fn": "{json}"}]`` (weak: the key is taken as the name).

Given a whole conversation (a list of messages with ``role``), only the last message is
read, and only if the model wrote it: earlier calls have been answered already.
Provider-run calls (Anthropic ``server_tool_use``, ``mcp_tool_use``) are not returned.

Strings met inside the data (a message's text content, a quoted call in a list) are
handed back by :func:`from_data` so the text reader can look at them.
"""

from __future__ import annotations

from typing import Any, Final

from mcs.parsing._common import (
    EXPLICIT,
    GUESSED,
    NAME_RE,
    WEAK,
    Found,
    clean_name,
    coerce_arguments,
    looks_like_schema,
)
from mcs.parsing.jsonspans import loads_lenient
from mcs.parsing.pythonic import lenient_call

MAX_DEPTH: Final = 12
MAX_NODES: Final = 20_000

_NAME_KEYS: Final = ("tool", "name", "function", "func", "action", "tool_name", "function_name")
_ARG_KEYS: Final = ("arguments", "parameters", "params", "args", "input", "action_input", "tool_input", "kwargs")
_NOT_CALLS: Final = frozenset({"final answer", "final_answer"})
# Calls the provider already ran (Anthropic server tools, remote MCP): never ours to run.
_RUN_ELSEWHERE: Final = frozenset({"server_tool_use", "mcp_tool_use"})
_BARE_CALL_KEYS: Final = frozenset({"tool", "name", "id", "type"})
_MODEL_ROLES: Final = frozenset({"assistant", "model"})
# Messages a model did not write: tool results (OpenAI "tool" and legacy "function", Llama
# "ipython"), the user's and the system's (other roles, such as Cohere's "CHATBOT", are read).
_OTHER_ROLES: Final = frozenset({"tool", "function", "ipython", "user", "system", "developer"})
_CONTAINER_KEYS: Final = ("choices", "message", "candidates", "content", "parts", "output", "delta")
_CALL_KEYS: Final = ("tool_calls", "function_call", "functionCall", "function_calls")
_STRUCTURAL_KEYS: Final = frozenset((*_CONTAINER_KEYS, *_CALL_KEYS, *_NAME_KEYS, "text", "function"))
# A tool's result as agent loops feed it back (`{"tool": "f", "result": ...}`, the MCS loop's
# own shape; `"error"` for a refusal): a model that echoes one reports data, so nothing
# under it is a call, whatever it holds.
_RESULT_KEYS: Final = frozenset({"result", "results", "output", "error", "observation", "tool_result", "response"})
_RESULT_OF_KEYS: Final = ("tool", "name", "tool_name", "function", "tool_call_id", "tool_use_id")


class _Walk:
    __slots__ = ("deep", "found", "nodes", "strings")

    def __init__(self, deep: bool) -> None:
        self.found: list[Found] = []
        self.strings: list[str] = []
        self.nodes = 0
        self.deep = deep


def _call(name: Any, arguments: Any, call_id: Any, *, confidence: int = EXPLICIT) -> Found | None:
    clean = clean_name(name)
    if clean is None or clean.lower() in _NOT_CALLS:
        return None
    args = coerce_arguments(arguments)
    if args is None or looks_like_schema(args):
        return None
    return Found(clean, args, call_id if isinstance(call_id, str) and call_id else None, confidence)


def _function_object(item: dict[str, Any]) -> Found | None:
    """``{"name": ..., "arguments": ...}`` and its aliases, or ``None``."""
    function = item.get("function")
    if isinstance(function, dict) and isinstance(function.get("name"), str):
        # OpenAI tool_calls entry: {"id", "type": "function", "function": {...}}
        arguments = function.get("arguments", function.get("parameters"))
        return _call(function["name"], arguments, item.get("id"))
    call_id = item.get("id") or item.get("call_id")
    kind = item.get("type")
    if isinstance(kind, str) and kind in _RUN_ELSEWHERE:
        return None
    if kind == "function_call":  # Responses: call_id is the id results must echo
        return _call(item.get("name"), item.get("arguments"), item.get("call_id") or item.get("id"))
    if kind == "tool_use":
        return _call(item.get("name"), item.get("input"), call_id)
    for name_key in _NAME_KEYS:
        name = item.get(name_key)
        if not isinstance(name, str):
            continue
        for arg_key in _ARG_KEYS:
            if arg_key in item:
                return _call(name, item[arg_key], call_id)
        if (name_key == "tool" or kind == "function") and item.keys() <= _BARE_CALL_KEYS:
            # MCS canonical / Llama with no arguments; {"tool": "f", "result": ...} is not a call
            return _call(name, None, call_id)
        if name_key == "name" and len(item) > 1:
            # {"name": "math.gcd", "num1": 12}: arguments inlined next to the name. Whether
            # "name" is a tool at all is a guess.
            rest = {k: v for k, v in item.items() if k not in ("name", "id", "type")}
            return _call(name, rest, call_id, confidence=GUESSED) if rest else None
        return None
    return None


def _listed_arguments(item: dict[str, Any]) -> list[Found]:
    """``{"name": "f", "params": [{...}, {...}]}``: one call per object in the list."""
    for name_key in ("name", "tool", "function"):
        name = item.get(name_key)
        if not isinstance(name, str):
            continue
        for arg_key in _ARG_KEYS:
            listed = item.get(arg_key)
            if isinstance(listed, list) and listed and all(isinstance(a, dict) for a in listed):
                calls = [_call(name, arguments, None) for arguments in listed]
                return [call for call in calls if call is not None] if all(calls) else []
        return []
    return []


def _is_name(item: Any) -> bool:
    return isinstance(item, str) and NAME_RE.fullmatch(item.strip()) is not None


def _is_argument_item(item: Any) -> bool:
    return isinstance(item, dict) or (isinstance(item, str) and _keywords(item) is not None)


def _keywords(text: str) -> dict[str, Any] | None:
    """``'key=C'``, ``'a=[1, 2], b=3'`` or ``'(a=1, b=2)'``: keyword arguments written as a string."""
    stripped = text.strip()
    if stripped.startswith("(") and stripped.endswith(")"):
        stripped = stripped[1:-1]
    if "=" not in stripped:
        return None
    found = lenient_call(f"f({stripped})")
    return found.arguments if found is not None and found.arguments else None


def _flat_calls(items: list[Any]) -> list[Found] | None:
    """Calls written as a flat list whose first item is the name (the name is a guess).

    ``['math.hcf', {'number1': 36}]``; ``['f', {...}, {...}]`` (one call per object);
    ``['music.create', 'key=C', 'chords=4']`` and ``['f', '(a=1, b=2)']`` (keywords as
    strings); ``['integrate', 'x^3', -2, 3]`` (positional values, named later from the
    schema); ``['f', {...}, 'f', {...}]`` (several calls). ``None`` when the list mixes
    objects with other arguments for one name, or does not start with a name.
    """
    if len(items) < 2 or not _is_name(items[0]):
        return None
    first = items[0].strip()
    calls: list[Found] = []
    groups: list[tuple[str, list[Any]]] = []
    for number, item in enumerate(items):
        following = items[number + 1] if number + 1 < len(items) else None
        starts = number == 0 or (_is_name(item) and (item.strip() == first or _is_argument_item(following)))
        if starts:
            groups.append((item.strip(), []))
        else:
            groups[-1][1].append(item)
    for name, arguments in groups:
        objects = [item for item in arguments if isinstance(item, dict)]
        if objects:
            if len(objects) != len(arguments):
                return None
            calls.extend(Found(name, dict(item), None, GUESSED) for item in objects)
            continue
        keywords: dict[str, Any] = {}
        positional: list[Any] = []
        for item in arguments:
            written = _keywords(item) if isinstance(item, str) else None
            if written is not None:
                keywords.update(written)
            elif keywords:
                return None  # a positional value after keywords: no reading
            else:
                positional.append(item)
        if not keywords and not positional:
            return None
        calls.append(Found(name, keywords, None, GUESSED, tuple(positional)))
    return calls or None


_SCHEMA_TYPES: Final = frozenset({"string", "number", "integer", "boolean", "array", "object", "dict", "float", "null"})
_SCHEMA_WORDS: Final = frozenset({"type", "description", "enum", "items", "properties", "required", "default", "format"})


def _schema_property(value: dict[str, Any]) -> bool:
    """``{"type": "number", "description": ...}``: a property of a schema echoed back."""
    return value.get("type") in _SCHEMA_TYPES and value.keys() <= _SCHEMA_WORDS and len(value) > 1


def _schema_properties(value: dict[str, Any]) -> bool:
    """``{"city": {"type": "string", ...}}``: the ``properties`` map of a schema."""
    return bool(value) and all(isinstance(item, dict) and _schema_property(item) for item in value.values())


def _schema_echo(node: dict[str, Any]) -> bool:
    """A tool *definition* (name and a parameter schema), or a schema: nothing in it is a call."""
    if looks_like_schema(node):
        return True
    return any(isinstance(node.get(key), dict) and looks_like_schema(node[key]) for key in _ARG_KEYS)


def _name_as_key(item: dict[str, Any]) -> list[Found]:
    """``{"spotify_play": "{\\"artist\\": ...}"}`` (FC dumps), and ``{"f": [{...}]}``
    (the arguments in a list, one call each); ``[]`` when ``item`` is neither."""
    if len(item) != 1:
        return []
    ((key, value),) = item.items()
    if not isinstance(key, str) or not NAME_RE.fullmatch(key) or key in _STRUCTURAL_KEYS:
        return []
    if isinstance(value, str):
        if not value.lstrip().startswith("{"):
            return []
        value = loads_lenient(value)
    values = value if isinstance(value, list) and value else [value]
    found = []
    for arguments in values:
        if not isinstance(arguments, dict) or _schema_property(arguments) or _schema_properties(arguments):
            return []
        call = _call(key, arguments, None, confidence=WEAK)
        if call is None:
            return []
        found.append(call)
    return found


def _walk(node: Any, walk: _Walk, depth: int) -> None:
    walk.nodes += 1
    if depth > MAX_DEPTH or walk.nodes > MAX_NODES:
        return
    if isinstance(node, list):
        flat = _flat_calls(node) if depth <= 1 else None
        if flat is not None:
            walk.found.extend(flat)
            return
        if node and all(isinstance(item, dict) and "role" in item for item in node):
            # A conversation: only its last message can hold calls still to run; older
            # calls have been answered already.
            last = node[-1]
            if last.get("role") in _MODEL_ROLES:
                _walk(last, walk, depth + 1)
            return
        for item in node:
            _walk(item, walk, depth + 1)
        return
    if isinstance(node, str):
        walk.strings.append(node)
        return
    if not isinstance(node, dict):
        return
    role = node.get("role")
    if isinstance(role, str) and role.lower() in _OTHER_ROLES:
        return  # a tool's result, the user's or the system's words: no call of the model's
    if len(node) == 1 and next(iter(node)) not in _STRUCTURAL_KEYS and (
        not walk.deep or isinstance(next(iter(node.values())), str)
    ):
        # {"fn": "{json}"}: the FC-dump shape, by far the most common single-key object
        keyed = _name_as_key(node)
        if keyed:
            walk.found.extend(keyed)
            return
    before = len(walk.found)
    for key in _CALL_KEYS:
        inner = node.get(key)
        if isinstance(inner, list):
            for call in inner:
                if isinstance(call, dict):
                    found = _function_object(call)
                    walk.found.extend([found] if found is not None else _name_as_key(call))
                elif isinstance(call, str):
                    walk.strings.append(call)
        elif isinstance(inner, dict):
            found = _function_object(inner)
            if found is None and "name" in inner:  # Gemini functionCall: {"name", "args", "id"}
                found = _call(inner.get("name"), inner.get("args", inner.get("arguments")), inner.get("id"))
            if found is not None:
                walk.found.append(found)
    if len(walk.found) > before:
        return
    found = _function_object(node)
    if found is not None:
        walk.found.append(found)
        return
    listed = _listed_arguments(node)
    if listed:
        walk.found.extend(listed)
        return
    container = False
    for key in _CONTAINER_KEYS:
        inner = node.get(key)
        if isinstance(inner, (list, dict)):
            container = True
            _walk(inner, walk, depth + 1)
        elif isinstance(inner, str) and key in ("content", "text"):
            walk.strings.append(inner)
    text = node.get("text")
    if isinstance(text, str):
        walk.strings.append(text)
        container = True
    if container:
        return
    if walk.deep:  # a JSON value found in text: calls may sit under a wrapper key
        if _schema_echo(node):
            return
        if not _RESULT_KEYS.isdisjoint(node) and any(isinstance(node.get(key), str) for key in _RESULT_OF_KEYS):
            return  # {"tool": "f", "result": {...}}: a tool's result the model echoes
        for value in node.values():
            if isinstance(value, (dict, list)):
                _walk(value, walk, depth + 1)
        if len(walk.found) > before:
            return
    walk.found.extend(_name_as_key(node))


def canonical_call(item: dict[str, Any]) -> Found | None:
    """The call when ``item`` has exactly the keys of the canonical MCS call,
    ``{"tool"|"name": str, "arguments": {...}}``, else ``None``; what :func:`from_data`
    finds for such an object, without walking it."""
    if len(item) != 2 or "arguments" not in item:
        return None
    name = item.get("tool", item.get("name"))
    arguments = item["arguments"]
    if type(name) is not str or type(arguments) is not dict:
        return None
    clean = clean_name(name)  # what _call does, less decoding arguments that are an object already
    if clean is None or clean.lower() in _NOT_CALLS or looks_like_schema(arguments):
        return None
    return Found(clean, arguments)


def from_data(data: Any, *, deep: bool = False) -> tuple[list[Found], list[str]]:
    """Calls found in ``data`` in order, and the strings met where no call was found.

    ``deep`` also looks under keys that are not part of a known message shape (for
    JSON found inside text, which may wrap calls in anything). Never raises on
    well-formed Python data; depth and node count are capped (:data:`MAX_DEPTH`,
    :data:`MAX_NODES`).
    """
    walk = _Walk(deep)
    _walk(data, walk, 0)
    return walk.found, walk.strings
