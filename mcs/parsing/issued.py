"""Which calls in a text the model *issued*, as opposed to mentioned (docs/parsing.md).

A call found by shape in free text is only a call when the model wrote it as its
answer. Three checks decide, each cheap and each documented:

1. **Unspoken text is blanked first** (:func:`mask_unspoken`): a tool's result echoed
   in its chat-template wrapper (from the first opener to the last closer of its kind, as
   a result can carry its own closer: see ``_TOOL_RESULT``) or a ReAct ``Observation:``,
   tags wrapping quoted or untrusted text (``<document>``, ``<example>``...; likewise to
   the last closer of their kind, see ``_QUOTING_OPENER``), markdown
   blockquotes (as CommonMark reads them, and inside code fences) and table rows, HTML and ``/* */`` comments, struck-out text, comment
   lines (``#``, ``//``) outside code fences, LaTeX math, inline code inside a sentence,
   double-quoted text inside a sentence, and a quotation that runs over several lines. A tool result the model quotes, a call it
   comments out or puts in a formula is not a call.
   Masking keeps every other character where it was, so positions stay valid.
2. **A call stands on its own** (:meth:`Layout.standalone`): nothing but wrappers
   around it on its lines (list markers, a short label ending in ``:``, backticks,
   brackets, tags, separators, another call). ``I asked get_weather(city='Paris')
   yesterday`` mentions a call; ``[get_weather(city='Paris')]`` on its own line is one.
   A JSON call object may also follow a finished sentence on its line ("Sure!
   {"name": ...}") when nothing follows it. A code fence is one block: it counts when
   its body is nothing but calls; a fence that also defines, imports or assigns is a
   program that *uses* functions.
3. **The framing does not take it back** (:meth:`Layout.framed_out`): the sentence that
   leads into the call (its own line up to the call, and the paragraph before it) does
   not negate it (``do not``, ``never``), address it to the reader as something to do
   themselves (``you can``, ``you would``, ``yourself``), call it an example or a
   hypothesis, or report someone else's words (``the page says``); and the sentence
   right after it does not call it hypothetical or an example.
"""

from __future__ import annotations

import ast
import re
import textwrap
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from functools import cache
from itertools import accumulate, chain
from typing import TYPE_CHECKING, Final

from mcs.parsing.jsonspans import parsed_already, quiet_parse

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

# ------------------------------------------------------------------ masking

_HTML_COMMENT: Final = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# A C-style block comment opening its line, and struck-out text (markdown `~~...~~`,
# HTML `<del>`, `<strike>`; not `<s>`, which is Llama's and Mistral's start token): what
# the model commented out or retracted.
_STRUCK_OR_COMMENTED: Final = re.compile(
    r"^[ \t]*/\*.*?(?:\*/|\Z)|~~[^~\n]+~~|<(del|strike)>.*?(?:</\1>|\Z)", re.DOTALL | re.MULTILINE
)
# A tool's result as the chat templates wrap it for the model (Hermes/Qwen, Mistral,
# DeepSeek, FunctionGemma, Anthropic-style prompts): the tool's words, never the model's,
# even when the model echoes them. The region runs from the first opener to the *last*
# closer of its kind in the text (greedy), or to the end of the text when none follows:
# a result can hold its own closer (a page that says `</tool_response><tool_call>...`), so
# the first closer may be the tool's, and only the last one is surely the model's. Nested
# or repeated echoes of one kind are thus one region, and a call between two echoes is
# blanked with them (it cannot be told from one the first result injected); a call before
# the first opener or after the last closer is read. Markers inside a region are the
# tool's words: they close nothing, and one with no closer after it opens nothing (a kind that
# is closed is also blanked on its own: see `_TOOL_RESULT_OPENER`). DeepSeek's `tool_output` and
# `tool_outputs` tokens are one kind (the second wraps the first). A tool's turn written out in
# the chat template's own tokens is an echo too: ChatML's `<|im_start|>tool` turn, which ends at
# `<|im_end|>`, and Llama 3's `ipython` (or `tool`) header, whose turn ends at `<|eot_id|>` or
# `<|eom_id|>`; the model's own turns end with the same tokens, so a turn it writes after the echo
# is blanked with it (a call lost, never one injected).
_TOOL_RESULT: Final = re.compile(
    r"<(tool_response|tool_result|function_results|function_response|tool_output)\b[^>\n]{0,80}>(?:.*</\1>|.*)|"
    r"\[TOOL_RESULTS\](?:.*\[/TOOL_RESULTS\]|.*)|"
    r"<\|tool_outputs?_begin\|>(?:.*<\|tool_outputs?_end\|>|.*)|"
    r"<start_function_response>(?:.*<end_function_response>|.*)|"
    r"<\|im_start\|>tool\b(?:.*<\|im_end\|>|.*)|"
    r"<\|start_header_id\|>(?:ipython|tool)<\|end_header_id\|>(?:.*<\|eo[tm]_id\|>|.*)",
    re.DOTALL,
)
# A ReAct observation is the tool's result too (a model may write one out). It runs to the end
# of the text: the observed page can hold a blank line and `Thought:`/`Action:` lines of its
# own, so no line after it can be told to be the model's. The protocol agrees: ReAct loops
# stop the model at `\nObservation` (LangChain's `create_react_agent` binds that stop
# sequence by default, CrewAI's stop words are the same) and hand the result back in the next
# prompt, so the model's next Thought/Action starts a new answer; an answer that holds an
# Observation went past the point where its turn ends. The Action before it is read.
_OBSERVATION: Final = re.compile(r"^[ \t]*Observation\s*\d*\s*:.*", re.MULTILINE | re.DOTALL)
# Tags that wrap quoted, example or untrusted text (HTML quotes, a folded `<details>` section,
# the XML tags prompts put documents and examples in): a call inside, once the tag closes, is
# data. As with
# `_TOOL_RESULT`, each kind runs from its first opener to the *last* closer of its kind: the
# quoted page can carry `</document>` and a call after it, so only the last closer is surely
# the model's. A closer is required (a tag named in prose opens nothing). Short inline tags
# (`<q>`, `<cite>`) follow the same rule: a page quoted inline injects as well, and none of
# the 53,280 BFCL v1 outputs holds a second closer of any of these kinds, so the rule costs
# no call there. Each kind's region is found on its own, on the text as it stands before
# tool results are blanked: a region of another kind (or an echoed result) that ends at a
# closer inside the page cannot swallow the opener of this one.
_QUOTING_OPENER: Final = re.compile(
    r"<(example|examples|blockquote|quote|q|cite|details|document|documents|search_results?|untrusted\w*|context|"
    r"source|webpage|web_page|page|email|article|snippet)\b[^>\n]{0,80}>"
)
_TOOL_RESULT_ANGLED: Final = ("<tool_", "<function_", "<start_function_response>")
_TOOL_RESULT_PIPED: Final = ("<|tool_output", "<|im_start|>tool", "<|start_header_id|>")  # looked for after "<|"
# The openers of `_TOOL_RESULT` on their own. Scanned left to right, a region of one kind that
# ends at a closer inside a page can swallow the opener of the next kind (`<tool_result>` echoed
# first, then a `<tool_response>` whose page says `</tool_result>`), so each kind that is closed
# also blanks from its first opener to its last closer, found on its own.
_TOOL_RESULT_OPENER: Final = re.compile(
    r"<(tool_response|tool_result|function_results|function_response|tool_output)\b[^>\n]{0,80}>|"
    r"\[TOOL_RESULTS\]|<\|tool_outputs?_begin\|>|<start_function_response>|"
    r"<\|im_start\|>tool\b|<\|start_header_id\|>(?:ipython|tool)<\|end_header_id\|>"
)
_TOOL_RESULT_CLOSERS: Final = {
    "[TOOL_RESULTS]": ("[/TOOL_RESULTS]",),
    "<|tool_output": ("<|tool_output_end|>", "<|tool_outputs_end|>"),
    "<start_function_response>": ("<end_function_response>",),
    "<|im_start|>tool": ("<|im_end|>",),
    "<|start_header_id|>": ("<|eot_id|>", "<|eom_id|>"),
}
_MATH: Final = re.compile(r"\\\[(.*?)\\\]|\\\((.*?)\\\)|\$\$(.*?)\$\$", re.DOTALL)
# A fence line (group 1), a quoted line (`> ...`, but not functionary's `>>>name`) or a
# comment line (`#`, `//`).
_LINE_KIND: Final = re.compile(r"[ \t]*(```|~~~)|[ \t]*>(?!>>[ \t]*[A-Za-z_])|[ \t]*(?:#|//)")
# A line the loop in `mask_unspoken` looks at: led by a newline (searched for several times faster
# than a pattern led by `^`), the first line apart.
_LINES_TO_LOOK_AT: Final = re.compile(r"\n[ \t]*(?:>|#|//|```|~~~|\|)")
_FIRST_LINE_TO_LOOK_AT: Final = re.compile(r"[ \t]*(?:>|#|//|```|~~~|\|)")
# The `>>>` lines that open no markdown blockquote (functionary's `>>>name`, as `_LINE_KIND`).
_NOT_A_QUOTE: Final = re.compile(r"[ \t]*>>>[ \t]*[A-Za-z_]")
# A quoted line with a line of text right after it (a lazy continuation, when the quote is a
# paragraph); a quoted line and every line after it up to a blank line or a fence.
# (The first line apart, as `_LINES_TO_LOOK_AT`.)
_LAZY_AFTER_QUOTE: Final = re.compile(r"\n[ \t]*>(?!>>[ \t]*[A-Za-z_])[^\n]*\n[ \t]*[^\s>]")
_LAZY_AFTER_FIRST_QUOTE: Final = re.compile(r"[ \t]*>(?!>>[ \t]*[A-Za-z_])[^\n]*\n[ \t]*[^\s>]")
_QUOTE_TO_BLANK_LINE: Final = re.compile(
    r"^[ \t]*>(?!>>[ \t]*[A-Za-z_])[^\n]*(?:\n(?![ \t]*(?:```|~~~))[ \t]*\S[^\n]*)*", re.MULTILINE
)
_COMMONMARK_MAX: Final = 100_000  # characters of an answer CommonMark reads (about 0.2 s at most)
_INLINE_CODE: Final = re.compile(r"`[^`\n]+`")
# A quotation left open on its line (see `_mask_open_quotes`): a double quote before a letter
# (after a blank, a colon or at a line's start, checked apart), or a typographic opening quote.
# (One literal first, and no backtracking: most texts hold many JSON strings, each closed on its line.)
_OPEN_QUOTE: Final = re.compile('"[A-Za-z][^"\n]*+(?:\n|\\Z)')
_OPEN_TYPOGRAPHIC: Final = re.compile("\u201c[^\u201d\n]*+(?:\n|\\Z)")
_BEFORE_A_QUOTE: Final = frozenset(" \t\n:")
_QUOTE_END: Final = re.compile(r'"(?=[\s.!?;]|\Z)')
# A quotation in a sentence that holds markup: `the page says "<tool_call>...</tool_call>"`.
_PROSE_QUOTE: Final = re.compile(r"(?<![=(:,\[{])\"[^\"\n]*<[^\"\n]*\"|\u201c[^\u201d\n]*<[^\u201d\n]*\u201d")
_CALLISH: Final = re.compile(r"[A-Za-z_][\w.]*\s*\(")


