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
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.support.nautobot_service import NautobotService, ServiceError, find_tools, running

REQUIRE_ENV = "FABRICGEN_REQUIRE_NAUTOBOT"


def _serve(apps: tuple[str, ...] = ()) -> Iterator[NautobotService]:
    tools = find_tools()
    if isinstance(tools, str):
        if os.environ.get(REQUIRE_ENV) == "1":
            pytest.fail(f"{REQUIRE_ENV}=1 but {tools}", pytrace=False)
        pytest.skip(tools)
    server = ExitStack()
    try:
        service = server.enter_context(running(tools, apps=apps))
    except ServiceError as exc:
        pytest.fail(f"live Nautobot did not start: {exc}", pytrace=False)
    with server:
        yield service


@pytest.fixture(scope="session")
def nautobot() -> Iterator[NautobotService]:
    yield from _serve()


@pytest.fixture(scope="session")
def nautobot_bgp() -> Iterator[NautobotService]:
    """A second server on the same migrated database, serving the nautobot-bgp-models app."""
    yield from _serve(("nautobot_bgp_models",))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test of the server runs in the worker holding it (the group mark, in case a module
    lacks it; tryfirst: before pytest-xdist reads the marks). A first run migrates an empty
    database (12-24 min on a busy 2-core machine) in the setup of whichever test asks first: the
    test's timeout counts its own body only (func_only), and the service bounds each of its steps."""
    for item in items:
        if not {"nautobot", "nautobot_bgp"} & set(getattr(item, "fixturenames", ())):
            continue
        if not any(m.args[:1] == ("nautobot",) for m in item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group("nautobot"))
        if item.get_closest_marker("timeout") is None:
            timeout = item.config.getini("timeout")
            item.add_marker(pytest.mark.timeout(float(timeout) if timeout else 0, func_only=True))
