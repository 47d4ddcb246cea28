"""The inspector end to end in a real headless Chromium: `mcs inspect` as a process, a person's
clicks and keys, and the real servers behind it asserting what they received.

Every page is written as a screenshot to ``artifacts/inspector/``.
"""

from __future__ import annotations

import json
import re
import shutil
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from inspect_support import inspect_process, mcp_servers_file, recorded, tab_to
from mcs_rest.demo import SPEC, serve_shop

import mcs
from mcs.inspector import InspectorServer
from mcs.inspector.cli import open_in_browser

sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (pip install playwright)")
expect = sync_api.expect


@pytest.fixture(scope="module")
def demo() -> Iterator[tuple[str, str]]:
    """`mcs inspect rest` on the REST demo's pet shop: (page URL, shop URL)."""
    with serve_shop() as shop, inspect_process(["rest", "-o", f"spec={SPEC}", "-o", f"base_url={shop}"]) as (_, url):
        yield url, shop


@pytest.fixture(scope="module")
def studio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`mcs inspect servers.json` on the SDK-built interfaces server: (page URL, its call record)."""
    folder = tmp_path_factory.mktemp("studio")
    record = folder / "calls.jsonl"
    with inspect_process([str(mcp_servers_file(folder, record))]) as (_, url):
        yield url, record


def _calls_since(record: Path, before: int, count: int) -> list[dict[str, Any]]:
    return recorded(record, before + count)[before:]


def _count(record: Path) -> int:
    return len(record.read_text(encoding="utf-8").splitlines()) if record.exists() else 0


# ---------------------------------------------------------------------- tools, by mouse


def test_the_rest_demo_can_be_searched_opened_filled_and_run(page: Any, demo: tuple[str, str], screenshots: Path) -> None:
    url, shop = demo
    page.goto(url)
    expect(page.locator("#driver-name")).to_have_text("demo_petstore")
    page.fill("#search", "add a pet")
    expect(page.locator("#search-status")).to_contain_text("best first")
    expect(page.locator("#tool-list a.tool-link").first).to_have_attribute("data-tool", "addPet")
    page.click("#tool-list a[data-tool=addPet]")
    expect(page.locator("#tool-heading")).to_have_text("addPet")
    page.fill("input[name=name]", "Rex")
    page.select_option("select[name=species]", label="dog")
    page.fill("input[name=age]", "3")
    expect(page.locator("textarea.raw")).to_have_value(re.compile(r'"age": 3'))
    page.click("details[data-format=openai] summary")
    expect(page.locator("details[data-format=openai] pre")).to_contain_text('"type": "function"')
    page.screenshot(path=str(screenshots / "tools.png"), full_page=True)
    page.click("form.try button[type=submit]")
    expect(page.locator("#confirm")).to_be_visible()
    page.screenshot(path=str(screenshots / "confirm.png"))
    page.click("#confirm button[value=run]")
    outcome = page.locator("#tool-detail .outcome")
    expect(outcome).to_contain_text('"name": "Rex"')
    expect(outcome.locator("table.events")).to_contain_text("on_execute_end")
    page.screenshot(path=str(screenshots / "result.png"), full_page=True)
    pets = httpx.get(f"{shop}/pets", timeout=10).json()
    assert {"id": 2, "name": "Rex", "species": "dog", "age": 3} in pets


def test_a_declined_confirmation_runs_nothing(page: Any, demo: tuple[str, str]) -> None:
    url, shop = demo
    before = httpx.get(f"{shop}/pets", timeout=10).json()
    page.goto(url + "#/tools/addPet")
    page.fill("input[name=name]", "Ghost")
    page.select_option("select[name=species]", label="cat")
    page.click("form.try button[type=submit]")
    page.click("#confirm button[value=cancel]")
    expect(page.locator("#tool-detail .output")).to_contain_text("Not run")
    assert httpx.get(f"{shop}/pets", timeout=10).json() == before


def test_the_system_prompt_follows_the_chosen_model(page: Any, demo: tuple[str, str], screenshots: Path) -> None:
    url, _ = demo
    page.goto(url + "#/prompt")
    expect(page.locator("#prompt-body")).to_contain_text("template “default”")
    page.fill("#model", "claude-sonnet-4")
    page.press("#model", "Enter")
    expect(page.locator("#prompt-body")).to_contain_text("template “claude”")
    expect(page.locator("#prompt-body pre")).to_contain_text("addPet")
    page.screenshot(path=str(screenshots / "prompt.png"), full_page=True)


def test_a_pasted_reply_shows_its_calls_and_runs_them(page: Any, demo: tuple[str, str], screenshots: Path) -> None:
    url, _ = demo
    page.goto(url + "#/reply")
    reply = ('Let me look.\n{"tool": "listPets", "arguments": {"species": "cat"}}\n'
             '{"tool": "getPet", "arguments": {"petId": "one"}}')
    page.fill("#reply-text", reply)
    page.click("#reply-form button[type=submit]")
    rows = page.locator("table.calls tbody tr")
    expect(rows).to_have_count(2)
    expect(rows.nth(0)).to_contain_text("explicit")
    expect(rows.nth(0)).to_contain_text("runs")
    expect(rows.nth(1)).to_contain_text("INVALID_INPUT")
    expect(page.locator("#reply-analysis")).to_contain_text("none runs")
    page.screenshot(path=str(screenshots / "reply.png"), full_page=True)
    page.fill("#reply-text", '{"tool": "listPets", "arguments": {"species": ')
    page.click("#reply-form button[type=submit]")
    expect(page.locator("#reply-analysis ul.attempts")).to_contain_text("cut off call to listPets")
    expect(page.locator("#reply-run")).to_be_disabled()
    page.fill("#reply-text", '{"tool": "listPets", "arguments": {"species": "cat"}}')
    page.click("#reply-form button[type=submit]")
    expect(page.locator("table.calls tbody tr")).to_have_count(1)
    page.click("#reply-run")
    expect(page.locator("#reply-output")).to_contain_text('"name": "Tom"')


def test_a_reply_edited_after_its_analysis_is_confirmed_as_edited_not_as_analysed(
    page: Any, demo: tuple[str, str]
) -> None:
    url, shop = demo
    page.goto(url + "#/reply")
    page.fill("#reply-text", '{"tool": "addPet", "arguments": {"name": "Shown", "species": "cat"}}')
    page.click("#reply-form button[type=submit]")
    expect(page.locator("table.calls tbody tr")).to_contain_text("writes")
    # The text changes after the analysis; the person clicks Run without analysing again.
    page.fill("#reply-text", '{"tool": "addPet", "arguments": {"name": "Hidden", "species": "dog"}}')
    page.click("#reply-run")
    dialog = page.locator("#confirm")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Hidden")
    expect(dialog).not_to_contain_text("Shown")
    page.click("#confirm button[value=cancel]")
    expect(page.locator("#reply-output")).to_contain_text("Not run")
    names = {pet["name"] for pet in httpx.get(f"{shop}/pets", timeout=10).json()}
    assert not names & {"Shown", "Hidden"}


def test_a_request_without_the_token_is_refused_in_the_browser(page: Any, demo: tuple[str, str], screenshots: Path) -> None:
    url, _ = demo
    root = url.rsplit("/", 2)[0] + "/"
    answer = page.goto(root)
    assert answer is not None and answer.status == 403
    expect(page.locator("body")).to_contain_text("needs the session token")
    page.screenshot(path=str(screenshots / "refused.png"))


# ---------------------------------------------------------------------- interfaces


def test_the_file_open_gives_the_browser_leads_to_the_page(
    page: Any, demo: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, _ = demo
    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda address: opened.append(address) or True)
    folder = open_in_browser(url)
    try:
        assert opened and opened[0].startswith("file://") and url not in opened[0]
        page.goto(opened[0])
        page.wait_for_url(url + "**")
        expect(page.locator("a.tool-link").first).to_be_visible()
    finally:
        shutil.rmtree(folder)


def test_the_media_player_drives_the_sdk_server(page: Any, studio: tuple[str, Path], screenshots: Path) -> None:
    url, record = studio
    before = _count(record)
    page.goto(url + "#/interfaces")
    player = page.locator("section[data-interface='media.player.v1']")
    slider = player.locator("input[type=range]")
    expect(slider).to_have_attribute("max", "1")
    expect(slider).to_have_attribute("min", "0")
    player.locator("button[data-method=play]").click()
    expect(player.locator(".player-state")).to_have_text("playing")
    player.locator("button[data-method=pause]").click()
    expect(player.locator(".player-state")).to_have_text("paused")
    box = slider.bounding_box()
    page.mouse.click(box["x"] + box["width"] * 0.9, box["y"] + box["height"] / 2)
    expect(player.locator(".outcome")).to_contain_text('"success": true')
    page.screenshot(path=str(screenshots / "interfaces.png"), full_page=True)
    calls = _calls_since(record, before, 3)
    assert [c["tool"] for c in calls] == ["play", "pause", "set_volume"]
    assert 0.8 <= calls[2]["arguments"]["volume"] <= 1.0


def test_the_file_tree_editor_and_chat_work_from_their_definitions(page: Any, studio: tuple[str, Path], screenshots: Path) -> None:
    url, record = studio
    before = _count(record)
    page.goto(url + "#/interfaces")
    navigator = page.locator("section[data-interface='filesystem.navigator.v1']")
    navigator.locator("form.inline button[type=submit]").click()
    navigator.locator("button[data-path='/src']").click()
    navigator.locator("button[data-path='/src/main.py']").click()
    expect(navigator.locator(".viewer pre")).to_contain_text("print('hello')")
    expect(navigator.locator(".breadcrumbs")).to_contain_text("main.py")

    editor = page.locator("section[data-interface='code.editor.v1']")
    editor.locator("form.inline input").fill("/src/main.py")
    editor.locator("form.inline button[type=submit]").click()
    expect(editor.locator("textarea.editor")).to_have_value("print('hello')\nprint('world')\n")
    editor.locator("textarea.editor").fill("print('hello')\nprint('inspector')\n")
    editor.locator("button[data-method=edit_line]").click()
    expect(page.locator("#confirm")).to_contain_text("print('inspector')")  # the server's preview of the Save
    page.click("#confirm button[value=run]")
    expect(editor.locator(".output")).to_contain_text('"success": true')
    editor.locator("button[data-method=run_code]").click()
    expect(editor.locator(".run-output")).to_contain_text("exit code 0")

    chat = page.locator("section[data-interface='chat.assistant.v1']")
    chat.locator("form.inline input").fill("hello there")
    chat.locator("form.inline input").press("Enter")
    expect(chat.locator(".chat-log")).to_contain_text("You said: hello there")
    thermostat = page.locator("section[data-interface='thermostat.control.v1']")
    expect(thermostat).to_contain_text("No dedicated view")
    page.screenshot(path=str(screenshots / "interfaces-views.png"), full_page=True)

    calls = _calls_since(record, before, 7)
    assert [c["tool"] for c in calls] == ["list_dir", "list_dir", "open_file", "open_file", "edit_line", "run_code", "reply"]
    assert calls[4]["arguments"] == {"path": "/src/main.py", "line": 2, "text": "print('inspector')"}
    assert calls[6]["arguments"]["message"] == "hello there"


# ---------------------------------------------------------------------- keyboard alone


def test_the_tools_page_is_usable_by_keyboard_alone(page: Any, demo: tuple[str, str], screenshots: Path) -> None:
    url, shop = demo
    page.goto(url)
    expect(page.locator("#tool-list a.tool-link")).to_have_count(3)
    page.keyboard.press("/")
    page.keyboard.type("pet by id")
    expect(page.locator("#search-status")).to_contain_text("best first")
    page.keyboard.press("ArrowDown")
    expect(page.locator("#tool-list a.tool-link").first).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#tool-heading")).to_be_focused()
    tab_to(page, "input[name=petId]")
    page.keyboard.type("1")
    tab_to(page, "form.try button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator("#tool-detail .outcome")).to_contain_text('"name": "Tom"')
    page.screenshot(path=str(screenshots / "keyboard-tools.png"), full_page=True)

    page.goto(url + "#/tools/addPet")
    expect(page.locator("#tool-heading")).to_be_focused()
    tab_to(page, "input[name=name]")
    page.keyboard.type("Kiwi")
    page.keyboard.press("Tab")
    page.keyboard.press("ArrowDown")  # the species list, from "(choose)": dog, then cat
    page.keyboard.press("ArrowDown")
    tab_to(page, "form.try button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator("#confirm")).to_be_visible()
    expect(page.locator("#confirm button[value=cancel]")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#confirm button[value=run]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#tool-detail .outcome")).to_contain_text('"name": "Kiwi"')
    assert {"name": "Kiwi", "species": "cat"}.items() <= next(
        p for p in httpx.get(f"{shop}/pets", timeout=10).json() if p["name"] == "Kiwi").items()


def test_the_prompt_and_reply_pages_are_usable_by_keyboard_alone(page: Any, demo: tuple[str, str]) -> None:
    url, _ = demo
    page.goto(url)
    expect(page.locator("#tool-list a.tool-link")).to_have_count(3)
    tab_to(page, "nav a[data-page=prompt]")
    page.keyboard.press("Enter")
    expect(page.locator("#prompt-heading")).to_be_focused()
    tab_to(page, "#model", backwards=True)
    page.keyboard.type("gemini-2.0-flash")
    page.keyboard.press("Enter")
    expect(page.locator("#prompt-body")).to_contain_text("template “gemini”")

    tab_to(page, "nav a[data-page=reply]", backwards=True)
    page.keyboard.press("Enter")
    expect(page.locator("#reply-heading")).to_be_focused()
    tab_to(page, "#reply-text")
    page.keyboard.type('{"tool": "getPet", "arguments": {"petId": 1}}')
    tab_to(page, "#reply-form button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator("table.calls tbody tr")).to_have_count(1)
    tab_to(page, "#reply-run")
    page.keyboard.press("Enter")
    expect(page.locator("#reply-output")).to_contain_text('"name": "Tom"')


def test_the_interfaces_page_is_usable_by_keyboard_alone(page: Any, studio: tuple[str, Path], screenshots: Path) -> None:
    url, record = studio
    before = _count(record)
    page.goto(url)
    tab_to(page, "nav a[data-page=interfaces]")
    page.keyboard.press("Enter")
    expect(page.locator("section[data-interface='media.player.v1']")).to_be_visible()
    tab_to(page, "button[data-method=play]")
    page.keyboard.press("Enter")
    expect(page.locator(".player-state")).to_have_text("playing")
    tab_to(page, "input[type=range][data-method=set_volume]")
    page.keyboard.press("ArrowLeft")
    expect(page.locator("section[data-interface='media.player.v1'] .outcome")).to_contain_text('"success": true')
    tab_to(page, "section[data-interface='filesystem.navigator.v1'] form.inline button[type=submit]")
    page.keyboard.press("Enter")
    expect(page.locator("button[data-path='/docs']")).to_be_visible()
    tab_to(page, "button[data-path='/docs']")
    page.keyboard.press("Enter")
    tab_to(page, "button[data-path='/docs/readme.md']")
    page.keyboard.press("Enter")
    expect(page.locator(".viewer pre")).to_contain_text("A file to read.")
    page.screenshot(path=str(screenshots / "keyboard-interfaces.png"), full_page=True)
    calls = _calls_since(record, before, 5)
    assert [c["tool"] for c in calls] == ["play", "set_volume", "list_dir", "list_dir", "open_file"]
    assert calls[1]["arguments"]["volume"] == pytest.approx(0.45)


# ---------------------------------------------------------------------- the form, from any JSON Schema

ORDER_SCHEMA = {
    "type": "object",
    "$defs": {"address": {"type": "object", "properties": {
        "city": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}}, "required": ["city"]}},
    "properties": {
        "customer": {"type": "string", "format": "email", "description": "who pays"},
        "address": {"$ref": "#/$defs/address"},
        "items": {"type": "array", "items": {"type": "object", "properties": {
            "sku": {"type": "string"}, "count": {"type": "integer", "minimum": 1, "default": 1}}, "required": ["sku"]}},
        "size": {"type": "string", "enum": ["S", "M", "L"], "default": "M"},
        "payment": {"oneOf": [
            {"title": "card", "type": "object", "properties": {"number": {"type": "string"}}, "required": ["number"]},
            {"title": "transfer", "type": "object", "properties": {"iban": {"type": "string"}}, "required": ["iban"]}]},
        "deliver_on": {"type": "string", "format": "date"},
        "gift": {"type": "boolean"},
    },
    "required": ["customer", "address", "items"],
    "additionalProperties": False,
}


class EchoDriver(mcs.ToolDriver):
    """One read-only tool whose result is the arguments it was given (after validation)."""

    meta = mcs.DriverMeta(id="6b0e0f5e-8a9c-4c0e-9d8e-1f1f1f1f1f1f", name="echo", version="1", protocol="test",
                          transport="memory", spec_format="JSON Schema")

    def _list_tools(self) -> list[mcs.Tool]:
        return [mcs.Tool(name="order", description="Place an order.", input_schema=ORDER_SCHEMA,
                         annotations={"readOnlyHint": True})]

    def _call_tool(self, invocation: mcs.Invocation) -> Any:
        return invocation.arguments


def test_the_form_covers_nested_objects_arrays_enums_oneof_formats_defaults_and_required_marks(
    page: Any, screenshots: Path,
) -> None:
    with InspectorServer(EchoDriver()) as server:
        page.goto(server.url + "#/tools/order")
        form = page.locator("form.try")
        # customer, address, address.city, items, and the card's number (the first payment shape)
        expect(form.locator(".required")).to_have_count(5)
        expect(form.locator("input[name=city]")).to_have_attribute("aria-required", "true")
        expect(form.locator("input[name=customer]")).to_have_attribute("type", "email")
        expect(form.locator("input[name=deliver_on]")).to_have_attribute("type", "date")
        expect(form.locator("select[name=size]")).to_have_value('"M"')
        expect(form.locator("input[name=zip]")).to_have_attribute("pattern", "^[0-9]{5}$")
        form.locator("input[name=customer]").fill("ada@example.com")
        form.locator("input[name=city]").fill("Paris")
        form.get_by_role("button", name="Add item to items").click()
        form.get_by_role("button", name="Add item to items").click()
        form.locator("input[name=sku]").nth(0).fill("tea")
        form.locator("input[name=sku]").nth(1).fill("cup")
        form.locator("input[name=count]").nth(1).fill("2")
        form.get_by_role("button", name="Remove item from items").nth(0).click()
        form.locator("select[aria-label='payment: which shape']").select_option(label="2. transfer")
        form.locator("input[name=iban]").fill("FR76")
        form.locator("input[name=deliver_on]").fill("2025-03-01")
        form.locator("select[name=gift]").select_option(label="true")
        expected = {"customer": "ada@example.com", "address": {"city": "Paris"}, "items": [{"sku": "cup", "count": 2}],
                    "size": "M", "payment": {"iban": "FR76"}, "deliver_on": "2025-03-01", "gift": True}
        assert json.loads(form.locator("textarea.raw").input_value()) == expected
        page.screenshot(path=str(screenshots / "form.png"), full_page=True)
        form.locator("button[type=submit]").click()
        expect(page.locator("#tool-detail .outcome")).to_contain_text('"iban": "FR76"')
        result = json.loads(page.locator("#tool-detail .outcome pre").first.inner_text())
        assert result == expected

        raw = form.locator("textarea.raw")
        raw.fill(json.dumps({**expected, "size": "L", "payment": {"number": "4242"}}))
        expect(form.locator("select[name=size]")).to_have_value('"L"')
        expect(form.locator("input[name=number]")).to_have_value("4242")
        raw.fill('{"customer": ')
        expect(form.locator(".raw-column small")).to_have_text("Not valid JSON yet.")
        form.locator("button[type=submit]").click()
        expect(page.locator("#tool-detail .output")).to_contain_text("not valid JSON")
