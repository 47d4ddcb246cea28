"""The shipped templates travel inside the core wheel and render from an installed copy."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.wheels import REPO, build_core_wheel, new_venv, pip_install, uv

# Runs inside the fresh virtual environment: everything it prints comes from the wheel.
RENDER_EVERY_TEMPLATE = r"""
import json, sys
import mcs, mcs.prompts as prompts

@mcs.tool
def add(a: int, b: int) -> int:
    "Add two integers."
    return a + b

driver = mcs.FunctionDriver([add])
registry = prompts.default_registry()
rendered = {}
for template in registry:
    model = next(g for g in template.globs).replace("*", "x").replace("?", "x")
    assert registry.select(model) is template or template.name == "default", (template.name, model)
    rendered[template.name] = prompts.render_system_message(
        function_description=driver.get_function_description(model),
        model_name=model, driver_name="wheel-check", registry=registry,
    )
print(json.dumps({
    "mcs_file": mcs.__file__,
    "templates_dir": str(prompts.shipped_templates()),
    "rendered": rendered,
}))
"""


def _install(wheel: Path, env: Path) -> Path:
    python = new_venv(env)
    done = pip_install(python, [str(wheel)])
    assert done.returncode == 0, done.stderr
    return python


def test_every_shipped_template_renders_from_an_installed_wheel(tmp_path: Path) -> None:
    wheel = build_core_wheel(tmp_path / "dist")
    python = _install(wheel, tmp_path / "venv")
    result = subprocess.run(
        [str(python), "-I", "-c", RENDER_EVERY_TEMPLATE],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    installed = Path(report["mcs_file"]).resolve()
    assert (tmp_path / "venv").resolve() in installed.parents, "mcs was imported from the source tree"
    assert Path(report["templates_dir"]).name == "_prompts"
    # shipped templates are named after their files (checked in test_prompt_templates)
    assert set(report["rendered"]) == {p.stem for p in (REPO / "prompts").glob("*.md")}
    for name, text in report["rendered"].items():
        assert "add" in text and "Add two integers." in text, name
        assert "{function_description}" not in text and "{call_example}" not in text, name


@pytest.fixture(autouse=True)
def _needs_a_build_tool() -> None:
    if uv() is None:
        pytest.importorskip("build", reason="needs uv or the 'build' package to build the wheel")
