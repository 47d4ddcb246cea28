"""Toolbox: several drivers behind one contract."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import mcs
from mcs.demo import DemoDriver
from mcs.errors import ConfigurationError
from mcs.limits import RateLimit
from mcs.policies import agents_policy


@mcs.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@mcs.tool
def echo(text: str) -> str:
    """Echo text back."""
    return text


class ChainOnly(mcs.MCSDriver):
    """A driver that implements only the bare MCS contract (no tool list)."""

    meta = mcs.DriverMeta(
        id="8a0b7f6e-1d59-4c1f-9d7e-0b3c2a1f4e5d",
        name="legacy",
        version="1.0",
        protocol="Custom",
        transport="in-process",
        spec_format="Custom",
    )

    def get_function_description(self, model_name: str | None = None) -> str:
        return "legacy: answer LEGACY <word> to shout a word"

    def get_driver_system_message(self, model_name: str | None = None) -> str:
        return self.get_function_description(model_name)

    def process_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
        if isinstance(llm_response, str) and llm_response.startswith("LEGACY "):
            return llm_response.removeprefix("LEGACY ").upper()
        return llm_response


def test_names_are_prefixed_only_where_two_drivers_collide() -> None:
    box = mcs.Toolbox({"demo": DemoDriver(), "math": mcs.FunctionDriver([add, echo], name="math")})
    names = [tool.name for tool in box.list_tools()]
    assert names == ["get_weather", "demo_add", "math_add", "echo"]


def test_each_call_is_routed_to_the_driver_that_owns_the_tool() -> None:
    box = mcs.Toolbox({"demo": DemoDriver(), "math": mcs.FunctionDriver([add], name="math")})
    assert box.process_llm_response({"tool": "math_add", "arguments": {"a": 2, "b": 3}}) == 5
    assert box.process_llm_response({"tool": "demo_add", "arguments": {"a": 0.5, "b": 1}}) == 1.5
    weather = box.process_llm_response({"tool": "get_weather", "arguments": {"city": "Tokyo"}})
    assert weather["sky"] == "clear"


def test_a_response_without_a_call_comes_back_as_the_same_object() -> None:
    box = mcs.Toolbox([DemoDriver()])
    answer = "The weather in Paris is mild."
    assert box.process_llm_response(answer) is answer


def test_bare_contract_drivers_are_chained_after_the_merged_tools() -> None:
    box = mcs.Toolbox({"demo": DemoDriver(), "legacy": ChainOnly()})
    assert box.process_llm_response("LEGACY hello") == "HELLO"
    assert "legacy: answer LEGACY" in box.get_function_description()


def test_a_toolbox_of_only_bare_contract_drivers_describes_just_them() -> None:
    box = mcs.Toolbox({"legacy": ChainOnly()})
    assert box.get_function_description() == "legacy: answer LEGACY <word> to shout a word"
    assert "legacy: answer LEGACY" in box.get_driver_system_message("claude-3-5-sonnet")
    assert "available" not in box.get_driver_system_message("claude-3-5-sonnet")


async def test_async_with_closes_each_member_with_its_own_aclose_on_the_running_loop() -> None:
    import asyncio

    closed_on: list[asyncio.AbstractEventLoop] = []

    class AsyncMember(mcs.FunctionDriver):
        async def aclose(self) -> None:
            closed_on.append(asyncio.get_running_loop())

    async with mcs.Toolbox({"math": AsyncMember([add], name="math"), "legacy": ChainOnly()}) as box:
        assert await box.acall_tool("add", {"a": 1, "b": 2}) == 3
    assert closed_on == [asyncio.get_running_loop()]


def test_toolbox_policy_runs_before_the_member_driver_and_can_deny() -> None:
    member = mcs.FunctionDriver([add], name="math")
    box = mcs.Toolbox([member])
    seen: list[str] = []

    @member.add_policy
    def member_policy(ctx: mcs.AgentContext, tool: str, args: Any) -> mcs.PolicyDecision:
        seen.append("member")
        return mcs.PolicyDecision.allow()

    @box.add_policy
    def box_policy(ctx: mcs.AgentContext, tool: str, args: Any) -> mcs.PolicyDecision:
        seen.append("box")
        return mcs.PolicyDecision.deny("read-only session") if args["a"] < 0 else mcs.PolicyDecision.allow()

    assert box.call_tool("add", {"a": 1, "b": 1}) == 2
    assert seen == ["box", "member"]
    with pytest.raises(mcs.PolicyDeniedError, match="read-only session"):
        box.call_tool("add", {"a": -1, "b": 1})
    assert seen == ["box", "member", "box"]


async def test_async_calls_route_like_sync_ones() -> None:
    box = mcs.Toolbox({"demo": DemoDriver(), "math": mcs.FunctionDriver([add], name="math")})
    result = await box.aprocess_llm_response({"tool": "math_add", "arguments": {"a": 4, "b": 5}})
    assert result == 9


def test_two_unnamed_drivers_with_the_same_name_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="pass a mapping"):
        mcs.Toolbox([DemoDriver(), DemoDriver()])


def test_from_config_builds_members_from_registered_drivers(tmp_path: Path) -> None:
    config = tmp_path / "box.json"
    config.write_text(json.dumps({"drivers": {"demo": {"driver": "functions"}}}))
    box = mcs.Toolbox.from_config(config)
    assert [t.name for t in box.list_tools()] == ["get_weather", "add"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("drivers: []", "expected a 'drivers' mapping"),
        ("drivers: {x: {spec: a.yaml}}", "drivers.x needs a 'driver' name"),
        ("drivers: [unclosed", "is not valid YAML"),
    ],
)
def test_from_config_reports_what_is_wrong_with_the_file(
    tmp_path: Path, content: str, message: str
) -> None:
    config = tmp_path / "box.yaml"
    config.write_text(content)
    with pytest.raises(ConfigurationError, match=message):
        mcs.Toolbox.from_config(config)


def test_mcs_spec_s3_prefixed_function_drivers_declare_their_prefix_and_share_a_toolbox() -> None:
    left = mcs.FunctionDriver([add], prefix="left")
    right = mcs.FunctionDriver([add], prefix="right")
    assert (left.meta.prefix, right.meta.prefix, mcs.FunctionDriver([add]).meta.prefix) == ("left", "right", None)
    box = mcs.Toolbox([left, right])
    assert set(box.members) == {"left", "right"}
    assert {t.name for t in box.list_tools()} == {"left_add", "right_add"}
    assert box.process_llm_response('{"tool": "right_add", "arguments": {"a": 2, "b": 2}}') == 4


def test_a_toolbox_file_may_name_a_driver_class_as_module_colon_class(tmp_path: Path) -> None:
    config = tmp_path / "box.yaml"
    config.write_text("drivers:\n  weather: {driver: 'mcs.demo:DemoDriver', name: meteo}\n"
                      "  math: {driver: functions}\n")
    box = mcs.Toolbox.from_config(config)
    assert box.members["weather"].meta.name == "meteo"
    assert box.process_llm_response('{"tool": "weather_add", "arguments": {"a": 1, "b": 2}}') == 3


@pytest.mark.parametrize(("target", "message"), [
    ("mcs_no_such_module:Driver", "cannot import 'mcs_no_such_module'"),
    ("mcs.demo:get_weather", "'mcs.demo:get_weather' is not an MCS driver class"),
])
def test_a_class_target_that_is_not_a_driver_is_refused(tmp_path: Path, target: str, message: str) -> None:
    config = tmp_path / "box.yaml"
    config.write_text(f"drivers:\n  x: {{driver: '{target}'}}\n")
    with pytest.raises(ConfigurationError, match=message):
        mcs.Toolbox.from_config(config)


class Shredder(mcs.MCSDriver):
    """A bare-contract driver whose one tool writes a marker file: proof that it ran."""

    meta = mcs.DriverMeta(id="5b0c1c7e-9a36-4f59-9d0e-3f7f2b1a8c44", name="shred", version="1.0",
                          protocol="Custom", transport="in-process", spec_format="Custom")

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def get_function_description(self, model_name: str | None = None) -> str:
        return 'shred: answer {"tool": "shred", "arguments": {}} to shred the records'

    def get_driver_system_message(self, model_name: str | None = None) -> str:
        return self.get_function_description(model_name)

    def process_llm_response(self, llm_response: Any, *, context: Any = None) -> Any:
        if isinstance(llm_response, str) and '"shred"' in llm_response:
            self.marker.write_text("shredded")
            return "done"
        return llm_response


@pytest.mark.parametrize("guard", ["policy", "audit hook", "rate limit"])
def test_a_toolbox_with_controls_never_lets_a_bare_member_run_a_call_they_cannot_see(
        tmp_path: Path, guard: str) -> None:
    marker = tmp_path / "MARKER"
    box = mcs.Toolbox({"math": mcs.FunctionDriver([add], name="math"), "shred": Shredder(marker)})
    audit: list[Any] = []
    if guard == "policy":
        box.add_policy(agents_policy({}))  # default deny: no agent may call anything
    elif guard == "audit hook":
        box.on_execute_end(audit.append)
    else:
        box.controls.rate_limit = RateLimit(calls=1, period=3600)
    answer = '{"tool": "shred", "arguments": {}}'
    with pytest.raises(ConfigurationError, match=r"bare-contract member.*'shred'"):
        box.process_llm_response(answer)
    with pytest.raises(ConfigurationError, match="bare-contract member"):
        asyncio.run(box.aprocess_llm_response(answer))
    assert not marker.exists() and audit == []


def test_a_toolbox_without_controls_still_chains_to_bare_members(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    box = mcs.Toolbox({"math": mcs.FunctionDriver([add], name="math"), "shred": Shredder(marker)})
    assert box.process_llm_response('{"tool": "shred", "arguments": {}}') == "done" and marker.exists()


# ----------------------------------------------------------------- hostile or mistaken files

SECRET_SCHEMA = "type: string\ndescription: TOP-SECRET-TOKEN-1234\n"
OUTSIDE_REF_SPEC = """\
openapi: 3.0.0
info: {title: pets, version: "1"}
paths:
  /pets:
    get:
      operationId: listPets
      parameters:
        - {name: tag, in: query, schema: {$ref: "../private/secret.yaml"}}
      responses: {"200": {description: ok}}
