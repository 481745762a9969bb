"""generator/safe_text.py: each format's escaping, with the expected text worked out from the
format's own rules (rich markup, ECMA-48 controls, CommonMark/GFM, XML 1.0, Prometheus text format)."""

from __future__ import annotations

import io
import json
import re
from xml.etree import ElementTree as ET

import pytest
from rich.console import Console

from generator.safe_text import (
    for_terminal,
    json_safe,
    markdown_cell,
    markdown_code,
    markdown_text,
    prometheus_label,
    terminal_text,
    xml_text,
)


@pytest.mark.parametrize("raw, shown", [
    ("\x1b[31mred", "\\x1b[31mred"),                      # CSI: ESC shown, the rest is harmless text
    ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),       # OSC 52 (clipboard write) ended by BEL
    ("\x9b2J", "\\x9b2J"),                                 # C1 CSI, one byte
    ("a\x00b\x7fc", "a\\x00b\\x7fc"),
    ("one\ntwo\rthree\tfour", "one\\x0atwo\\x0dthree\\x09four"),
    ("\u202eabc", "\\u202eabc"),                           # right-to-left override
    ("x\ud800y", "x\\ud800y"),                             # lone surrogate: UTF-8 cannot carry it
    ("gpu-01 é 日本 [/]x", "gpu-01 é 日本 [/]x"),          # printable text, markup included, unchanged
])
def test_for_terminal_shows_every_control_character(raw, shown):
    assert for_terminal(raw) == shown


def test_terminal_text_is_never_markup():
    buffer = io.StringIO()
    console = Console(file=buffer, width=200, no_color=True, highlight=False, emoji=False)
    console.print(terminal_text("[/]x [link=http://x]y[/link] [bold]b[/bold] \x1b[31m"))
    assert buffer.getvalue() == "[/]x [link=http://x]y[/link] [bold]b[/bold] \\x1b[31m\n"


@pytest.mark.parametrize("raw, escaped", [
    ("a|b", "a&#124;b"),
    ("`x`", "&#96;x&#96;"),
    ("<script>&amp;", "&lt;script&gt;&amp;amp;"),
    ("*b* _i_ ~s~ [l](http://x) #1", "\\*b\\* \\_i\\_ \\~s\\~ \\[l\\](http://x) \\#&#8203;1"),
    # GitHub: no mention of a user or team, no link to issue 123 from a device's text
    ("ask @octocat or @org/team about #123", "ask @&#8203;octocat or @&#8203;org/team about \\#&#8203;123"),
    ("c:\\path", "c:\\\\path"),
    ("two\nlines", "two\\\\x0alines"),        # newline shown as \x0a, its backslash escaped for markdown
])
def test_markdown_text(raw, escaped):
    assert markdown_text(raw) == escaped
    assert markdown_cell(raw) == escaped


def test_markdown_code_wraps_escaped_text_and_leaves_empty_cells_empty():
    assert markdown_code("x|`y`") == "<code>x&#124;&#96;y&#96;</code>"
    assert markdown_code("") == ""


@pytest.mark.parametrize("raw, escaped", [
    ("nul\x00", "nul\\x00"),
    ("esc\x1b[31m", "esc\\x1b[31m"),
    ("tab\tand\nnewline", "tab\tand\nnewline"),            # XML 1.0 Char includes #x9 and #xA
    ("x\ud800", "x\\ud800"),
    ("\ufffe\uffff", "\\ufffe\\uffff"),                    # not XML 1.0 Chars
    ("del\x7f c1\x85", "del\\x7f c1\\x85"),                # discouraged (XML 1.0 section 2.2)
    ('<a href="x">&]]>', '<a href="x">&]]>'),              # left to ElementTree's serializer
])
def test_xml_text(raw, escaped):
    assert xml_text(raw) == escaped


def test_xml_text_survives_a_serialize_parse_round_trip():
    raw = '<x a="1">&amp; ]]> \x00\x1b\x0c \ud800 \t\n'
    element = ET.Element("testcase", name=xml_text(raw))
    element.text = xml_text(raw)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode").encode("utf-8"))
    assert parsed.get("name") == '<x a="1">&amp; ]]> \\x00\\x1b\\x0c \\ud800 \t\n'
    assert parsed.text == '<x a="1">&amp; ]]> \\x00\\x1b\\x0c \\ud800 \t\n'


# The label-value grammar of the text exposition format: any UTF-8 except an unescaped `\`,
# `"` or line feed; the escapes are \\, \" and \n and nothing else.
LABEL_VALUE = re.compile(r'(?:[^"\\\n]|\\[\\"n])*')


@pytest.mark.parametrize("raw, escaped", [
    ('a\\b"c\nd', 'a\\\\b\\"c\\nd'),
    ("esc\x1b[31m", "esc\\\\x1b[31m"),      # shown as \x1b, its backslash escaped so the parser reads it
    ("x\ud800", "x\\\\ud800"),
    ("leaf-1 日本", "leaf-1 日本"),
])
def test_prometheus_label(raw, escaped):
    assert prometheus_label(raw) == escaped
    assert LABEL_VALUE.fullmatch(escaped)
    escaped.encode("utf-8")


def test_json_safe_replaces_lone_surrogates_in_keys_and_values_only():
    doc = {"k\udcff": ["v\ud800", 1, None, {"esc": "\x1b"}], "ok": ("a", 2.5)}
    clean = json_safe(doc)
    assert clean == {"k\\udcff": ["v\\ud800", 1, None, {"esc": "\x1b"}], "ok": ["a", 2.5]}
    text = json.dumps(clean, ensure_ascii=False)
    text.encode("utf-8")                       # would raise on a lone surrogate
    assert json.loads(text)["ok"] == ["a", 2.5]
