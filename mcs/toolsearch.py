"""Ranked search over tools for discovery mode: BM25 from tantivy, over fields a tool has.

Each tool is one document with these fields, searched together with per-field weights
(BM25 per field, the scores added):

* ``name``: the words of its name and of its original (spec) name, with camelCase,
  snake_case, hyphens, dots and slashes split (``pulls/create`` -> ``pulls create``);
* ``summary``: its title, else the first line of its description;
* ``description``: the description with HTML and markdown markup removed;
* ``group``: its group (an OpenAPI tag) and tags;
* ``path``: the fixed segments of its HTTP path (``/repos/{owner}/{repo}/pulls`` ->
  ``repos pulls``);
* ``action``: what its HTTP method does, in the words people use (``POST``: create, add,
  send, start...; ``GET``: get, list, show...; ``PATCH``/``PUT``: update, edit, close,
  rename...; ``DELETE``: delete, remove, cancel...).

Words are stemmed with the Snowball English stemmer (tantivy's ``en_stem``), so "charges"
finds "charge"; the query's words are looked up with a few synonyms people use for the
same action or thing ("open a pull request" also asks for "create"), weighed less than
the words themselves. Stop words are dropped from the query.

tantivy (the Rust search library behind Quickwit) is used rather than bm25s: it scores
each field with BM25 and adds the weighted scores, which one-field BM25 cannot do without
repeating text; it stems on its own, needs no NumPy, and answers in tens of microseconds.
"""

from __future__ import annotations

import html
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from mcs.tools import Tool

FIELD_WEIGHTS: Final = {
    "name": 2.0, "summary": 2.0, "lead": 1.4, "description": 0.4, "group": 0.75, "path": 2.0,
    "action": 3.0, "parameters": 0.35,
}
PREFIX_WEIGHT: Final = 0.7
SYNONYM_WEIGHT: Final = 0.6
MODIFIER_WEIGHT: Final = 0.35

_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CAMEL_WORD: Final = re.compile(r"\b[A-Za-z0-9]*(?:[a-z0-9][A-Z]|[A-Z][A-Z][a-z])[A-Za-z0-9]*")
_WORD: Final = re.compile(r"[a-z0-9]+")
_TAG: Final = re.compile(r"<[^<>]{0,200}>")
_MARKDOWN_LINK: Final = re.compile(r"\[([^\]\n]{0,200})\]\([^)\n]{0,500}\)")
_MARKDOWN_MARKS: Final = re.compile(r"[*_`#>]+")

ACTIONS: Final = {
    "POST": "create add new make send start submit post run open",
    "GET": "get list show read view fetch find search retrieve see look",
    "PATCH": "update edit change modify close rename set",
    "PUT": "update replace edit set change",
    "DELETE": "delete remove cancel destroy drop",
}

