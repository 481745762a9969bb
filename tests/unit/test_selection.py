"""--only / --limit: one selection for deploy, drift and verify (generator/common/selection.py)."""

from types import SimpleNamespace

from generator.common.selection import limited, matching, no_match

PLAN = SimpleNamespace(fabric="dt", switches=[SimpleNamespace(name=n) for n in ("leaf-1", "leaf-2", "spine-1")],
                       hosts=[SimpleNamespace(name="gpu-1")])


def test_limit_is_a_case_sensitive_glob_keeping_order():
    assert matching(["leaf-2", "leaf-1", "Leaf-3"], "leaf-*") == ["leaf-2", "leaf-1"]
    assert matching(["b", "a"], None) == ["b", "a"]


def test_only_and_limit_together():
    assert limited(PLAN, None, "*-1") == (["leaf-1", "spine-1"], ["gpu-1"])
    assert limited(PLAN, "hosts", None) == ([], ["gpu-1"])
    assert limited(PLAN, "switches", "gpu*") == ([], [])


def test_nothing_left_is_one_error_line():
    assert no_match(PLAN, "switches", "gpu*", [], []) == "error: --limit 'gpu*' matches no switches of fabric dt"
    assert no_match(PLAN, None, None, [], []) is None