def _blank(text: str) -> str:
    if "\n" not in text:
        return " " * len(text)
    return "\n".join(" " * len(line) for line in text.split("\n"))


def _is_prose_line(line: str) -> bool:
    """A sentence rather than data or code: it starts with a letter and has two words."""
    stripped = line.lstrip(" \t-*+\u2022>")
    return bool(stripped[:1].isalpha()) and " " in stripped.strip()


def mask_unspoken(text: str) -> str:
    """``text`` with quoted, commented and formula regions blanked (same length)."""
    if "<" in text and "<!--" in text:
        text = _HTML_COMMENT.sub(lambda m: _blank(m.group(0)), text)
    if "/*" in text or "~~" in text or ("<" in text and ("<del>" in text or "<strike>" in text)):
        text = _STRUCK_OR_COMMENTED.sub(lambda m: _blank(m.group(0)), text)
    regions = _closed_regions(text, _QUOTING_OPENER, _quoting_closers) if "</" in text else []
    if ("<" in text and (any(marker in text for marker in _TOOL_RESULT_ANGLED) or (
            "<|" in text and any(marker in text for marker in _TOOL_RESULT_PIPED)))) or "[TOOL_RESULTS]" in text:
        regions += _closed_regions(text, _TOOL_RESULT_OPENER, _tool_result_closers)
        text = _TOOL_RESULT.sub(lambda m: _blank(m.group(0)), text)
    if regions:
        text = _blank_regions(text, regions)
    if "Observation" in text:
        text = _OBSERVATION.sub(lambda m: _blank(m.group(0)), text)
    # One character first (found by memchr), then the two-character markers it must begin
    if ("\\" in text and ("\\[" in text or "\\(" in text)) or ("$" in text and "$$" in text):
        text = _MATH.sub(_mask_math, text)
    if "\n" in text and (("\u201c" in text) or ('"' in text and _OPEN_QUOTE.search(text))):
        text = _mask_open_quotes(text)
    # (the line loop below blanks the `>` lines themselves)
    if ">" in text and (_LAZY_AFTER_QUOTE.search(text) or _LAZY_AFTER_FIRST_QUOTE.match(text)):
        text = _mask_blockquotes(text)
    quoted_markup = "<" in text and ('"' in text or "\u201c" in text)
    if "`" not in text and not quoted_markup and not _LINES_TO_LOOK_AT.search(text) \
            and not _FIRST_LINE_TO_LOOK_AT.match(text):
        return text
    lines = text.split("\n")
    original = list(lines)
    in_fence = False
    for number, line in enumerate(lines):
        lead = line.lstrip(" \t")[:1]
        if lead == "|" and not in_fence and line.count("|") >= 2:  # a markdown table row: data
            lines[number] = " " * len(line)
            continue
        kind = _LINE_KIND.match(line) if lead and lead in "`~>#/" else None
        if kind is not None:
            if kind.group(1):  # a fence line; an inline ```f(x)``` neither opens nor closes a block
                if line.count("```") < 2:
                    in_fence = not in_fence
                continue
            # A quoted line, even in a fence: a fence's body read on its own has its quotes blanked
            # too, and a quoted ``` in it closes nothing. A commented line, outside fences.
            if not in_fence or lead == ">":
                lines[number] = " " * len(line)
            continue
        if in_fence:
            continue
        if "`" in line:
            line = lines[number] = _mask_inline_code(line)
        if "<" in line and ('"' in line or "\u201c" in line) and _is_prose_line(line):
            lines[number] = _PROSE_QUOTE.sub(lambda m: _blank(m.group(0)), line)
    return text if lines == original else "\n".join(lines)


