"""Unit-test scheduling under pytest-xdist (`make test`, `make test-quick`: --dist loadgroup)."""

from __future__ import annotations

import pytest

# Modules whose tests take a Cumulus release as their `version` parameter and judge documents
# against NVIDIA's object model of that release: importing one release's generated models takes
# 0.5-1.5 s (nvueschema builds thousands of pydantic classes), and handed out one test at a time
# every worker imported most releases. Grouped by release, each worker imports the few it runs.
_BY_RELEASE = {"test_nvue_model.py", "test_nvue_paths.py"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """tryfirst: the group mark must be there before pytest-xdist reads the marks."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.path.name in _BY_RELEASE and isinstance(params.get("version"), str):
            item.add_marker(pytest.mark.xdist_group(f"nvue-model-{params['version']}"))
