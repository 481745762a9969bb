"""The live Nautobot of the sot tests: one server per test run, shared by every test that asks for it.

    pytestmark = pytest.mark.xdist_group("nautobot")   # `make test` (--dist loadgroup): one worker,
                                                       # so one server per run
    def test_push(nautobot):
        fabric = nautobot.fresh_fabric("medium")       # the test's own Location / fabricgen:<fabric> tag
        requests.get(f"{nautobot.url}/api/dcim/devices/", headers=nautobot.headers)

Without PostgreSQL, redis-server or .venv-nautobot the fixture skips saying what is missing, except
under FABRICGEN_REQUIRE_NAUTOBOT=1 (.ci/run sets it), where it fails: CI never skips these silently.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.nautobot_service import NautobotService, ServiceError, find_tools, start

REQUIRE_ENV = "FABRICGEN_REQUIRE_NAUTOBOT"
# A first run migrates an empty database (minutes on a busy 2-core machine) inside the setup of
# whichever test asks first: that test gets this budget instead of pyproject.toml's 600 s.
FIRST_START_TIMEOUT = 1800


@pytest.fixture(scope="session")
def nautobot() -> Iterator[NautobotService]:
    tools = find_tools()
    if isinstance(tools, str):
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {tools}", pytrace=False)
        pytest.skip(tools)
    # under /tmp, not pytest's tmp_path: that one is 0700 root's, closed to the `postgres` user
    state_dir = Path(tempfile.mkdtemp(prefix="fabricgen-nautobot-"))
    try:
        service = start(state_dir, tools)
    except ServiceError as exc:
        pytest.fail(f"live Nautobot did not start: {exc}", pytrace=False)
    try:
        yield service
    finally:
        service.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of the server runs in the worker holding it (the group mark, in case a module
    lacks it; tryfirst: before pytest-xdist reads the marks) and may pay for its first start."""
    for item in items:
        if "nautobot" not in getattr(item, "fixturenames", ()):
            continue
        if not any(m.args[:1] == ("nautobot",) for m in item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group("nautobot"))
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(FIRST_START_TIMEOUT))