def _mask_open_quotes(text: str) -> str:
    """``text`` (same length) with a quotation that runs over several lines blanked: from a
    double quote that opens prose and is left open on its line (``The page says: "Welcome.``)
    to the *last* double quote in the text that can end one (before a blank, sentence
    punctuation or the end), as the quoted page can hold quotes of its own. Nothing is
    blanked when no such closer follows. The same for typographic quotes."""
    last_end: int | None = None  # where the last closing double quote ends (-1: none), found once
    openers = chain(_OPEN_QUOTE.finditer(text) if '"' in text else (),
                    _OPEN_TYPOGRAPHIC.finditer(text) if "\u201c" in text else ())
    for opener in openers:
        start = opener.start()
        if text[start] == '"':
            if start > 0 and text[start - 1] not in _BEFORE_A_QUOTE:
                continue
            if last_end is None:
                last_end = max((found.end() for found in _QUOTE_END.finditer(text)), default=-1)
            end = last_end
        else:
            end = text.rfind("\u201d") + 1
        if end > opener.end():  # a closer on a later line
            return text[:start] + _blank(text[start:end]) + text[end:]
    return text


@cache
def _commonmark() -> MarkdownIt:
    """A CommonMark reader of block structure only (inline markup is never needed here);
    imported on first use, as few answers hold a quote and the import is slow."""
    from markdown_it import MarkdownIt

    reader = MarkdownIt("commonmark")
    reader.core.ruler.disable(["inline", "text_join"])
    return reader


def _mask_blockquotes(text: str) -> str:
    """``text`` (same length) with the lines of every blockquote blanked, as CommonMark reads
    them: a line right after a quoted paragraph line, with no blank line between, continues
    the quote ("lazy continuation"). A functionary ``>>>name`` or a ``>>> f(x)`` session
    line opens no quote (see :data:`_LINE_KIND`). A text longer than :data:`_COMMONMARK_MAX`
    has every line after a ``>`` line up to the next blank line or fence blanked instead,
    which bounds the time (a list or heading right after a quote is blanked too: a call
    lost, never one run)."""
    if len(text) > _COMMONMARK_MAX:
        return _QUOTE_TO_BLANK_LINE.sub(lambda m: _blank(m.group(0)), text)
    lines = text.split("\n")
    source = text.replace("\r", " ") if "\r" in text else text  # CommonMark ends a line at a lone CR too
    for token in _commonmark().parse(source):
        if token.type == "blockquote_open" and token.map is not None:
            first, end = token.map[0], min(token.map[1], len(lines))
            if not _NOT_A_QUOTE.match(lines[first]):
                for number in range(first, end):
                    lines[number] = " " * len(lines[number])
    return "\n".join(lines)


def _quoting_closers(opener: re.Match[str]) -> tuple[str, tuple[str, ...]]:
    """The kind of a quoting tag opener and its closer."""
    return opener.group(1), (f"</{opener.group(1)}>",)


def _tool_result_closers(opener: re.Match[str]) -> tuple[str, tuple[str, ...]]:
    """The kind of a tool result opener and its closers (DeepSeek's two tokens are one kind)."""
    if opener.group(1):
        return opener.group(1), (f"</{opener.group(1)}>",)
    kind = next((kind for kind in _TOOL_RESULT_CLOSERS if opener.group(0).startswith(kind)), "")
    return kind, _TOOL_RESULT_CLOSERS[kind]


def _closed_regions(
    text: str,
    openers: re.Pattern[str],
    kind_of: Callable[[re.Match[str]], tuple[str, tuple[str, ...]]],
) -> list[tuple[int, int]]:
    """(start, end) of each kind of opener in ``text``: its first opener to its last closer.

    A kind with no closer after its first opener has no region. Regions may overlap.
    """
    regions = []
    seen: set[str] = set()
    for opener in openers.finditer(text):
        kind, closers = kind_of(opener)
        if kind in seen:
            continue
        seen.add(kind)
        ends = [
            found + len(closer)
            for closer in closers
            if (found := text.rfind(closer, opener.end())) >= 0
        ]
        if ends:
            regions.append((opener.start(), max(ends)))
    return regions


