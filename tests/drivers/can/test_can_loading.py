"""Every database of the corpus loads (strictly, or leniently naming what it left out), and a
database's multiplexing, choices, scaling, units, ranges and comments reach the tools."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import cantools
import pytest
from can_support import DBC_CORPUS, DEMO_DBC
from mcs_can import CanDriver

from mcs.errors import ConfigurationError
from mcs.validation import compile_validator


def _corpus_files() -> list[Path]:
    return sorted(DBC_CORPUS.rglob("*.dbc")) if DBC_CORPUS.is_dir() else []


#: Files cantools refuses strictly, and the reason it gives (each loads with strict=False).
STRICT_FAILURES = {
    "hyundai_i30_2014.dbc": "overlapping",
    "tesla_can.dbc": "unused VAL_ entries",
    "toyota_2017_ref_pt.dbc": "is more than 11 bits",
    "vw_mqb.dbc": "overlapping",
}
FILES = _corpus_files()


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_corpus_database_loads_and_every_tool_schema_compiles(corpus: Path, path: Path, make_driver) -> None:
    strict = path.name not in STRICT_FAILURES
    driver = make_driver(path, strict=strict, send_tools="all", fd=True)
    tools = driver.list_tools()
    assert tools
    for tool in tools:
        compile_validator(tool.input_schema, tool=tool.name)
        json.dumps(dict(tool.input_schema))
    sends = {t.meta["message"] for t in tools if t.meta.get("kind") == "send"}
    assert sends == {m.name for m in driver.database.messages} - set(driver.database.unchecked)
    assert bool(driver.skipped) is not strict


@pytest.mark.parametrize("name", sorted(STRICT_FAILURES))
def test_a_database_cantools_refuses_strictly_names_the_file_the_reason_and_the_way_out(
    corpus: Path, name: str, channel: str
) -> None:
    with pytest.raises(ConfigurationError) as info:
        CanDriver(DBC_CORPUS / "opendbc" / name, channel=channel)
    message = str(info.value)
    assert name in message and STRICT_FAILURES[name] in message and "strict=False" in message


def test_toyota_leniently_leaves_out_every_message_whose_id_does_not_fit_and_names_each(corpus, make_driver) -> None:
    path = DBC_CORPUS / "opendbc" / "toyota_2017_ref_pt.dbc"
    driver = make_driver(path, strict=False)
    bad = [line for line in path.read_text(encoding="cp1252").splitlines()
           if line.startswith("BO_ ") and int(line.split()[1]) & 0x7FFFFFFF > 0x7FF and not int(line.split()[1]) & 0x80000000]
    assert len(bad) == 32
    assert len(driver.skipped) == 32
    for line in bad:
        name = line.split()[2].rstrip(":")
        assert any(s.startswith(f"message {name} (BO_ {line.split()[1]})") and "does not fit 11 bits" in s
                   for s in driver.skipped)
    assert len(driver.database.messages) == 143 - 32
    assert driver.get_status()["database_skipped"] == 32


def test_tesla_leniently_leaves_out_the_value_table_of_a_signal_that_does_not_exist(corpus, make_driver) -> None:
    driver = make_driver(DBC_CORPUS / "opendbc" / "tesla_can.dbc", strict=False)
    assert driver.skipped == (
        "VAL_ 568 UI_mapSpeedLimit: message 568 has no signal UI_mapSpeedLimit; value table left out",
    )
    assert "UI_driverAssistRoadSign" in {m.name for m in driver.database.messages}


@pytest.mark.parametrize(("name", "message"), [("hyundai_i30_2014.dbc", "EMS2"), ("vw_mqb.dbc", "PLA_01")])
def test_a_message_with_overlapping_signals_is_decoded_but_gets_no_send_tool(corpus, make_driver, name, message) -> None:
    driver = make_driver(DBC_CORPUS / "opendbc" / name, strict=False, send_tools="all")
    assert message in driver.database.unchecked
    assert any(line.startswith(f"message {message}: ") and "overlapping" in line for line in driver.skipped)
    sends = {t.meta["message"] for t in driver.list_tools() if t.meta.get("kind") == "send"}
    assert message not in sends
    read = driver.get_tool("read")
    assert read is not None and message in read.input_schema["properties"]["message"]["enum"]
    with pytest.raises(ConfigurationError, match="strict"):
        make_driver(DBC_CORPUS / "opendbc" / name, strict=False, allow_send=[message], send_tools="all").list_tools()


def test_the_schema_keeps_units_ranges_scaling_choices_and_comments(make_driver) -> None:
    driver = make_driver(allow_send=["CruiseCommand"])
    schema = driver.get_tool("send_CruiseCommand").input_schema
    props = schema["properties"]
    assert props["TargetSpeed"] == {"type": "integer", "minimum": 0, "maximum": 200,
                                    "description": "Cruise control set speed. [km/h]"}
    assert props["Mode"] == {"type": "string", "enum": ["Off", "Standby", "Active", "Override"]}
    assert props["Acceleration"]["type"] == "number"
    assert (props["Acceleration"]["minimum"], props["Acceleration"]["maximum"]) == (-5, 3)
    assert "m/s^2" in props["Acceleration"]["description"] and "resolution 0.001" in props["Acceleration"]["description"]
    assert schema["required"] == ["TargetSpeed", "Mode", "Acceleration"]
    assert schema["additionalProperties"] is False
    tool = driver.get_tool("send_CruiseCommand")
    assert "Cruise control request to the engine ECU." in tool.description and "0x200" in tool.description
    assert tool.annotations["destructiveHint"] is True and tool.annotations["readOnlyHint"] is False
    assert driver.get_tool("read").annotations["readOnlyHint"] is True


def test_a_multiplexed_message_takes_its_multiplexer_and_notes_each_branch(make_driver) -> None:
    driver = make_driver(allow_send=["DiagnosticRequest"])
    schema = driver.get_tool("send_DiagnosticRequest").input_schema
    assert schema["required"] == ["Service"]
    assert schema["properties"]["Service"]["enum"] == ["ReadDataByIdentifier", "EcuReset", 17, 34]
    assert schema["properties"]["ResetType"]["description"] == "Only when Service is 17 (EcuReset)."
    # ResetType's choices do not name 0, so a number stays possible beside the names.
    assert schema["properties"]["ResetType"]["anyOf"][0]["enum"] == ["Hard", "KeyOffOn", "Soft"]


def test_cantools_multiplexed_corpus_file_keeps_its_branches(corpus, make_driver) -> None:
    driver = make_driver(DBC_CORPUS / "cantools" / "multiplex_choices.dbc", send_tools="all")
    schema = driver.get_tool("send_Message1").input_schema
    assert schema["properties"]["Multiplexor"]["enum"] == ["MULTIPLEXOR_8", "MULTIPLEXOR_16", "MULTIPLEXOR_24", 8, 16, 24]
    assert schema["properties"]["BIT_A"]["description"] == "Only when Multiplexor is 24 (MULTIPLEXOR_24)."
    assert schema["properties"]["BIT_L"]["description"].startswith("Only when Multiplexor is 8 (MULTIPLEXOR_8)")


def test_kcd_and_sym_files_load_as_cantools_reads_them(tmp_path: Path, make_driver) -> None:
    db = cantools.database.load_file(str(DEMO_DBC))
    (tmp_path / "demo.kcd").write_text(db.as_kcd_string(), encoding="utf-8")
    (tmp_path / "demo.sym").write_text(db.as_sym_string(), encoding="cp1252")
    for name, fmt in (("demo.kcd", "KCD"), ("demo.sym", "SYM")):
        driver = make_driver(tmp_path / name, allow_send=["CruiseCommand"])
        assert driver.meta.spec_format == fmt
        assert driver.get_tool("send_CruiseCommand").input_schema["properties"]["TargetSpeed"]["maximum"] == 200


def test_a_cantools_database_object_is_accepted(make_driver) -> None:
    driver = make_driver(cantools.database.load_file(str(DEMO_DBC)), allow_send=["CruiseCommand"])
    assert driver.get_tool("send_CruiseCommand") is not None


@pytest.mark.parametrize(("content", "suffix", "expected"), [
    ("VERSION \"\"\nBO_ 1 Broken 8 X\n SG_ oops\n", ".dbc", "line"),
    ("<AUTOSAR><not-closed>", ".arxml", "demo.arxml"),
    ("whatever", ".txt", "unknown format 'txt'"),
])
def test_a_broken_or_unknown_file_is_a_configuration_error_naming_it(tmp_path, channel, content, suffix, expected) -> None:
    path = tmp_path / f"demo{suffix}"
    path.write_text(content)
    with pytest.raises(ConfigurationError) as info:
        CanDriver(path, channel=channel)
    assert str(path.name) in str(info.value) and expected in str(info.value)


def test_a_missing_file_is_a_configuration_error(channel) -> None:
    with pytest.raises(ConfigurationError, match="does not exist"):
        CanDriver("no/such/file.dbc", channel=channel)


@pytest.mark.parametrize(("options", "text"), [
    ({"allow_send": ["NoSuchMessage"]}, "NoSuchMessage"),
    ({"allow_send": [0x7FF]}, "no message of the database uses"),
    ({"limits": {"CruiseCommand.Nope": {"maximum": 1}}}, "CruiseCommand.Nope"),
    ({"limits": {"CruiseCommand.TargetSpeed": {"maxi": 1}}}, "no setting 'maxi'"),
    ({"limits": {"CruiseCommand.TargetSpeed": {"minimum": 5, "maximum": 1}}}, "above its maximum"),
    ({"high_risk": ["Nope"]}, "high_risk"),
    ({"tx_rate_limit": 0}, "tx_rate_limit"),
    ({"watchdog_timeout": float("inf")}, "watchdog_timeout"),  # its thread died and close() raised
    ({"watchdog_timeout": float("nan")}, "watchdog_timeout"),
    ({"watchdog_timeout": 0}, "watchdog_timeout"),
    ({"max_wait_s": float("inf")}, "max_wait_s"),  # a schema maximum JSON cannot carry
    ({"monitor_max_seconds": float("inf")}, "monitor_max_seconds"),
    ({"allow_send": [{"arbitration_id": 0x300, "is_extended_id": "false"}]}, "is_extended_id"),  # was True
    ({"allow_send": [{"arbitration_id": "0x300"}]}, "arbitration_id"),
    ({"allow_send": [{"arbitration_id": 0x300, "dlc": 2.5}]}, "dlc"),
    ({"send_tools": "some"}, "send_tools"),
    ({"bogus": 1}, "no option 'bogus'"),
    ({"interface": "no-such-interface"}, "cannot open the CAN bus"),
])
def test_bad_options_are_configuration_errors_that_say_what_is_allowed(channel, options, text) -> None:
    with pytest.raises(ConfigurationError) as info:
        CanDriver(DEMO_DBC, channel=channel, **options)
    assert text in str(info.value)


HIDDEN = "\u200b\u202e\U000e0049\U000e0047\U000e004e\U000e004f\U000e0052\U000e0045"  # zero-width, bidi, "IGNORE" in tag characters


def test_comments_carry_no_invisible_characters_into_descriptions(tmp_path: Path, make_driver) -> None:
    text = DEMO_DBC.read_text(encoding="utf-8")
    text = text.replace('"Cruise control set speed."', f'"Cruise control{HIDDEN} set speed."')
    text = text.replace('"Cruise control request to the engine ECU."', f'"Cruise control request{HIDDEN} to the engine ECU."')
    assert HIDDEN in text
    (tmp_path / "hidden.dbc").write_text(text, encoding="utf-8")
    driver = make_driver(tmp_path / "hidden.dbc", encoding="utf-8", allow_send=["CruiseCommand"])
    tool = driver.get_tool("send_CruiseCommand")
    shown = [tool.description, json.dumps(tool.input_schema, ensure_ascii=False), driver.get_function_description()]
    assert "Cruise control request to the engine ECU." in shown[0] and "Cruise control set speed." in shown[1]
    assert [[f"U+{ord(c):04X}" for c in s if unicodedata.category(c) == "Cf"] for s in shown] == [[], [], []]
