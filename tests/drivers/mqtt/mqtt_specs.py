"""The AsyncAPI documents and broker users the MQTT tests share (imported by name, so that
test folders never import one another's ``conftest``)."""

from __future__ import annotations

from pathlib import Path

SPECS = Path(__file__).resolve().parent / "specs"
LIGHTS = SPECS / "lights.yaml"
PLANT = SPECS / "plant.yaml"
USERS = {"operator": "s3cret-pass"}