def _blank_regions(text: str, regions: list[tuple[int, int]]) -> str:
    """``text`` with every (start, end) region blanked; regions may overlap."""
    pieces = []
    done = 0
    for start, end in sorted(regions):
        start = max(start, done)
        if end <= start:
            continue
        pieces += [text[done:start], _blank(text[start:end])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _mask_math(match: re.Match[str]) -> str:
    body = match.group(1)
    if body is not None and body[:1] not in " \t\n" and _CALLISH.match(body.lstrip("['\"")) and "\\" not in body.replace("\\_", ""):
        return f" [{body} ]"  # `\[f(x=1)\]`: markdown-escaped brackets around a call, not LaTeX
    return _blank(match.group(0))


def _mask_inline_code(line: str) -> str:
    """Inline code inside a sentence is a mention; a line that is only code is kept."""
    rest = _INLINE_CODE.sub(" ", line)
    if not _has_words(rest):
        return line
    return _INLINE_CODE.sub(lambda m: _blank(m.group(0)), line)


# ------------------------------------------------------------------ layout: fences, lines, framing

_REACH: Final = 2000  # how far around a call its paragraph is looked for
_LINE_WINDOW: Final = 4096  # how far back a line's start is looked for before every line is indexed
_LIST_MARKER: Final = re.compile(r"[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+")
# The marker alone, led by one character class so the search skips ahead; the blanks
# before it are added back by hand (see `_without_list_marker`).
_MARKER_ITSELF: Final = re.compile(r"[-*+\u2022\d](?:(?<=[-*+\u2022])|(?<=\d)\d{0,2}[.)])[ \t]+")
_LABEL: Final = re.compile(r"[^\n:`{}\[\]()\u0000]{1,80}?:(?=[ \t]|$)")
_TAG: Final = re.compile(r"<\|channel\|>[^<>\n]{0,80}<\|message\|>|<[^<>\n]{0,80}>|\[/?[A-Z_]{3,20}\]")


_FENCE: Final = re.compile(r"```|~~~")


# A word of prose: two letters or more, not part of an identifier (`get_weather`,
# `math.hypot(`), a tag (`<tool_call>`, `<|im_start|>`) or a wrapper (`return`, `print`).
_PROSE_WORD: Final = re.compile(
    r"(?<![\w.<|/\\-])(?!(?:return|await|print|json|python|tool_code)\b)[A-Za-z]{2,}(?![\w.(\-])"
)


def _has_words(text: str) -> bool:
    """Whether ``text`` holds prose words (code identifiers, tags and wrappers aside)."""
    return _PROSE_WORD.search(text) is not None


# The cues, by what they say about the call that follows (docs/parsing.md has the table).
_NEGATION: Final = (
    r"\b(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't|need not|not to|"
    r"avoid|instead of|rather than|refrain|won't|will not|not (?:call|run|execute|invoke|use)|"
    r"refuse[ds]?|refusing|declined?|declining)\b"
)
# Negation in the other languages models answer in (lower-cased): French, German, Spanish,
# Italian, Portuguese, Russian, Chinese, Japanese, Korean. Looked for only when the lead-in
# has a non-ASCII character or one of `_FOREIGN_CUES`.
# "Do not" + run, call, use, send, delete, do in Spanish, Italian and Portuguese, as whole words
# (a stem would take English: "no user input", "no fallback").
_FOREIGN_VERB: Final = (
    r"(?:ejecutes?|llames?|uses?|corras|env[ií]es|borres|elimines|hagas|lances|"
    r"eseguire|chiamare|usare|fare|inviare|lanciare|cancellare|eliminare|"
    r"execute|executes|chame|use|fa[çc]a|envie|rode|apague|exclua)\b"
)
_FOREIGN_NEGATION: Final = re.compile(
    r"\b(?:ne|n')\s*\w+[^.!?\n]{0,40}\b(?:pas|jamais|plus)\b|\bjamais\b|"
    r"\b(?:nicht|niemals|nie|keine?n?)\b|"
    r"\b(?:nunca|jamás|jamas|mai)\b|\b(?:no|non|não|nao) " + _FOREIGN_VERB + r"|"
    r"\b(?:не|никогда|нельзя)\b|"
    r"不要|不可|请勿|請勿|切勿|勿|禁止|不能|不得|不会|不會|别(?:执行|运行|调用|用)|ないで|しない|絶対に|하지 ?마|금지|않|"
    "[\u274c\u26d4\U0001f6ab\u2716]|"  # ❌ ⛔ 🚫 ✖ marking what not to do
    # asking leave: "Soll ich...?", "Dois-je...?", "¿Debo...?", "Devo...?", "要我...吗", "しましょうか"
    r"\b(?:soll ich|sollen wir|darf ich|dois-je|puis-je|voulez-vous que|veux-tu que|quieres que|vuoi che)\b|"
    r"\b(?:debo|puedo|devo|posso)\b[^.!?\n]*\?|\u00bf|要我|需要我|是否要|可以吗|吗\uff1f|しましょうか|よろしいですか|할까요"
)
# Words only the other languages use (not "no", "non": English has them too), so an English
# lead-in is not searched for them; a lead-in with a non-ASCII character always is.
_FOREIGN_CUES: Final = frozenset({
    "ne", "jamais", "nicht", "niemals", "nie", "kein", "keine", "keinen", "nunca", "jamas", "soll", "sollen",
    "darf", "dois", "puis", "voulez", "veux", "debo", "puedo", "quieres", "devo", "posso", "vuoi",
    "ejecutes", "llames", "corras", "borres", "elimines", "hagas", "lances", "eseguire", "chiamare", "usare",
    "fare", "inviare", "lanciare", "cancellare", "eliminare", "chame", "envie", "rode", "apague", "exclua",
})
# A question asking for leave, written the English way (the modal first): "Should I call
# this?", "May I run:", "Can we go ahead with:"; a label that lists options or things to
# do later ("Options:", "TODO:").
_ASKING: Final = (
    r"(?:^|[.!?:\n]\s*)(?:should|may|can|could|shall) (?:i|we)\b|"
    r"(?:^|[.!?\n]\s*)(?:options|choices|alternatives|todo|to-do)\s*:|"
    # a label that marks what follows as what not to do ("Bad:", "Wrong:", "Forbidden:")
    r"(?:^|\n)[ \t]*(?:bad|wrong|incorrect|invalid|forbidden|prohibited|not allowed|dangerous|unsafe|"
    r"skip|don't)\b[^\n:]{0,30}:[ \t]*$"
)
_QUOTING: Final = (
    r"\b(?:says|said|wrote|writes|quoted?|quotes|reads|told|contains|contained|"
    r"instructs|instructed|injected)\b|"
    # words of a text or of someone who is not the user: "the email asks me to run:"
    r"\b(?:page|document|email|e-mail|message|website|site|webpage|article|file|comment|issue|ticket|"
    r"attacker|text|content|result|output|response|tool|snippet) (?:asks|asked|tells|wants|wanted|"
    r"requests|requested|demands|urges|orders) (?:me|us|you|the assistant)\b"
)
_HYPOTHESIS: Final = (
    r"\b(?:hypothetical\w*|theoretical\w*|imagine|suppos\w+|assum(?:e|es|ing)|pretend\w*|"
    r"let's say|let us say|dummy|placeholder|fictional|fictitious|pseudo\w*|something like|"
    r"would you like|do you want me|shall i|if so|"
    r"is it (?:ok|okay|alright|fine)|please confirm|confirm (?:before|that|if|whether)|"
    r"(?:your|with|without|for|need|needs|awaiting|await|waiting for|require|requires) (?:your )?"
    r"(?:approval|permission|confirmation|go-ahead)|"
    r"(?:here are|you have|there are) (?:the |your |two |three |several |some |a few )?(?:options|choices|alternatives)\b|"
    r"which (?:one|of these|of them|option)|perhaps|possibly|maybe|next time|remember to|"
    r"(?:if|once|when|after) (?:the user|you)(?:'ve| have)? (?:confirms?|approves?|agrees?|says? so)|"
    r"if you(?:'d| would| still| really)? (?:want|wish|like|need|prefer|provide|have|insist)|"
    r"if\b[^.!?\n]{0,80}\b(?:had|were|existed|exist|is available|are available|were available|"
    r"was available|is provided|were provided)|"
    r"(?:would|will) need to be (?:created|defined|written|implemented|added))\b"
)
_UNAVAILABLE: Final = (
    r"\b(?:function|tool)s?\b(?! call)[^.!?\n]{0,30}?\b(?:is|are|was|were) not "
    r"(?:provided|available|given|defined|in (?:the|your))\b|"
    r"\bnot an? (?:provided|available|given) (?:function|tool)\b|"
    r"\bno (?:function )?call (?:can|could|will) be made\b|"
    r"\b(?:cannot|can't|can not|could not|couldn't|unable to) (?:make|run|execute) (?:the|this|that|a|any) (?:function )?call\b"
)
_UNUSABLE: Final = r"\b(?:function|tool)\b(?! call)[^.!?\n]{0,40}\b(?:cannot|can't|can not) be (?:used|called)\b"
_READER: Final = (
    r"\byou(?:'d|'ll| would| could| can| might| may| should| need| will| have to| must| want)\b"
    r"|\byourself\b|\byour own\b|\bin your\b"
)
# A tool's output the model reports, as the words that end the sentence introducing the
# call ("The tool returned:", "Here is the page content:"); a call read from a result.
_REPORTED: Final = (
    r"(?:\b(?:returned|responded|replied|came back(?: with)?)|"
    r"\b(?:tool|function|api|search|page|web|command|query|server|upstream)(?:'s)? "
    r"(?:output|result|response|content|text|reply|body)s?(?: (?:was|were|is|are|says|said|reads))?)"
    r"[ \t]*(?::[ \t]*(?:\n|$)|$)"
)
# A call the sentence introducing it reports as made before ("Previously I called:",
# "I already ran this yesterday:"); a retry ("It failed before, so again:") is not one.
_PAST: Final = (
    r"\b(?:previously|earlier|already|last time|yesterday|before)\b[^.!?\n]{0,60}"
    r"\b(?:called|ran|executed|made|sent|used|issued)\b[^.!?\n]{0,60}:?\s*$"
)
_EXAMPLE: Final = (
    r"\b(?:examples?|for instance|illustrat\w*|sample (?:call|request|code|usage)|"
    r"yourself|your own)\b|\be\.g\."
)
# Negation, quotation, hypothesis and "not available" reach back two sentences; words to
# the reader and "example" only the sentence that introduces the call ("You can call f.
# Here is the call:" is a call). A call written in a call syntax is not taken back by
# words to the reader.
# (All cues are matched against lower-cased text: much faster than IGNORECASE.)
_STRONG: Final = re.compile("|".join((_NEGATION, _QUOTING, _HYPOTHESIS, _UNAVAILABLE, _UNUSABLE, _ASKING)))
_INTRODUCING: Final = re.compile("|".join((_READER, _EXAMPLE, _REPORTED, _PAST)))
_INTRODUCING_EXPLICIT: Final = re.compile("|".join((_EXAMPLE, _REPORTED, _PAST)))
_TAKEN_BACK: Final = re.compile(
    r"\b(?:hypothetical(?:ly)?|theoretical(?:ly)?|for illustration(?: only)?|not (?:a real|an actual) call|"
    r"no (?:function )?call (?:can|could|will) be made|"
    r"(?:ignored?|ignoring|refuse[ds]?|refusing|declined?|declining) (?:it|this|that|them|to)|"
    r"(?:only|just|merely) an? example|"  # ("the above code is an example of how to use f" is how some models call)
    r"no (?:function |tool )?call is (?:needed|required|necessary)|"
    r"(?:page|document|email|e-mail|message|result|output|response|text) contains the (?:above|call)|"
    r"(?:will not|won't|do not|don't|did not|didn't|not) (?:follow|obey|run|execute|call|make|do) (?:it|this|that|them)|"
    r"(?:an?|the|prompt) injection|"
    r"(?:shall|should|may|can) (?:i|we) (?:proceed|go ahead|run|execute|call|do|make|send)|"
    r"(?:do|would) you (?:want|like) me to|is (?:this|that|it) (?:ok|okay|alright|fine)|"
    r"(?:please|can you|could you) confirm|which (?:one|option|of these|of them|do you|would you)|let me know which|"
    r"(?:cannot|can't|can not|could not|couldn't|unable to) (?:make|run|execute) (?:the|this|that|a|any) (?:function )?call)\b"
)
# "...is not provided in the given list": takes the call back only when it is about this call.
_NOT_PROVIDED: Final = re.compile(
    r"\bnot (?:provided|available|given|included|defined|listed|(?:in|among|one of)) "
    r"(?:in )?the (?:given|provided|available)(?: \w+)? (?:list|functions|tools|set)\b|"
    r"\bnot an? (?:provided|available|given) (?:function|tool)\b"
)
_THIS_CALL: Final = re.compile(r"\b(?:this|that|the above|such an?|the same) (?:function|call|tool)\b")

# (The indentation is taken whole, `*+`: no part of the line starts with a blank, so a line
# that is not code is refused once, not once per blank of its indentation.)
_CODE_LINE_BODY: Final = (
    r"[ \t]*+(?:def |class |import |from [\w.]+ import |return\b|raise\b|@[\w.]+|"
    r"(?:if|elif|for|while|with|try|except|else)\b[^\n]*:[ \t]*$|"
    r"[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]*[-+*/]?=(?!=))"
)
_CODE_LINE: Final = re.compile("^" + _CODE_LINE_BODY, re.MULTILINE)
# The same lines found from the newline before them: a literal first character lets the
# search skip ahead, where `^` is tried at every position. No part reads past a line's end.
_CODE_LINE_AFTER_NEWLINE: Final = re.compile("\n" + _CODE_LINE_BODY, re.MULTILINE)
# An argument the model left for someone to fill in: `<team_name>`, `<insert season here>`, `?`.
_PLACEHOLDER: Final = re.compile(
    r"<(?!(?:a|b|i|p|br|hr|em|li|ol|ul|tr|td|th|div|img|pre|code|span|strong|table|input|button|label)\b)"
    r"[A-Za-z][^<>/=\"\n]*[_ '][^<>/=\"\n]*>|^\s*\?+\s*$"
)


_TRAILING_COMMENT: Final = re.compile(r"(?:#|//)([^\n]*)")


def comment_takes_back(source: str) -> bool:
    """Whether a comment in ``source`` (calls read as code, where Python drops comments)
    negates the calls or calls them an example: ``[f(x=1)]  # do not run this``."""
    for comment in _TRAILING_COMMENT.findall(source):
        said = _plain(comment.lower())
        if not _CUE_WORDS.isdisjoint(_WORDS.findall(said)) and (
            _STRONG.search(said) or _INTRODUCING_EXPLICIT.search(said) or _TAKEN_BACK.search(said)
        ):
            return True
    return False


def has_placeholder(value: object, depth: int = 0) -> bool:
    """Whether an argument value (or one nested in it) is a placeholder to fill in."""
    if isinstance(value, str):
        return ("<" in value or "?" in value) and _PLACEHOLDER.search(value) is not None
    if depth < 3 and isinstance(value, dict):
        return any(has_placeholder(item, depth + 1) for item in value.values())
    if depth < 3 and isinstance(value, list):
        return any(has_placeholder(item, depth + 1) for item in value[:64])
    return False


# The first word of every cue above: a text without any of them cannot hold a cue, and
# a set lookup is much cheaper than the cue expressions.
_CUE_WORDS: Final = frozenset({
    "do", "don't", "dont", "never", "must", "mustn't", "should", "shouldn't", "need", "not", "avoid",
    "instead", "rather", "refrain", "won't", "will", "says", "said", "wrote", "writes", "quote", "quoted",
    "quotes", "reads", "told", "contains", "contained", "instructs", "instructed", "injected",
    "hypothetical", "hypothetically", "hypotheticals", "theoretical", "theoretically", "imagine",
    "suppose", "supposed", "supposing", "supposes", "assume", "assumes", "assuming", "pretend",
    "pretending", "pretends", "pretended", "let's", "let", "dummy", "placeholder", "fictional",
    "fictitious", "pseudo", "pseudocode", "something", "would", "shall", "if", "function", "functions",
    "tool", "tools", "no", "cannot", "can't", "can", "could", "couldn't", "unable", "you", "you'd",
    "you'll", "yourself", "your", "sample", "example", "examples", "e.g", "for", "illustration", "illustrate",
    "illustrates", "illustrative", "illustrating", "illustrated", "illustrations",
    # refusals, permission and options, reported output, hedges: a distinctive word of each
    # (no word as common as "the": the gate must stay shut for most lead-ins)
    "refuse", "refused", "refuses", "refusing", "decline", "declined", "declining", "may", "confirm",
    "confirms", "approval", "permission", "confirmation", "ahead", "approve", "approves", "agree", "agrees",
    "say", "options", "choices", "alternatives", "returned", "responded", "replied", "came", "api", "search",
    "page", "web", "command", "query", "server", "upstream", "tool's", "function's", "ignore", "ignored",
    "ignoring", "didn't", "which", "ok", "okay", "alright", "injection", "asks", "asked", "tells", "wants",
    "wanted", "requests", "requested", "demands", "urges", "orders", "perhaps", "possibly", "maybe", "next",
    "remember", "todo", "to-do", "bad", "wrong", "incorrect", "invalid", "forbidden", "prohibited", "allowed",
    "dangerous", "unsafe", "skip", "previously", "earlier", "already", "last", "yesterday", "before",
})
_WORDS: Final = re.compile(r"[a-z][a-z'.]*[a-z]|[a-z]")
# The cue words only the sentence introducing a call is read for (to the reader, example,
# reported result, made before): the strong cues need none of them.
_STRONG_WORDS: Final = _CUE_WORDS - frozenset({
    "you", "you'd", "you'll", "yourself", "your", "sample", "example", "examples", "e.g", "illustration",
    "illustrate", "illustrates", "illustrative", "illustrating", "illustrated", "illustrations", "api", "search",
    "web", "command", "query", "server", "upstream", "tool's", "function's", "returned", "responded", "replied",
    "came", "previously", "earlier", "already", "last", "yesterday", "before", "ignore", "ignored", "ignoring",
    "didn't", "injection",
})
# The blanks after a sentence's end (not `e.g.` or `i.e.`) and before its next word; led by the
# blank, which a search skips to, not by a look back tried at every character.
_SENTENCE_END: Final = re.compile(r"\s(?<=[.!?]\s)(?<!e\.g\.\s)(?<!i\.e\.\s)\s*(?=\S)")


class Layout:
    """Lines, code fences and unspoken regions of one text, for the checks above.

    ``original`` is the text as the model wrote it (calls are decoded from it, so a
    masked argument value never changes); ``text`` is the same text with the unspoken
    regions blanked (:func:`mask_unspoken`), which every check reads. Both have the same
    length, so positions are shared; everything is computed once, lazily.
    """

    __slots__ = ("_code_lines", "_fences", "_line_starts", "_masked", "_programs", "_verdicts", "original")

    def __init__(self, original: str) -> None:
        self.original = original
        self._masked: str | None = None
        self._line_starts: list[int] | None = None
        self._fences: list[tuple[int, int, int, int]] | None = None
        self._programs: dict[int, bool] = {}
        self._code_lines: list[int] | None = None
        # framing verdicts by the text read: (lead-in, explicit) and (follow-up, names)
        self._verdicts: dict[tuple[str, bool | tuple[str, ...]], bool] = {}

    @property
    def text(self) -> str:
        """The text with its unspoken regions blanked (computed on first use)."""
        if self._masked is None:
            self._masked = mask_unspoken(self.original)
        return self._masked

    def unspoken(self, position: int) -> bool:
        """Whether ``position`` lies in a region the model did not say (quoted, commented...)."""
        masked = self.text
        return masked is not self.original and masked[position] != self.original[position]

    # -------------------------------------------------------------- lines

    def _starts(self) -> list[int]:
        if self._line_starts is None:
            # line n starts after the n lines before it and their n newlines
            lengths = accumulate(map(len, self.text.split("\n")), initial=0)
            self._line_starts = [length + number for number, length in enumerate(lengths)][:-1]
        return self._line_starts

    def line_start(self, position: int) -> int:
        """Where the line holding ``position`` starts. Most lines are short: the newline
        before is looked for in a window first, and the index of every line start is only
        built for a position further than that from its line's start."""
        low = position - _LINE_WINDOW
        newline = self.text.rfind("\n", max(0, low), position)
        if newline != -1 or low <= 0:
            return newline + 1
        starts = self._starts()
        return starts[bisect_right(starts, position) - 1]

    def line_end(self, position: int) -> int:
        end = self.text.find("\n", position)
        return len(self.text) if end == -1 else end

    # -------------------------------------------------------------- fences

    def fences(self) -> list[tuple[int, int, int, int]]:
        """``(start, body_start, body_end, end)`` of every ```` ``` ```` fence, in order."""
        if self._fences is None:
            self._fences = _find_fences(self.text) if "```" in self.original else []
        return self._fences

    def holds_program(self, fence: tuple[int, int, int, int]) -> bool:
        """:func:`is_program` for one fence's body, computed once."""
        known = self._programs.get(fence[0])
        if known is None:
            known = self._programs[fence[0]] = is_program(self.original[fence[1] : fence[2]])
        return known

    def fence_at(self, position: int) -> tuple[int, int, int, int] | None:
        for fence in self.fences():
            if fence[1] <= position < fence[2]:
                return fence
            if fence[0] > position:
                break
        return None

    # -------------------------------------------------------------- position

    def standalone(self, spans: list[tuple[int, int]], index: int, *, explicit: bool = False) -> bool:
        """Whether span ``index`` stands on its own lines, given all call spans found.

        An ``explicit`` call (a JSON call object) may also follow a finished sentence on
        its line, as models write them ("Sure! {"name": ...}"), when nothing follows it.
        """
        start, end = spans[index]
        text = self.text
        first = self.line_start(start)
        last = self.line_end(max(start, end - 1))
        if start - first > _REACH or last - end > _REACH:
            return False  # a call inside a very long line is part of something else
        # Spans are in order and do not overlap: those on these lines are found by bisection.
        nearby = spans[bisect_right(spans, first, key=_span_end) : bisect_left(spans, last, key=_span_start)]
        if explicit and self._after_sentence(first, start) and not any(
            first <= other_start for other_start, _ in nearby if other_start != start
        ):
            rest = text[end:last]
            if not _has_words(rest) and not _STRAY.search(rest):
                return True
        opening, closing = start - 1, end
        while opening > first and text[opening] in "[ ":
            opening -= 1
        while closing < last - 1 and text[closing] in "] ":
            closing += 1
        if (
            opening >= first and closing < last and text[opening] in "'\"" and text[closing] == text[opening]
            and not text[opening - 1 : opening].isalnum()  # f"..." and r"..." are code
        ):
            # `"[f(a=1)]"` or `return "[f(a=1)]"`: a call string standing alone is the call
            text = f"{text[:opening]} {text[opening + 1 : closing]} {text[closing + 1 :]}"
        pieces = []
        cursor = first
        after_call = False
        for other_start, other_end in nearby:
            if other_start > cursor:
                pieces.append(_after_call(text[cursor:other_start]) if after_call else text[cursor:other_start])
            cursor = max(cursor, other_end)
            after_call = True
        pieces.append(_after_call(text[cursor:last]) if after_call else text[cursor:last])
        residue = _TAG.sub(" ", _without_list_marker(" \u0000 ".join(pieces))).lstrip()
        label = _LABEL.match(residue)
        if label is not None:
            residue = residue[label.end() :]
        # Quoted text is data around the call (`['f(a=1)', 'x']`), but a quote that only
        # closes across the call means the call sits inside a string.
        residue = "\u0000".join(_QUOTED.sub(" ", piece) for piece in residue.split("\u0000"))
        return not _has_words(residue.replace("\u0000", " ")) and not _STRAY.search(residue)

    def in_code(self, start: int, end: int) -> bool:
        """Whether the call at ``[start, end)`` sits in unfenced code: its paragraph has
        other lines that define, import, assign or open a block, or it is indented under
        a line ending in ``:``."""
        text = self.text
        first = self.line_start(start)
        last = self.line_end(max(start, end - 1))
        before = text.rfind("\n\n", max(0, first - _REACH), first)
        after = text.find("\n\n", last, last + _REACH)
        paragraph_start = max(0, first - _REACH) if before == -1 else before + 2
        paragraph_end = min(len(text), last + _REACH) if after == -1 else after
        # Code after the call counts unless the call opens the response (what follows
        # is then commentary, often a model rambling on).
        opens = not text[:first].strip()
        if self._code_in(paragraph_start, first) or (not opens and self._code_in(last, paragraph_end)):
            return True
        indent = len(text[first:start]) - len(text[first:start].lstrip(" \t"))
        if indent:
            previous = text[paragraph_start:first].rstrip().rsplit("\n", 1)[-1]
            return previous.rstrip().endswith(":") and not _has_words(previous.split(":")[0][-60:] + " x")
        return False

    def may_start(self, position: int, after: int) -> bool:
        """A cheap first look, before anything is parsed: whether a call starting at
        ``position`` could stand on its own, given what precedes it on its line (from
        ``after``, the end of the previous call found on that line, if any)."""
        first = self.line_start(position)
        if position - first > _REACH:
            return False
        text = self.text
        piece = text[max(first, after) : position]
        if not piece.strip(" \t[({`'\""):
            return True
        # Most candidates sit in a sentence: each pattern below is only tried when the
        # character it needs is there (a tag needs `<` or `[`, a label `:`, a quote a quote).
        if after <= first:
            piece = _without_list_marker(piece)
            if "<" in piece or "[" in piece:
                piece = _TAG.sub(" ", piece)
            piece = piece.lstrip()
            if ":" in piece:
                label = _LABEL.match(piece)
                if label is not None:
                    piece = piece[label.end() :]
        if "'" in piece or '"' in piece:
            piece = _QUOTED.sub(" ", piece)
        piece = piece.rstrip(" \t[({`'\"")
        if _has_words(piece) or _STRAY.search(piece):
            if text[position] == "{" and after <= first and self._after_sentence(first, position):
                return not self._code_before(first)  # "Sure! {"name": ...}" (see standalone)
            return False
        return not self._code_before(first)

    def _after_sentence(self, first: int, start: int) -> bool:
        """Whether the line from ``first`` to ``start`` is short prose ending a sentence."""
        lead = self.text[first:start].rstrip(" \t")
        return 0 < len(lead) <= _PREAMBLE and lead[-1] in ".!?:" and "`" not in lead

    def _code_before(self, first: int) -> bool:
        """Whether a line of code precedes line ``first`` in its paragraph (see :meth:`in_code`)."""
        text = self.text
        lowest = max(0, first - _REACH)
        before = text.rfind("\n\n", lowest, first)
        paragraph_start = lowest if before == -1 else before + 2
        # Only whole lines count here (a search from `paragraph_start` anchors `^` at line starts).
        return paragraph_start < first and self._code_line_between(paragraph_start, first)

    def _code_line_between(self, low: int, high: int) -> bool:
        """Whether a line that starts in ``[low, high)`` is a line of code (:data:`_CODE_LINE`)."""
        if self._code_lines is None:  # every line is looked at once, however many calls ask
            # In "\n" + text, the newline found at i opens the line that starts at i in text.
            self._code_lines = [found.start() for found in _CODE_LINE_AFTER_NEWLINE.finditer("\n" + self.text)]
        lines = self._code_lines
        number = bisect_left(lines, low)
        return number < len(lines) and lines[number] < high

    def _code_in(self, low: int, high: int) -> bool:
        """``_CODE_LINE.search(text[low:high])``: whether that slice, read on its own, holds
        a line of code. Whole lines come from the index of code lines (the pattern never
        reads past a line's end); only a line the slice cuts at either end is matched here."""
        text = self.text
        if low > 0 and low < high and text[low - 1] != "\n":  # the slice starts inside a line
            newline = text.find("\n", low, high)
            head_end = high if newline == -1 else newline + 1
            if _CODE_LINE.match(text[low:head_end]):
                return True
            low = head_end
        if low < high < len(text) and text[high] != "\n":  # the slice ends inside a line
            tail = max(low, text.rfind("\n", low, high) + 1)
            if _CODE_LINE.match(text[tail:high]):
                return True
            high = tail
        return low < high and self._code_line_between(low, high)

    # -------------------------------------------------------------- framing

    def framed_out(
        self, start: int, end: int, *, explicit: bool = False, follow: bool = True,
        names: tuple[str, ...] = (), floor: int = 0, sentences: int = 2,
    ) -> bool:
        """Whether the prose around a call at ``[start, end)`` takes it back (see module doc).

        An ``explicit`` call (written in a call syntax: a ``<tool_call>`` tag, a
        ``{"name", "arguments"}`` object) is not taken back by words addressed to the
        reader ("here is the call you can use"), only by negation, quotation or an
        example. ``follow=False`` (a format marker) looks only at the lead-in. ``floor``
        is where the call before ended: its words are not this call's framing.
        ``sentences`` is how far back the lead-in reaches.
        """
        # Models repeat a call with the same words around it (a call per turn they make up,
        # the same call restated): each verdict is a function of its text, read once.
        lead = self.lead_in(start, floor, sentences)
        verdict = self._verdicts.get((lead, explicit))
        if verdict is None:
            verdict = self._verdicts[lead, explicit] = _lead_takes_back(lead, explicit)
        if verdict or not follow:
            return verdict
        after = self.follow_up(end)
        verdict = self._verdicts.get((after, names))
        if verdict is None:
            verdict = self._verdicts[after, names] = _follow_up_takes_back(after, names)
        return verdict

    def lead_in(self, start: int, floor: int = 0, sentences: int = 2) -> str:
        """The text leading into ``start``: its line so far and the paragraph before it
        (wrapper lines such as ``<|im_start|>`` skipped), at most the last ``sentences``
        sentences, never reaching back past ``floor`` (the end of the call before)."""
        text = self.text
        line_start = max(floor, self.line_start(start))
        own = text[max(line_start, start - 400) : start]
        position = line_start
        paragraph = ""
        for _ in range(4):  # a few wrapper-only paragraphs may sit between
            position = _before_blanks(text, position, floor)  # blank lines between the paragraph and the call
            if position <= floor or self._fence_ending_at(position) is not None:
                break  # nothing before, or code: it leads nowhere
            lowest = max(floor, position - _REACH)
            paragraph_start = text.rfind("\n\n", lowest, position)
            paragraph_start = lowest if paragraph_start == -1 else paragraph_start + 2
            paragraph = _TAG.sub(" ", text[max(paragraph_start, position - 400) : position]).strip()
            if paragraph:
                break
            position = paragraph_start
        lead = f"{paragraph}\n{own}" if paragraph else own
        read = _SENTENCE_END.split(lead.strip())
        return " ".join(read[-sentences:])

    def follow_up(self, end: int) -> str:
        """The first sentence after ``end`` (the rest of its line, or the next paragraph)."""
        text = self.text
        rest = text[end : end + 300].lstrip(" \t`])}.,;")
        if rest.startswith("\n"):
            rest = rest.lstrip()
        if rest.startswith("```"):
            return ""
        return _SENTENCE_END.split(rest, 1)[0] if rest else ""

    def _fence_ending_at(self, position: int) -> tuple[int, int, int, int] | None:
        for fence in self.fences():
            if fence[2] <= position <= fence[3]:
                return fence
        return None


def _lead_takes_back(lead_in: str, explicit: bool) -> bool:
    """Whether the words leading into a call take it back (:meth:`Layout.framed_out`)."""
    lead = _plain(_DOUBLE_QUOTED.sub(" ", lead_in).lower())
    words = set(_WORDS.findall(lead)) if lead else set()
    if lead and (not lead.isascii() or not _FOREIGN_CUES.isdisjoint(words)) and _FOREIGN_NEGATION.search(lead):
        return True
    if lead and not _CUE_WORDS.isdisjoint(words):
        # (the strong cues are one long expression: searched only when one of their words is there)
        if not _STRONG_WORDS.isdisjoint(words) and _STRONG.search(lead):
            return True
        last = _SENTENCE_END.split(lead)[-1]
        if (_INTRODUCING_EXPLICIT if explicit else _INTRODUCING).search(last):
            return True
    return False


def _follow_up_takes_back(follow_up: str, names: tuple[str, ...]) -> bool:
    """Whether the sentence after a call takes it back (:meth:`Layout.framed_out`)."""
    after = _plain(follow_up.lower())
    if not after or _CUE_WORDS.isdisjoint(_WORDS.findall(after)):
        return False
    if _TAKEN_BACK.search(after):
        return True
    if _NOT_PROVIDED.search(after):
        return _THIS_CALL.search(after) is not None or any(name.lower() in after for name in names)
    return False


# What may follow a call and still leave it the call: `f(x=1)['chord']`, `f(x=1).get("a")`.
_ACCESSOR: Final = re.compile(r"(?:\[[^\]\n]{1,40}\]|\.[A-Za-z_]\w*(?:\([^()\n]{0,40}\))?)+")


_QUOTED: Final = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"")
# JSON strings in a lead-in are data (a call's arguments), not words that frame a call.
_DOUBLE_QUOTED: Final = re.compile(r"\"[^\"\n]*\"")
# Left after quoted text is removed: an assignment, or a quote the call sits inside.
# (A question mark asks about the call: "delete_repo(name='prod')?")
_STRAY: Final = re.compile(r"[=\"'\u201c\u201d?]")
_PREAMBLE: Final = 200  # characters of a sentence before a JSON call on its line


