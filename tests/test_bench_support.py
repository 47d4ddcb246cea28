"""The benchmark harness tells the truth: goals are checked and recorded with their verdict,
and a child's peak memory is its own, not the benchmark's (issue 21, items 1 and 5)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from bench import _support


@pytest.fixture
def figures(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, object]]:
    recorded: list[dict[str, object]] = []
    monkeypatch.setattr(_support, "FIGURES", recorded)
    monkeypatch.setitem(_support.CURRENT, "bench", "demo")
    return recorded


def test_check_prints_the_goal_beside_the_verdict_and_records_both(figures: list[dict[str, object]]) -> None:
    assert _support.check("latency", 12.0, 20.0, unit="µs", item="7") == "(goal <= 20 µs) ok"
    assert _support.check("recall", 98.5, 99.0, unit="%", kind="at least") == "(goal >= 99 %) OVER"
    assert _support.check("ratio", 1.2, 1.0) == "(goal <= 1x) OVER"
    assert [(f["bench"], f["name"], f["ok"]) for f in figures] == [
        ("demo", "latency", True), ("demo", "recall", False), ("demo", "ratio", False)]
    assert figures[0]["item"] == "7" and "item" not in figures[1]


def test_a_figure_without_a_goal_says_so_and_is_recorded_never_over(figures: list[dict[str, object]]) -> None:
    assert _support.no_goal("load, peak RSS", 61.24, unit="MB") == "(no goal)"
    assert _support.check("latency", 30.0, 20.0, unit="µs") == "(goal <= 20 µs) OVER"
    assert [(f["name"], f["value"], f["goal"], f["unit"], f["ok"]) for f in figures] == [
        ("load, peak RSS", 61.24, None, "MB", True), ("latency", 30.0, 20.0, "µs", False)]


def test_a_child_measured_from_outside_reports_its_own_peak_not_the_benchmarks() -> None:
    ballast = bytearray(96 * 1024 * 1024)  # raise this process's high-water mark well above a small child's
    ballast[::4096] = b"x" * len(ballast[::4096])
    code, out, _, measured = _support.run_measured(
        [sys.executable, "-c", "b = bytearray(40 * 1024 * 1024); b[::4096] = b'y' * len(b[::4096]); print('done')"])
    del ballast
    assert code == 0 and out.strip() == "done"
    assert 40 <= measured["peak_rss_mb"] < 90, measured  # its 40 MB and an interpreter, not our 96 MB+
    assert measured["cpu_s"] > 0 and measured["wall_s"] > 0


def test_measured_children_cache_their_bytecode_even_where_the_environment_forbids_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "timed_module.py").write_text("VALUE = 42\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    argv = [sys.executable, "-c", "import timed_module, sys; print(timed_module.VALUE, sys.dont_write_bytecode)"]

    code, out, _, _ = _support.run_measured(argv, cwd=tmp_path, env=dict(os.environ))
    assert (code, out.split()) == (0, ["42", "True"])
    assert not (tmp_path / "__pycache__").exists()  # as inherited: compiled again by every child

    code, out, _, _ = _support.run_measured(argv, cwd=tmp_path)  # the default: bytecode_cached_env()
    assert (code, out.split()) == (0, ["42", "False"])
    assert [p.name.split(".")[0] for p in (tmp_path / "__pycache__").glob("*.pyc")] == ["timed_module"]
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1"  # the benchmark's own environment is left alone


def test_no_benchmark_judges_a_goal_by_hand_so_the_summary_holds_every_verdict() -> None:
    import re
    from pathlib import Path

    here = Path(_support.__file__).parent
    verdict = re.compile(r"""(['"])\s*ok\1\s+if\b""")  # `'ok' if ratio <= bar else 'OVER'`
    by_hand = [path.name for path in sorted(here.glob("*.py"))
               if path.name != "_support.py" and verdict.search(path.read_text(encoding="utf-8"))]
    assert by_hand == [], f"{by_hand} print a verdict without bench._support.check, so the summary misses it"