"""


def test_one_folder_written_as_text_for_a_list_option_is_refused_not_read_letter_by_letter(
    tmp_path: Path,
) -> None:
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.yaml").write_text(SECRET_SCHEMA)
    box = tmp_path / "box"
    box.mkdir()
    (box / "api.yaml").write_text(OUTSIDE_REF_SPEC)
    (box / "toolbox.yaml").write_text(
        "drivers:\n  pets:\n    driver: rest\n    spec: api.yaml\n    base_url: http://127.0.0.1:9\n"
        "    allow_external_refs: ../shared-schemas\n"  # one folder, not a list of them
    )
    done = subprocess.run([sys.executable, "-m", "mcs.cli", "describe", "-c", "box/toolbox.yaml"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert "TOP-SECRET" not in done.stdout  # its "." allowed every file under the current folder
    assert done.returncode == 2
    assert "drivers.pets: option allow_external_refs takes" in done.stderr
    assert "'../shared-schemas'" in done.stderr


def test_allowed_folders_in_a_toolbox_file_are_read_from_the_files_own_folder(tmp_path: Path) -> None:
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "secret.yaml").write_text(SECRET_SCHEMA)
    box = tmp_path / "box"
    box.mkdir()
    (box / "api.yaml").write_text(OUTSIDE_REF_SPEC)
    config = box / "toolbox.yaml"
    config.write_text("drivers:\n  pets:\n    driver: rest\n    spec: api.yaml\n    base_url: http://127.0.0.1:9\n"
                      "    allow_external_refs: [../private]\n")
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    # From this working directory "../private" would be a/private (absent): it names the
    # folder of the secret only when read from the file's folder.
    done = subprocess.run([sys.executable, "-m", "mcs.cli", "describe", "-c", str(config)],
                          cwd=elsewhere, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "listPets" in done.stdout


@pytest.mark.parametrize("line", ['validate_output: "false"', 'timeout: "5"', "timeout: 1e400"])
def test_a_quoted_boolean_or_number_in_a_toolbox_file_is_refused(tmp_path: Path, line: str) -> None:
    config = tmp_path / "box.yaml"
    config.write_text(f"drivers:\n  math: {{driver: functions}}\n{line}\n")
    with pytest.raises(ConfigurationError, match=f"option {line.split(':')[0]} takes .*not the text"):
        mcs.Toolbox.from_config(config)


@pytest.mark.parametrize("line", ["rate_limit: {calls: 1}", "controls: {policies: [deny_all]}"])
def test_an_option_only_python_can_build_is_refused_in_a_toolbox_file_at_load(tmp_path: Path, line: str) -> None:
    config = tmp_path / "box.yaml"
    config.write_text(f"drivers:\n  math: {{driver: functions}}\n{line}\n")
    with pytest.raises(ConfigurationError, match=f"option {line.split(':')[0]} takes .*which a file cannot write"):
        mcs.Toolbox.from_config(config)  # not a failure at the first call


@pytest.mark.parametrize(("suffix", "content", "message"), [
    (".yaml", "drivers:\n  math: {driver: functions}\ntimeout: 5\ntimeout: 500\n",
     "the key 'timeout' appears twice"),
    (".yaml", "drivers:\n  math: {driver: functions}\n  math: {driver: functions, name: other}\n",
     "the key 'math' appears twice"),
    (".json", '{"drivers": {"math": {"driver": "functions"}}, "timeout": 5, "timeout": 500}',
     "the key 'timeout' appears twice"),
    (".toml", 'timeout = 5\ntimeout = 500\n[drivers.math]\ndriver = "functions"\n', "not valid TOML"),
])
def test_a_key_given_twice_in_a_toolbox_file_is_refused(
    tmp_path: Path, suffix: str, content: str, message: str
) -> None:
    config = tmp_path / f"box{suffix}"
    config.write_text(content)
    with pytest.raises(ConfigurationError, match=message):
        mcs.Toolbox.from_config(config)


def test_yaml_merge_keys_may_still_be_overridden_in_a_toolbox_file(tmp_path: Path) -> None:
    config = tmp_path / "box.yaml"
    config.write_text("drivers:\n  a: &base {driver: functions, timeout: 3}\n"
                      "  b:\n    <<: *base\n    timeout: 4\n")
    box = mcs.Toolbox.from_config(config)
    assert {key: member.timeout for key, member in box.members.items()} == {"a": 3, "b": 4}


def test_python_tags_in_a_toolbox_file_are_refused_and_run_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "MARKER"
    config = tmp_path / "box.yaml"
    config.write_text(f"drivers: !!python/object/apply:os.system ['touch {marker}']\n")
    with pytest.raises(ConfigurationError, match="is not valid YAML"):
        mcs.Toolbox.from_config(config)
    assert not marker.exists()