def _plain(text: str) -> str:
    """``text`` as the cues read it: typographic apostrophes made ``'`` ("don\u2019t" is
    "don't"), markdown emphasis dropped ("do **not**", "do _not_"), runs of blanks one space."""
    if "\u2019" in text or "\u2018" in text or "\u02bc" in text:
        text = text.translate(_APOSTROPHES)
    if "*" in text or "~" in text or " _" in text or "_ " in text:  # (`get_weather` is no emphasis)
        text = _EMPHASIS.sub("", text)
    if "  " in text or "\t" in text:
        text = _BLANKS_RUN.sub(" ", text)
    return text


_APOSTROPHES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})
_EMPHASIS: Final = re.compile(r"[*~]+|(?<!\w)_+|_+(?!\w)")
_BLANKS_RUN: Final = re.compile(r"[ \t]+")


def _before_blanks(text: str, position: int, floor: int) -> int:
    """Where the run of blanks (newlines, spaces, tabs) ending at ``position`` starts, never
    below ``floor``; read a window at a time, so a long run costs no Python loop per character."""
    while position > floor:
        low = max(floor, position - 256)
        kept = text[low:position].rstrip("\n \t\r")
        if kept:
            return low + len(kept)
        position = low
    return position


def _without_list_marker(line: str) -> str:
    """``_LIST_MARKER.sub(" ", line, count=1)``, several times faster: the first marker
    is the leftmost match, which starts at the blanks right before it."""
    found = _MARKER_ITSELF.search(line)
    if found is None:
        return line
    start = found.start()
    while start > 0 and line[start - 1] in " \t":
        start -= 1
    return f"{line[:start]} {line[found.end():]}"


