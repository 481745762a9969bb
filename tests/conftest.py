"""Shared test helpers: paths of the examples and of ../shared reference data."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
EXAMPLES = ("small", "medium", "large")


def example(name: str) -> Path:
    return REPO / "inventories" / name / "fabric.yaml"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"reference material not found at {SHARED}")
    return SHARED