# The verb a task starts with -> the words APIs use for that action ("open a pull
# request" creates one; in "list open pull requests", "open" is not the action).
VERBS: Final = {
    "open": "create", "new": "create", "make": "create", "add": "create add", "buy": "purchase create",
    "purchase": "create", "publish": "create", "reply": "create", "commit": "create update", "register": "create", "issue": "create",
    "report": "create", "file": "create", "submit": "create", "post": "create", "write": "create",
    "start": "create start", "run": "create start exec", "launch": "create start", "execute": "exec",
    "set": "create update set", "schedule": "create", "upload": "create upload",
    "remove": "delete remove", "erase": "delete", "destroy": "delete", "drop": "delete",
    "release": "delete release", "clean": "prune delete", "kick": "delete remove",
    "close": "update close", "edit": "update", "change": "update", "modify": "update",
    "rename": "update rename", "hang": "update", "end": "update", "move": "update transfer",
    "show": "get list", "view": "get", "see": "get list", "fetch": "get", "retrieve": "get",
    "read": "get read", "look": "get search", "find": "search list get", "lookup": "search get",
    "check": "get", "display": "get list", "what": "get", "who": "list get", "how": "get",
    "kill": "kill stop", "stop": "stop", "approve": "review create approve",
    "grant": "binding create", "invite": "add", "verify": "validation validate verify",
    "subscribe": "subscription create", "rerun": "re run", "pay": "payout payment create",
}
# Words for a thing -> the words APIs use for it, anywhere in the task.
NOUNS: Final = {
    "text": "message", "sms": "message", "texts": "message", "phone": "call number",
    "repo": "repository", "repository": "repo", "repositories": "repo", "pr": "pull",
    "bug": "issue", "ticket": "issue", "mail": "email", "someone": "participant member user",
    "person": "participant member user", "alert": "trigger notification", "profile": "user",
    "disk": "data usage df", "space": "usage", "assign": "assignee assignees", "my": "authenticated",
    "logs": "log", "log": "logs", "history": "list", "caller": "outgoing",
}
# What a tool does to what it names, from the verb in its name, else from its HTTP method
# and path (REST: POST to a collection creates, POST to an item changes it; GET of a
# collection lists, GET of an item reads it).
_NAME_INTENTS: Final = {
    "create": "create", "add": "create", "new": "create", "insert": "create", "upload": "create",
    "list": "list", "search": "list", "get": "get", "read": "get", "fetch": "get", "inspect": "get",
    "show": "get", "retrieve": "get", "update": "update", "patch": "update", "replace": "update",
    "edit": "update", "set": "update", "rename": "update", "delete": "delete", "remove": "delete",
    "destroy": "delete", "prune": "delete", "cancel": "delete", "start": "start", "run": "start",
    "stop": "stop", "kill": "stop",
}
# The task's first word -> the intents that do it.
_TASK_INTENTS: Final = {
    "create": "create", "add": "create", "new": "create", "open": "create", "make": "create",
    "register": "create", "publish": "create", "issue": "create", "report": "create",
    "file": "create", "submit": "create", "post": "create", "write": "create", "buy": "create",
    "purchase": "create", "schedule": "create", "upload": "create", "send": "create",
    "grant": "create", "invite": "create", "subscribe": "create", "pay": "create",
    "approve": "create update", "reply": "create", "commit": "create update", "verify": "create",
    "list": "list", "show": "list get", "see": "list get", "display": "list get", "find": "list get",
    "search": "list", "get": "get list", "view": "get", "fetch": "get", "retrieve": "get",
    "read": "get", "look": "get list", "check": "get", "inspect": "get", "download": "get",
    "update": "update", "edit": "update", "change": "update", "modify": "update", "rename": "update",
    "close": "update", "set": "update create", "move": "update", "hang": "update", "end": "update",
    "enable": "update", "disable": "update", "mark": "update", "lock": "update",
    "delete": "delete", "remove": "delete", "erase": "delete", "destroy": "delete", "drop": "delete",
    "cancel": "delete update", "clean": "delete", "kick": "delete", "revoke": "delete",
    "start": "start create", "run": "start create", "launch": "start create", "stop": "stop",
    "kill": "stop", "pause": "stop update", "what": "get list", "who": "list get", "how": "get list",
}
INTENT_WEIGHT: Final = 0.4
NAME_WEIGHT: Final = 0.6
CANDIDATES: Final = 30
# Words in names that name no thing: HTTP methods, and the caller ("for-authenticated-user").
_UNNAMING: Final = frozenset(re.findall(r"\w+", "post get put patch delete head for by with of to the a an in on authenticated"))
_PREFIX: Final = 4
_DESCRIBED: Final = 1500  # characters of a description indexed
_VERSION: Final = re.compile(r"v\d+(?:(?:alpha|beta)\d*)?|\d+")