def _span_start(span: tuple[int, int]) -> int:
    return span[0]


def _span_end(span: tuple[int, int]) -> int:
    return span[1]


def _after_call(piece: str) -> str:
    accessor = _ACCESSOR.match(piece)
    return piece[accessor.end() :] if accessor is not None else piece


def _find_fences(text: str) -> list[tuple[int, int, int, int]]:
    fences: list[tuple[int, int, int, int]] = []
    position = text.find("```")
    while position != -1 and len(fences) < 256:
        info_end = position + 3
        newline = text.find("\n", info_end)
        closing_inline = text.find("```", info_end)
        if closing_inline != -1 and (newline == -1 or closing_inline < newline):
            body_start = info_end  # ```f(x=1)``` on one line
        else:
            info = text[info_end : len(text) if newline == -1 else newline]
            body_start = info_end if info.strip() and not re.fullmatch(r"[\w+.\-]*[ \t]*", info) else (
                len(text) if newline == -1 else newline + 1
            )
        close = text.find("```", body_start)
        if close == -1:
            fences.append((position, body_start, len(text), len(text)))
            break
        fences.append((position, body_start, close, close + 3))
        position = text.find("```", close + 3)
    return fences


# ------------------------------------------------------------------ code fences


def _whole_body(body: str) -> str | None:
    """``body.strip()`` when it parses to the statements ``textwrap.dedent(body)`` parses
    to, else ``None``: when only blank lines come before the first line of code, which
    starts in column 0 (so there is no margin to remove), and only ASCII blanks after the
    code. Whitespace-only lines (all dedent would change) are blank to Python's tokenizer,
    or sit in a string whose value :func:`is_program` never looks at. It is the source the
    fence's calls were parsed from (``parse_whole``), so that parse is shared.
    """
    stripped = body.strip()
    if not stripped or stripped[-1] in ";\\":
        return None
    head_end = len(body) - len(body.lstrip())
    head, tail = body[:head_end], body[head_end + len(stripped) :]
    if (head and head[-1] != "\n") or head.strip(" \t\r\n") or tail.strip(" \t\r\n"):
        return None
    return stripped


