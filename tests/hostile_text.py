"""Hostile strings a device, a host, a log file or an intent can carry, and the checks every
report format must pass with them (issue 25 item 2). Shared by the report unit tests and the
lab tests that put the strings into a port description or an LLDP neighbour name."""

from __future__ import annotations

import json
import re
from xml.etree import ElementTree as ET

HOSTILE = (
    "[/]x",                                        # rich: closing tag with nothing open -> MarkupError
    "[link=http://x]y[/link]",                     # rich: a hyperlink
    "\x1b[31mred\x1b[0m",                          # ANSI CSI: colours the terminal
    "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\",    # OSC 8 hyperlink
    "\x1b]52;c;aGk=\x07",                          # OSC 52: writes the clipboard
    "\x9b2J",                                      # C1 CSI: clears a VT220-style screen
    "nul\x00byte",
    "<script>alert(1)</script>",
    "]]>",
    "a & b \"q\" 'a' <x/>",
    "`code` | pipe",
    "two\nlines",
    "\u202eevil",
    "lone \ud800 surrogate",
)

# Nothing a terminal acts on: C0 (newline aside: it ends report lines), DEL, C1, lone
# surrogates, bidi overrides.
TERMINAL_UNSAFE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
# The tags our markdown writes itself; any other `<` would be HTML a step summary renders.
OUR_TAGS = re.compile(r"</?(?:code|details|summary)>")
# Text exposition format, one sample: name{label="value",...} number
LABEL_VALUE = r'"(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*\{[a-zA-Z_]\w*=" + LABEL_VALUE
                    + r"(?:,[a-zA-Z_]\w*=" + LABEL_VALUE + r")*\} -?[0-9.e+]+")


def assert_terminal_clean(text: str) -> None:
    bad = TERMINAL_UNSAFE.findall(text)
    assert not bad, f"raw control characters reach the terminal: {bad!r}"
    text.encode("utf-8")                 # printable on a UTF-8 terminal without an error


def assert_markdown_intact(text: str) -> None:
    assert_terminal_clean(text)
    assert "<" not in OUR_TAGS.sub("", text), "raw HTML in markdown"
    assert "`" not in text, "a backtick can open a code span"
    block: list[str] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            block.append(line)
            continue
        if block:
            columns = {row.count("|") for row in block}
            assert len(columns) == 1, f"a table row with a different column count: {block}"
            block = []


def assert_junit_well_formed(text: str) -> ET.Element:
    from lxml import etree

    etree.fromstring(text.encode("utf-8"))             # libxml2: strict XML 1.0
    root = ET.fromstring(text.encode("utf-8"))
    suites = [s.get("name") for s in root.iter("testsuite")]
    assert len(suites) == len(set(suites)), f"one testsuite per check: {suites}"
    for suite in root.iter("testsuite"):
        names = [c.get("name") for c in suite.iter("testcase")]
        assert len(names) == len(set(names)), f"testcase names repeat in {suite.get('name')}: {names}"
    return root


def assert_prometheus_parses(text: str) -> None:
    text.encode("utf-8")
    for line in text.splitlines():
        if line.startswith("# "):
            continue
        assert SAMPLE.fullmatch(line), f"not an exposition-format sample: {line!r}"


def assert_json_clean(text: str) -> object:
    doc = json.loads(text)
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            node.encode("utf-8")                       # a lone surrogate would raise
        elif isinstance(node, dict):
            stack += [*node.keys(), *node.values()]
        elif isinstance(node, list):
            stack += node
    return doc
