"""Fixtures of the security suite: hostile peers on loopback, drivers pointed at them.

Each test module covers one letter of SECURITY.md; each case id (A1 ... G4) has one test
or one table named after it. Cases that cannot apply yet are marked with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support.hostile import HostilePeer


@pytest.fixture
def peer() -> Iterator[HostilePeer]:
    with HostilePeer() as hostile:
        yield hostile


@pytest.fixture
def write_yaml(tmp_path: Path) -> Callable[[Any], Path]:
    counter = iter(range(1000))

    def write(data: Any) -> Path:
        path = tmp_path / f"file-{next(counter)}.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    return write


@pytest.fixture(scope="session")
def mcp_sample_url() -> Iterator[str]:
    """``mcs serve``'s MCP app over the serving tests' sample driver, on loopback."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "drivers" / "mcp" / "serving"))
    from serving_helpers import SampleDriver
    from serving_support import serve_driver

    with serve_driver(SampleDriver()) as url:
        yield url


@pytest.fixture(scope="session")
def grpc_lab() -> Iterator[Any]:
    """The gRPC driver's lab server (tests/drivers/grpc): limits, slow and flaky methods."""
    pytest.importorskip("mcs_grpc", reason="needs the gRPC driver (pip install mcs-framework-grpc)")
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "drivers" / "grpc"))
    from grpc_servers import lab_servicer, serve

    with serve([lab_servicer]) as running:
        yield running