def is_program(body: str) -> bool:
    """Whether a fence holds a program (definitions, imports, assignments...) rather than calls.

    Only Python is judged; a body Python cannot parse (JSON, XML, shell) is not a program
    here, and its lines are checked one by one instead.
    """
    whole = _whole_body(body)
    if whole is not None:
        # Already read as one expression (the fence was read as calls first): parsed as
        # statements, the same source is exactly that expression's statement, so it is
        # not parsed again.
        expression = parsed_already(whole, "eval")
        if isinstance(expression, ast.Expression):
            return not _call_or_data(expression.body, statement=True)
    module = quiet_parse(whole or textwrap.dedent(body), "exec")
    if not isinstance(module, ast.Module):
        return False
    for statement in module.body:
        value = statement.value if isinstance(statement, (ast.Expr, ast.Return)) else None
        if not _call_or_data(value, statement=isinstance(statement, ast.Expr)):
            return True
    return False


def holds_no_call(body: str) -> bool:
    """Whether a fence's body is a docstring, Python that holds only triple-quoted text:
    what is written inside it is not a call (a one-line string that is all calls,
    ``"[f(a=1)]"``, is how some models write a call, and stays one)."""
    if not body.lstrip().startswith(('"""', "'''")):
        return False
    module = quiet_parse(textwrap.dedent(body), "exec")
    if not isinstance(module, ast.Module) or not module.body:
        return False
    return all(isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
               for statement in module.body)


def _call_or_data(value: ast.expr | None, *, statement: bool) -> bool:
    """Whether a statement's value leaves a fence a list of calls: data (a docstring, a
    literal) as an expression statement, or calls (``return f(x)`` counts)."""
    if statement and isinstance(value, (ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.Set)):
        return True  # data, a docstring, a list of calls
    return isinstance(value, (ast.Call, ast.List, ast.Tuple, ast.Await))


__all__ = ["Layout", "comment_takes_back", "has_placeholder", "holds_no_call", "is_program", "mask_unspoken"]
