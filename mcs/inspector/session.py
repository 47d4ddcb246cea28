"""Everything the inspector page shows, as JSON-ready data; no web framework here.

An :class:`Inspection` wraps one driver built on :class:`~mcs.ToolDriver`. It reads the
driver through the core's public API only: descriptions and system prompts per model
template (:mod:`mcs.prompts`), native exports (:mod:`mcs.native`), the discovery search
(:func:`mcs.discovery.search`), the parser (:func:`mcs.parse_tool_calls`) and the
pipeline (``call_tool`` / ``process_llm_response``, whose policy decisions and hooks are
recorded per call by :class:`~mcs.inspector.recorder.CallRecorder`).

Calls that may write (a tool not marked ``readOnlyHint`` nor ``destructiveHint: false``,
the MCP defaults) run only with a confirmation of exactly what runs: the first request is
refused with a preview of it and that preview's confirmation (a keyed hash only this
inspection computes, of the preview and of the tools it resolves to); the request sent
again with that confirmation runs, once, and any other content (a changed argument,
another line, another reply, a name that now resolves to another tool) needs a
confirmation of its own. A confirmation is used up by the run it allowed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from mcs import discovery, native, prompts
from mcs.context import AgentContext
from mcs.driver import ToolDriver
from mcs.errors import ConfigurationError, ToolCallError
from mcs.inspector import interfaces as interface_views
from mcs.inspector import tokens
from mcs.inspector.recorder import CallRecorder
from mcs.inspector.replies import as_reply, classified_calls, damaged_calls
from mcs.tools import Tool, ToolCall
from mcs.toolsearch import summary

#: The provider formats shown for each tool (``mcs.native`` formats).
NATIVE_FORMATS: tuple[native.NativeFormat, ...] = ("openai", "anthropic", "gemini", "mcp")
#: Model names offered in the page's model selector (any other name can be typed).
EXAMPLE_MODELS = (
    "gpt-4o", "gpt-4.1-mini", "o3-mini", "claude-sonnet-4", "claude-3-5-haiku", "gemini-2.0-flash",
    "gemma-3-27b-it", "qwen2.5-72b-instruct", "hermes-3-llama-3.1-8b", "llama-3.1-70b-instruct",
    "llama-4-scout", "mistral-large-latest",
)
#: Results and texts longer than this are cut for the page (with a marker saying so).
MAX_SHOWN_CHARS = 200_000
AGENT_ID = "mcs-inspect"
#: Confirmations shown and not used yet that an inspection keeps (the oldest is dropped first).
MAX_OPEN_CONFIRMATIONS = 256
#: How many tools ``search_tools`` returns a model by default (its first page).
SEARCH_PAGE = 10
_SUMMARY_CHARS = 120


class ConfirmationRequired(Exception):
    """The call may write and the person has not confirmed this very content; nothing ran.

    ``preview`` is what will run, to show the person; ``confirmation`` confirms that preview
    and nothing else (send it back with the same content to run it).
    """

    def __init__(self, tools: list[str], preview: Any = None, confirmation: str = "") -> None:
        super().__init__(f"confirm before running {', '.join(tools)}: it may change data")
        self.tools = tools
        self.preview = preview
        self.confirmation = confirmation


class UnknownTool(LookupError):
    """The page asked for a tool the driver does not have."""


def needs_confirmation(tool: Tool) -> bool:
    """True for a tool that may write: neither ``readOnlyHint`` nor ``destructiveHint: false``.

    These are the MCP annotation defaults (a tool is assumed destructive unless it says
    otherwise); discovery's own meta-tools only read, and ``call_tool`` is judged by the
    tool it names (see :meth:`Inspection.call`).
    """
    if discovery.is_meta_tool(tool):
        return False
    hints = tool.annotations
    return not (hints.get("readOnlyHint") is True or hints.get("destructiveHint") is False)


def _shown(value: Any) -> Any:
    """``value`` as JSON the page can show; a very long one becomes a cut text with a marker."""
    from mcs.cli import to_jsonable

    data = to_jsonable(value)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if len(text) <= MAX_SHOWN_CHARS:
        return data
    return {"truncated": f"{len(text):,} characters, the first {MAX_SHOWN_CHARS:,} shown",
            "text": text[:MAX_SHOWN_CHARS]}


def _group(tool: Tool) -> str:
    return "discovery meta-tools" if discovery.is_meta_tool(tool) else discovery.group_of(tool)


class Inspection:
    """One driver as the page sees it. Thread-safe: calls run one at a time."""

    def __init__(self, driver: Any) -> None:
        if not isinstance(driver, ToolDriver):
            raise ConfigurationError(
                f"mcs inspect needs a driver built on mcs.ToolDriver; {type(driver).__name__} "
                "only speaks the bare MCS contract"
            )
        self.driver = driver
        self.recorder = CallRecorder()
        self._attach(driver)
        self._tools = driver.list_tools()
        self._lock = threading.Lock()
        self._interfaces: dict[str, Any] | None = None
        self._confirmation_key = secrets.token_bytes(32)
        self._open_confirmations: dict[str, None] = {}  # nonces shown and not used yet, oldest first
        self._confirmations_lock = threading.Lock()

    def _attach(self, driver: ToolDriver) -> None:
        members: dict[str, Any] = getattr(driver, "members", {})
        # A toolbox with bare-contract members and no controls of its own chains replies to
        # them; the recorder's hooks would count as controls and make it refuse to (see
        # mcs.toolbox). Its own stages go unrecorded there, so it runs as it does outside.
        chains = any(not isinstance(member, ToolDriver) for member in members.values())
        if not (chains and driver.controls.is_empty()):
            self.recorder.attach(driver.controls, driver.meta.name)
        for key, member in members.items():
            if isinstance(member, ToolDriver):
                self.recorder.attach(member.controls, f"{driver.meta.name}/{key}")

    @property
    def templates(self) -> prompts.PromptRegistry:
        return self.driver.prompt_templates or prompts.default_registry()

    def tool(self, name: str) -> Tool:
        tool = self.driver.get_tool(name)
        if tool is None:
            raise UnknownTool(name)
        return tool

    # ----------------------------------------------------------------- reading

    def overview(self) -> dict[str, Any]:
        """The driver, its mode, the model templates, and whether token counts work."""
        return {
            "driver": self.driver.meta.model_dump(mode="json"),
            "tools": sum(not discovery.is_meta_tool(t) for t in self._tools),
            "mode": self.mode(),
            "custom_description": self.driver.custom_tool_description is not None,
            "models": list(EXAMPLE_MODELS),
            "templates": [
                {"name": t.name, "globs": list(t.globs), "call_format": t.call_format,
                 "description_style": t.description_style, "description": t.description}
                for t in self.templates
            ],
            "tokens": tokens.status(),
            "unknown_tools": self.driver.on_unknown_tool,
        }

    def tool_rows(self) -> list[dict[str, Any]]:
        """Every tool, in the driver's order: name, group, one-line summary (plain text, as
        ``search_tools`` gives it a model), write flag."""
        return [
            {"name": t.name, "group": _group(t), "summary": summary(t, _SUMMARY_CHARS), "writes": needs_confirmation(t)}
            for t in self._tools
        ]

    def search(self, query: str, group: str | None = None) -> dict[str, Any]:
        """The discovery search (what ``search_tools`` answers a model), every match, best first."""
        # The index the driver's own search_tools answers from (built once per tool list).
        catalog = discovery._entries_for(self.driver)
        # The first page is ranked exactly as search_tools ranks it for a model (its default
        # limit); the other matches follow in the ranking of the whole list.
        first = discovery.search((), query, limit=SEARCH_PAGE, group=group or None, entries=catalog)
        names = [row["name"] for row in first["tools"]]
        if first["total"] > len(names):
            every = discovery.search((), query, limit=first["total"], group=group or None, entries=catalog)
            names += [row["name"] for row in every["tools"] if row["name"] not in names]
        return {"total": first["total"], "names": names}

    def tool_detail(self, name: str, model: str | None) -> dict[str, Any]:
        """One tool as each reader sees it: the model (rendered for ``model``), each API, MCP."""
        tool = self.tool(name)
        rendered = prompts.render_function_description([tool], model_name=model, registry=self.templates)
        detail: dict[str, Any] = {
            "name": tool.name,
            "title": tool.title,
            "description": tool.description,
            "group": _group(tool),
            "original_name": tool.original_name,
            "annotations": dict(tool.annotations),
            "input_schema": tool.input_schema,
            "output_schema": tool.output_schema,
            "writes": needs_confirmation(tool),
            "template": self.templates.select(model).name,
            "rendered": rendered,
            "rendered_tokens": tokens.count_tokens(rendered),
            "native": {fmt: native.export_tool(tool, fmt) for fmt in NATIVE_FORMATS},
        }
        if self.mode() == "discovery" and not discovery.is_meta_tool(tool):
            detail["describe_tool"] = discovery.describe(tool)
        for key in ("interface", "method", "server"):
            if key in tool.meta:
                detail[key] = tool.meta[key]
        return detail

    def mode(self) -> str:
        """``"discovery"`` when the driver describes its tools through meta-tools, else ``"inline"``."""
        return "discovery" if any(discovery.is_meta_tool(t) for t in self._tools) else "inline"

    def prompt(self, model: str | None) -> dict[str, Any]:
        """The full system prompt for ``model``, the template chosen, and its size."""
        template = self.templates.select(model)
        text = self.driver.get_driver_system_message(model)
        return {
            "model": model or "",
            "template": template.name,
            "call_format": template.call_format,
            "description_style": template.description_style,
            "system_prompt": text,
            "characters": len(text),
            "tokens": tokens.count_tokens(text),
        }

    # ----------------------------------------------------------------- calling

    def _context(self) -> AgentContext:
        return AgentContext(agent_id=AGENT_ID, request_id=uuid.uuid4().hex)

    def _confirmation_of(self, nonce: str, preview: Any, resolved: Sequence[Tool]) -> str:
        """The confirmation of ``preview`` with the tools it ``resolved`` to (each as the
        driver defines it now): ``nonce`` and a hash of both, keyed by this inspection's
        secret, so only a preview the server showed has one."""
        bound = {"nonce": nonce, "preview": preview, "tools": [_definition(tool) for tool in resolved]}
        data = json.dumps(bound, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
        return nonce + "." + hmac.new(self._confirmation_key, data.encode("utf-8"), hashlib.sha256).hexdigest()

    def _confirm(self, tools: list[str], preview: Any, confirmation: str | None, resolved: Sequence[Tool]) -> None:
        """Return when ``confirmation`` confirms exactly ``preview``, resolved to the same
        tools, and was not used yet; it is used up here.

        Raises:
            ConfirmationRequired: it does not (or there is none, or it was used), with the
                preview and a new confirmation of it.
        """
        if confirmation is not None:
            nonce = confirmation.partition(".")[0]
            expected = self._confirmation_of(nonce, preview, resolved)
            with self._confirmations_lock:
                if nonce in self._open_confirmations and hmac.compare_digest(
                    confirmation.encode("utf-8"), expected.encode("utf-8")
                ):
                    del self._open_confirmations[nonce]
                    return
        nonce = secrets.token_urlsafe(16)
        with self._confirmations_lock:
            self._open_confirmations[nonce] = None
            while len(self._open_confirmations) > MAX_OPEN_CONFIRMATIONS:
                del self._open_confirmations[next(iter(self._open_confirmations))]
        raise ConfirmationRequired(tools, preview, self._confirmation_of(nonce, preview, resolved))

    def call(self, name: str, arguments: Mapping[str, Any], *, confirmation: str | None = None) -> dict[str, Any]:
        """Run one tool through the whole pipeline; the result or the error the model would
        read, the duration, and the policy and hook events of the call.

        A tool that may write runs only when ``confirmation`` confirms this tool with these
        arguments (see :class:`ConfirmationRequired`).

        Raises:
            UnknownTool: no tool has that name (nothing ran).
            ConfirmationRequired: the tool may write and this call is not confirmed (nothing ran).
        """
        outcome: dict[str, Any] = self._run_calls([(name, arguments)], confirmation, single=True)[0]
        return outcome

    def calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]], *,
              confirmation: str | None = None) -> dict[str, Any]:
        """Run ``calls`` (tool name, arguments) in order, each as :meth:`call` runs one,
        stopping after the first that fails: ``{"outcomes": [...]}``. When any may write,
        they are confirmed together: ``confirmation`` must confirm this very list
        (previewed as ``{"calls": [{"tool", "arguments"}...]}``).

        Raises:
            UnknownTool: a call names no tool (nothing ran).
            ConfirmationRequired: a call may write and the list is not confirmed (nothing ran).
        """
        return {"outcomes": self._run_calls(calls, confirmation, single=False)}

    def _run_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]], confirmation: str | None, *,
                   single: bool) -> list[dict[str, Any]]:
        """Resolve every call, confirm the whole list when one may write (judged now, on the
        driver's tools), then run them in order until one fails."""
        resolved = [(self.tool(name), arguments) for name, arguments in calls]
        writes: dict[str, None] = {}  # the tools that may write, in order, once each
        shown: list[dict[str, Any]] = []
        runs_all: list[Tool] = []
        for tool, arguments in resolved:
            named = self._named_by_call_tool(tool, arguments)
            runs = named or tool
            runs_all.append(runs)
            if needs_confirmation(runs):
                writes[runs.name] = None
            entry: dict[str, Any] = {"tool": tool.name, "arguments": dict(arguments)}
            if named is not None:  # the tool call_tool's name resolves to, not only the name
                entry["runs"] = _identity(named)
            shown.append(entry)
        if writes:
            self._confirm(list(writes), shown[0] if single else {"calls": shown}, confirmation, runs_all)
        outcomes: list[dict[str, Any]] = []
        for tool, arguments in resolved:
            outcomes.append(self._run_call(tool, arguments))
            if not outcomes[-1]["ok"]:
                break
        return outcomes

    def _run_call(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        context = self._context()
        with self._lock:
            started = time.perf_counter()
            try:
                result = self.driver.call_tool(tool.name, dict(arguments), context=context)
            except ToolCallError as error:
                outcome: dict[str, Any] = {"ok": False, **error.to_dict()}
            else:
                outcome = {"ok": True, "result": _shown(result)}
            elapsed = (time.perf_counter() - started) * 1000
        outcome.update(tool=tool.name, duration_ms=round(elapsed, 2),
                       events=self.recorder.take(context.request_id, started))
        return outcome

    def _named_by_call_tool(self, tool: Tool, arguments: Mapping[str, Any]) -> Tool | None:
        """For discovery's ``call_tool``, the tool it names (it runs as that tool's own call,
        so a write asks first like one); None for any other tool or a name that is no tool."""
        if not discovery.is_call_tool(tool):
            return None
        try:
            name, _ = discovery.unwrap_call(tool, arguments)
        except ToolCallError:
            return None  # the pipeline answers the malformed call
        return self.driver.get_tool(name)

    def analyse(self, text: str) -> dict[str, Any]:
        """What the driver would do with a pasted reply, without running anything.

        Each call gets its kind (see :mod:`mcs.inspector.replies`) and a verdict: ``runs``,
        ``refused`` (with the error code and the message the model would read) or
        ``passed through`` (not this driver's: the MCS chaining rule returns the reply).
        """
        reply = as_reply(text)
        rows: list[dict[str, Any]] = []
        for call, kind in classified_calls(self.driver, reply):
            row: dict[str, Any] = {"tool": call.name, "arguments": call.arguments, "id": call.id, "kind": kind}
            row.update(self._verdict(call))
            rows.append(row)
        claimed = [r for r in rows if r["verdict"] != "passed through"]
        refused = [r for r in claimed if r["verdict"] == "refused"]
        limit = self.driver.max_calls_per_response
        too_many = len(claimed) > limit
        damaged = damaged_calls(reply) if not claimed else []
        # A reply no tool here claims goes on to the chained bare-contract members, whose
        # calls cannot be read ahead: running it asks first, naming them.
        chained = [] if claimed else self._chained_members()
        note = _analysis_note(rows, claimed, refused)
        if too_many:
            note = (f"The reply holds {len(claimed)} calls for this driver; at most {limit} run from one "
                    "reply (max_calls_per_response), so none runs and the model is asked to make fewer.")
        elif damaged:
            note = ("The reply tried to call but no call can be read, so nothing runs; "
                    "the LLM loop tells the model what went wrong.")
        elif chained:
            note = (f"No call for this driver's own tools: the reply goes on to {', '.join(chained)}, "
                    "which only speak the MCS contract, so what they run cannot be shown ahead; "
                    "running it asks first.")
        return {
            "input": "json" if not isinstance(reply, str) else "text",
            "calls": rows,
            "damaged": damaged,
            "runs": bool(claimed) and not too_many
            and not any(r["stage"] in ("resolve", "validate") for r in refused),
            "needs_confirmation": sorted({r["tool"] for r in claimed if r.get("writes")}) + chained,
            "note": note,
        }

    def _chained_members(self) -> list[str]:
        """The members a toolbox hands a reply on to when no tool of its own claims it: they
        speak only the MCS contract, so their tools and annotations are unknown."""
        members = getattr(self.driver, "members", {})
        return [str(key) for key, member in members.items() if not isinstance(member, ToolDriver)]

    def _verdict(self, call: ToolCall) -> dict[str, Any]:
        if self.driver.get_tool(call.name) is None and self.driver.on_unknown_tool == "passthrough":
            return {"verdict": "passed through", "stage": "resolve",
                    "message": "no tool of this driver has that name; the reply is returned unchanged"}
        try:
            invocation = self.driver.prepare(call, self._context())
        except ToolCallError as error:
            stage = "resolve" if error.code.value == "TOOL_NOT_FOUND" else "validate"
            return {"verdict": "refused", "stage": stage, **error.to_dict()}
        out: dict[str, Any] = {"tool": invocation.tool.name, "arguments": invocation.arguments,
                               "writes": needs_confirmation(invocation.tool)}
        try:
            self._check_policies(invocation.tool, invocation.arguments, invocation.secrets())
        except ToolCallError as error:
            return {**out, "verdict": "refused", "stage": "policy", **error.to_dict()}
        return {**out, "verdict": "runs", "stage": "ready"}

    def _check_policies(self, tool: Tool, arguments: Mapping[str, Any], secrets: Sequence[str] = ()) -> None:
        """The policies that would judge this call (the toolbox's, then its member's), as a
        dry run; their recorded decisions are dropped."""
        context = self._context()
        started = time.perf_counter()
        try:
            self.driver.controls.check_policies(tool.name, arguments, context, secrets)
            member = getattr(self.driver, "members", {}).get(tool.meta.get("toolbox_member"))
            if isinstance(member, ToolDriver):
                member.controls.check_policies(str(tool.meta.get("member_tool")), arguments, context, secrets)
        finally:
            self.recorder.take(context.request_id, started)

    def run_reply(self, text: str, *, confirmation: str | None = None) -> dict[str, Any]:
        """Run a pasted reply exactly as ``process_llm_response`` would.

        When a call in it may write (or it goes on to bare-contract members), it runs only
        when ``confirmation`` confirms this very text and the calls its analysis finds.

        Raises:
            ConfirmationRequired: it needs a confirmation and this one does not fit (nothing ran).
        """
        analysis = self.analyse(text)
        if analysis["needs_confirmation"]:
            runs = [row for row in analysis["calls"] if row["verdict"] == "runs"]
            shown = {"reply": text, "may_write": analysis["needs_confirmation"],
                     "calls": [{"tool": row["tool"], "arguments": row["arguments"]} for row in runs]}
            resolved = [tool for row in runs if (tool := self.driver.get_tool(row["tool"])) is not None]
            self._confirm(analysis["needs_confirmation"], shown, confirmation, resolved)
        reply = as_reply(text)
        context = self._context()
        with self._lock:
            started = time.perf_counter()
            try:
                result = self.driver.process_llm_response(reply, context=context)
            except ToolCallError as error:
                outcome: dict[str, Any] = {"ok": False, **error.to_dict()}
            else:
                if result is reply:
                    outcome = {"ok": True, "passed_through": True}
                else:
                    outcome = {"ok": True, "result": _shown(result)}
            elapsed = (time.perf_counter() - started) * 1000
        outcome.update(duration_ms=round(elapsed, 2), events=self.recorder.take(context.request_id, started))
        return outcome

    # ----------------------------------------------------------------- interfaces

    def interfaces(self) -> dict[str, Any]:
        """The interfaces the driver implements, each with its UI kind and conformance
        problems (computed once; see :mod:`mcs.inspector.interfaces`)."""
        if self._interfaces is None:
            with self._lock:
                views, problems = interface_views.collect(self.driver)
            for view in views:
                for method in view["methods"]:
                    tool = self.driver.get_tool(method["tool"]) if method.get("tool") else None
                    method["available"] = tool is not None
                    method["writes"] = needs_confirmation(tool) if tool is not None else False
            self._interfaces = {"interfaces": views, "problems": problems}
        return self._interfaces


def _identity(tool: Tool) -> dict[str, Any]:
    """Which tool a name resolved to, for a preview: its name, and its server and the name
    there when the driver says (an MCP bridge's tools)."""
    identity: dict[str, Any] = {"tool": tool.name}
    for key in ("server", "original_name"):
        if key in tool.meta:
            identity[key] = tool.meta[key]
    return identity


def _definition(tool: Tool) -> dict[str, Any]:
    """What a confirmation binds of a tool that runs: who it is and how it is defined now."""
    return {**_identity(tool), "description": tool.description, "input_schema": tool.input_schema,
            "annotations": dict(tool.annotations)}


def _analysis_note(rows: list[dict[str, Any]], claimed: list[dict[str, Any]], refused: list[dict[str, Any]]) -> str:
    if not rows:
        return "No call found: the driver returns the reply unchanged (it is the model's answer)."
    if not claimed:
        return "No call for this driver: the reply is returned unchanged, for the next driver in a chain."
    if any(r["stage"] in ("resolve", "validate") for r in refused):
        return ("Every call is checked before the first one runs: one call is refused, so none runs, "
                "and the model reads the first error.")
    if refused:
        return "Calls run in order; the first one a policy refuses stops the rest with its error."
    return f"{len(claimed)} call(s) would run, in order."