_PREPOSITIONS: Final = frozenset(re.findall(r"\w+", (
    "from in to for with of on by into at about under over within across between per after "
    "before since until without via using inside onto through out off"
)))
_STOP: Final = frozenset(re.findall(r"\w+", (
    "a an the of for to in on and or by with from is it me my i we our you your this that these "
    "those be are was were do does can could would should please all any some there here which "
    "when where want need using use via into about at as its their them they up s"
)))


def words(text: str) -> list[str]:
    """Lower-case words of ``text``: camelCase, snake_case, hyphens, dots and slashes split."""
    return _WORD.findall(split_camel(text).lower())


def split_camel(text: str) -> str:
    """``text`` with its camelCase words split: ``HorizontalPodAutoscaler`` ->
    ``Horizontal Pod Autoscaler``."""
    if text.islower():
        return text
    return _CAMEL_WORD.sub(lambda word: _CAMEL.sub(" ", word.group()), text)


def plain_text(text: str) -> str:
    """``text`` without HTML tags, entities and markdown marks (link texts are kept)."""
    text = _MARKDOWN_LINK.sub(r"\1", text)
    text = html.unescape(_TAG.sub(" ", text))
    return " ".join(_MARKDOWN_MARKS.sub(" ", text).split())


def summary(tool: Tool, limit: int = 100) -> str:
    """One line that says what ``tool`` does: its title, else its description's first line."""
    for candidate in (tool.title, tool.description):
        for line in plain_text(candidate or "").splitlines() or [""]:
            line = line.strip()
            if line:
                return line if len(line) <= limit else line[: limit - 3] + "..."
    return ""


def group_key(tool: Tool) -> str:
    """The group a tool is listed under, lower-cased: ``meta["group"]``, else the first
    word of its name."""
    group = tool.meta.get("group")
    if isinstance(group, str) and group:
        return group.lower()
    found = words(tool.name)
    return found[0] if found else "other"


def intent(tool: Tool) -> str:
    """What ``tool`` does (create, list, get, update, delete, start, stop), from the verb in
    its name, else from its HTTP method and whether its path ends at an item; "" when unknown."""
    method = str(tool.meta.get("method") or "").upper()
    named = words(tool.original_name)
    if not (named and named[0] == method.lower()):  # "GetCharges" says GET, not get-or-list
        for word in words(f"{tool.name} {tool.original_name}"):
            found = _NAME_INTENTS.get(word)
            if found:
                return found
    item = str(tool.meta.get("path") or "").rstrip("/").endswith("}")
    if method == "POST":
        return "update" if item else "create"
    if method == "GET":
        return "get" if item else "list"
    return {"PUT": "update", "PATCH": "update", "DELETE": "delete"}.get(method, "")


def task_words(text: str) -> tuple[list[str], list[str]]:
    """The words of a task that say what to do and to what, and the words after its first
    preposition, which say where or with what ("run a container | from an image"); stop
    words dropped. A task that starts with a preposition has no modifiers."""
    found = words(text)
    cut = next((i for i, word in enumerate(found) if i and word in _PREPOSITIONS), len(found))
    asked = [word for word in found[:cut] if word not in _STOP]
    modifiers = [word for word in found[cut:] if word not in _STOP]
    if not asked:
        return modifiers or found, []
    return asked, modifiers


def task_intents(asked: Sequence[str]) -> list[str]:
    """What a task (its words, stop words dropped) asks to do, most likely first: from its
    first word ("open a pull request": create), and "new" anywhere asks to create."""
    intents = _TASK_INTENTS.get(asked[0], "update create").split() if asked else []
    if "new" in asked[1:]:  # "run a new container": whatever the verb, it makes one
        intents = ["create", *(name for name in intents if name != "create")]
    return intents


