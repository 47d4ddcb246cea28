"""Prompt cost in tokens (tiktoken o200k_base) and the time to pick and render a template.

* Fixed cost: every shipped template rendered with an empty tool list, so what is
  counted is the template's own text plus its call example.
* Description cost: a real tool set (BFCL v1 "simple" functions from the shared corpus,
  or a small built-in set when the corpus is absent) rendered in each description style,
  against the placeholder renderer MCS had before (``json.dumps([tool.to_dict()], indent=1)``).
* Time: median of ``PromptRegistry.select`` and of a full ``render_system_message``.

Run: ``python -m bench prompts`` (needs ``tiktoken``; the encodings are read from
``../shared/tokenizers`` when that folder exists, so no download is needed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from bench._support import SHARED, median_us, o200k
from mcs.prompts import (
    DESCRIPTION_STYLES,
    call_example,
    default_registry,
    render_function_description,
    render_system_message,
)
from mcs.tools import Tool, unique_tool_names

BFCL_SIMPLE = SHARED / "corpus" / "bfcl" / "v1" / "data" / "gorilla_openfunctions_v1_test_simple.json"

# BFCL writes Python type names; map them to JSON Schema so the tools are what a driver would give.
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array",
               "any": "string", "str": "string", "int": "integer", "bool": "boolean"}


def _encoder() -> Callable[[str], int]:
    encoding = o200k()
    return lambda text: len(encoding.encode(text, disallowed_special=()))


def _json_schema(node: Any) -> Any:
    if isinstance(node, dict):
        out = {k: _json_schema(v) for k, v in node.items()}
        if isinstance(out.get("type"), str):
            out["type"] = _BFCL_TYPES.get(out["type"], out["type"])
        return out
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    return node


def _tools() -> tuple[str, list[Tool]]:
    if BFCL_SIMPLE.is_file():
        functions = []
        for line in BFCL_SIMPLE.read_text(encoding="utf-8").splitlines():
            if line.strip():
                function = json.loads(line)["function"]
                functions.extend(function if isinstance(function, list) else [function])
        names = unique_tool_names(f["name"] for f in functions)
        tools = [
            Tool(name=name, description=f.get("description", ""),
                 input_schema=_json_schema(f.get("parameters", {"type": "object", "properties": {}})),
                 meta={"original_name": f["name"]})
            for name, f in zip(names, functions, strict=True)
        ]
        return f"BFCL v1 simple ({len(tools)} functions)", tools
    from mcs.demo import DemoDriver  # its tools stand in for the corpus

    tools = list(DemoDriver().list_tools())
    return f"demo driver ({len(tools)} tools; corpus absent)", tools


def main() -> None:
    count = _encoder()
    registry = default_registry()
    label, tools = _tools()

    print("Fixed cost of each template (o200k tokens, no tools):")
    for template in sorted(registry, key=lambda t: t.name):
        text = template.render(function_description="", driver_name="demo", model_name="",
                               call_example=call_example(template.call_format))
        print(f"  {template.name:<8} {count(text):>4}  ({template.call_format}, {template.description_style})")

    print(f"\nTool descriptions for {label}, o200k tokens:")
    baseline = count(json.dumps([t.to_dict() for t in tools], indent=1, ensure_ascii=False))
    print(f"  {'placeholder json indent=1 (before)':<36} {baseline:>7}  1.00x")
    for style in DESCRIPTION_STYLES:
        tokens = count(render_function_description(tools, style=style))  # type: ignore[arg-type]
        print(f"  {'style ' + style:<36} {tokens:>7}  {tokens / baseline:.2f}x")

    few = tools[:5]
    description = render_function_description(few, style="json")
    select_us = median_us(lambda: registry.select("claude-3-5-sonnet-20241022"), 2000)
    render_us = median_us(lambda: render_system_message(
        function_description=description, model_name="claude-3-5-sonnet-20241022", driver_name="demo"), 2000)
    describe_us = median_us(lambda: render_function_description(few, style="typescript"), 500)
    print(f"\nMedian time: select {select_us:.1f} us ({len(registry)} templates), "
          f"render_system_message {render_us:.1f} us, typescript description of 5 tools {describe_us:.1f} us")


if __name__ == "__main__":
    main()