def _document_fields(tool: Tool) -> dict[str, str]:
    meta = tool.meta
    tags = meta.get("tags") or ()
    group = " ".join(words(" ".join([str(meta.get("group") or ""), *map(str, tags)])))
    path = str(meta.get("path") or "")
    method = str(meta.get("method") or "").upper()
    described = split_camel(plain_text((tool.description or "")[:_DESCRIBED]))
    return {
        "name": " ".join(words(f"{tool.name} {tool.original_name}")),
        "summary": split_camel(plain_text(tool.title or (tool.description or "").split("\n", 1)[0])),
        "description": described,
        "group": group,
        "path": " ".join(words(re.sub(r"\{[^}]*\}", " ", path))),
        "action": ACTIONS.get(method, ""),
        "parameters": _parameter_words(tool.input_schema),
        "lead": _first_sentence(described),
        "prefixes": prefixes(f"{tool.name} {tool.original_name} {tool.title or ''}"),
    }


def _first_sentence(text: str) -> str:
    end = re.search(r"[.!?](?:\s|$)", text)
    return text[: end.start() if end else 300][:300]


def prefixes(text: str) -> str:
    """The first letters of each longer word of ``text`` ("stargazers" and "starred" share
    "star"), so words of one family that stem apart still meet, weakly."""
    return " ".join(sorted({word[:_PREFIX] for word in words(text) if len(word) > _PREFIX}))


def _parameter_words(schema: Mapping[str, Any]) -> str:
    """The names of a tool's parameters and the values they take from a list (an enum's
    ``APPROVE`` says the tool approves)."""
    found: list[str] = []
    properties = schema.get("properties")
    for name, spec in (properties.items() if isinstance(properties, Mapping) else ()):
        found.append(str(name))
        values = spec.get("enum") if isinstance(spec, Mapping) else None
        if isinstance(values, list):
            found.extend(value for value in values[:50] if isinstance(value, str))
    return " ".join(words(" ".join(found)))


def _coverage(asked: frozenset[str]) -> Callable[[str], bool]:
    """Whether a task with the stems ``asked`` has a stem, or a word it starts or that
    starts it (stems of one word can differ: "autoscaling" -> "autosc", "autoscaler" ->
    "autoscal")."""
    seen: dict[str, bool] = {}

    def covers(stem: str) -> bool:
        found = seen.get(stem)
        if found is None:
            # Compared word by word, never through every start of a word: that costs the square
            # of its length, and a query or a tool's name may hold one very long word.
            found = any(
                (len(stem) >= _PREFIX and word.startswith(stem))
                or (_PREFIX <= len(word) < len(stem) and stem.startswith(word))
                for word in asked
            )
            seen[stem] = found
        return found

    return covers


class ToolIndex:
    """A BM25 index over ``tools`` (built once; searches are thread-safe).

    tantivy finds and scores the candidates; the best :data:`CANDIDATES` are then ranked
    again with two things BM25 does not see: whether the tool does what the task's first
    word asks (:func:`intent`), and how much of the tool's name the task covers (a tool
    named for more than was asked, ``list-requested-reviewers`` for "list pull requests",
    is worth less than ``pulls/list``).
    """

    def __init__(self, tools: Sequence[Tool]) -> None:
        import tantivy  # the core's dependency, imported when discovery first searches

        self.tools = list(tools)
        builder = tantivy.SchemaBuilder()
        for field in FIELD_WEIGHTS:
            builder.add_text_field(field, stored=False, tokenizer_name="en_stem")
        builder.add_text_field("prefixes", stored=False, tokenizer_name="default")
        builder.add_text_field("group_key", stored=False, tokenizer_name="raw")
        builder.add_integer_field("position", stored=True, indexed=False, fast=True)
        self._schema = builder.build()
        self._index = tantivy.Index(self._schema)
        self._stems = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple()).filter(
            tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build()
        writer = self._index.writer(heap_size=15_000_000, num_threads=1)
        for position, tool in enumerate(self.tools):
            writer.add_document(tantivy.Document(position=position, group_key=group_key(tool), **_document_fields(tool)))
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()
        self._searcher = self._index.searcher()
        # One segment written in order: a document's address is its position (checked).
        self._in_order = self._searcher.num_segments == 1 and all(
            int(self._searcher.doc(tantivy.DocAddress(0, doc))["position"][0]) == doc for doc in range(len(self.tools)))
        self._intents = [intent(tool) for tool in self.tools]
        self._name_stems = [self._naming(tool) for tool in self.tools]
        self._tantivy = tantivy
        self._lock = threading.Lock()

    def _naming(self, tool: Tool) -> frozenset[str]:
        """The stems of what ``tool``'s name names: its words without verbs and versions."""
        named = [w for w in words(f"{tool.name} {tool.original_name}")
                 if w not in _NAME_INTENTS and w not in _UNNAMING and not _VERSION.fullmatch(w)]
        return frozenset(self._stems.analyze(" ".join(named)))

    def _query(self, asked: list[str], modifiers: list[str], related: list[str]) -> Any:
        tantivy = self._tantivy
        fields = list(FIELD_WEIGHTS)
        parts = [(asked, 1.0), (modifiers, MODIFIER_WEIGHT), (related, SYNONYM_WEIGHT)]
        clauses = [
            (tantivy.Occur.Should, tantivy.Query.boost_query(
                self._index.parse_query(" ".join(part), fields, field_boosts=FIELD_WEIGHTS), weight))
            for part, weight in parts if part
        ]
        starts = prefixes(" ".join(asked + modifiers)).split()
        clauses.extend(
            (tantivy.Occur.Should, tantivy.Query.boost_query(
                tantivy.Query.term_query(self._schema, "prefixes", start), PREFIX_WEIGHT))
            for start in starts
        )
        return clauses[0][1] if len(clauses) == 1 else tantivy.Query.boolean_query(clauses)

    def search(self, text: str, limit: int, offset: int = 0, group: str | None = None) -> tuple[list[Tool], int]:
        """The tools that match ``text`` (in ``group`` only, when given), best first,
        ``limit`` of them from ``offset``, and how many match in all."""
        asked, modifiers = task_words(text)
        if not asked:
            return [], 0
        related = set(VERBS.get(asked[0], "").split())
        related.update(s for word in words(text) for s in NOUNS.get(word, "").split())
        related_words = sorted(related - set(asked) - set(modifiers))
        query = self._query(asked, modifiers, related_words)
        tantivy = self._tantivy
        if group is not None:
            only = tantivy.Query.term_query(self._schema, "group_key", group.lower())
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, only)])
        # tantivy reserves room for every hit asked for: never ask for more than there are tools.
        wanted = max(1, min(len(self.tools), max(CANDIDATES, offset + limit)))
        with self._lock:
            result = self._searcher.search(query, wanted, count=True)
            hits = [(score, self._position(address)) for score, address in result.hits]
        total = getattr(result, "count", None)  # present at run time, missing from the stub
        intents = task_intents(asked)
        covers = _coverage(frozenset(self._stems.analyze(" ".join(asked + modifiers + related_words))))
        ranked = sorted(hits, key=lambda hit: -self._rank(hit[0], hit[1], intents, covers))
        return [self.tools[position] for _, position in ranked[offset : offset + limit]], int(total or 0)

    def _rank(self, score: float, position: int, intents: list[str], covers: Callable[[str], bool]) -> float:
        does = self._intents[position]
        if does and does in intents:
            score *= 1 + INTENT_WEIGHT / (1 + intents.index(does))
        named = self._name_stems[position]
        if named:
            missing = sum(1 for stem in named if not covers(stem))
            score *= 1 - NAME_WEIGHT * missing / len(named)
        return score

    def _position(self, address: Any) -> int:
        if self._in_order:
            return int(address.doc)
        return int(self._searcher.doc(address)["position"][0])


__all__ = ["ACTIONS", "FIELD_WEIGHTS", "NOUNS", "VERBS", "ToolIndex", "group_key", "plain_text", "summary", "words"]
