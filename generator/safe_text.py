"""Text from a device, a host, a log or the intent, made safe for the format it lands in.

A port description, an LLDP system name or an NCCL log line is not ours: it can hold rich
markup (`[/]x` raises MarkupError, `[link=...]` becomes a hyperlink), terminal escape
sequences (ESC [ 31 m recolours the terminal, OSC 52 writes the clipboard), characters XML
cannot carry, or a backtick and a pipe that break out of a markdown table (issue 25). Every
report routes such text through the one function for its format:

    for_terminal / terminal_text   rich tables and lines on a terminal
    markdown_text / markdown_cell  GitHub markdown (step summary, PR comment)
    xml_text                       JUnit XML (ElementTree does the XML escaping)
    prometheus_label               a label value in the Prometheus text format
    json_safe                      a document for json.dumps

Control characters are never dropped silently: they are shown as a Python-style escape
(ESC as `\\x1b`), so a reader sees that the device printed something odd.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls, DEL, C1 controls (0x9b is a one-byte CSI to a VT220-style terminal), lone
# surrogates (not encodable as UTF-8) and the Unicode bidirectional overrides/isolates, which
# reorder what a terminal or browser shows (CVE-2021-42574, "Trojan Source").
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
# Characters XML 1.0 cannot carry at all (XML 1.0 section 2.2, production [2] Char) plus the
# ones it discourages (DEL, C1, same section) and the bidi controls; tab and newline stay (CR
# does not: a parser reads it back as a newline, XML 1.0 section 2.11).
_XML_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069\ufffe\uffff]")
# A label value's backslash and double quote, and everything _UNSAFE (line feed included).
_PROMETHEUS = re.compile('[\\\\"]|' + _UNSAFE.pattern)
# Lone surrogates: Python strings can hold them (json.loads("\"\\ud800\"")), UTF-8 cannot.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def for_terminal(value: object) -> str:
    """One line for a terminal: every control character (ESC, so no CSI or OSC sequence; BEL,
    CR, newline), lone surrogate and bidi control shown as an escape. Still rich markup: print
    it with markup=False or as terminal_text()."""
    return _UNSAFE.sub(_escape, str(value))


def terminal_text(value: object, style: str = ""):
    """A rich Text cell or title: never parsed as markup, control characters shown escaped."""
    from rich.text import Text

    return Text(for_terminal(value), style=style)


# CommonMark lets any ASCII punctuation be backslash-escaped (spec 2.4); these start emphasis,
# links, images, strikethrough and headings. `&`, `<`, `>` become entities so no raw HTML
# (GitHub renders some of it) and no autolink survives; a backtick and `|` become entities so
# a code span cannot open and a GFM table row cannot gain a cell (GFM spec 4.10: the row is
# split on unescaped pipes before inline parsing). GitHub turns `@name` into a mention (a
# notification to that user or team) and `#123` into a link to an issue after rendering, on the
# text itself, where a backslash escape is gone; a zero-width space (U+200B, as an entity) after
# `@` and `#` keeps the text as shown and stops both, as Dependabot writes `@&#8203;user`.
_MARKDOWN = {"\\": "\\\\", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]", "~": "\\~",
             "#": "\\#&#8203;", "@": "@&#8203;",
             "&": "&amp;", "<": "&lt;", ">": "&gt;", "`": "&#96;", "|": "&#124;"}
_MARKDOWN_RE = re.compile("[" + re.escape("".join(_MARKDOWN)) + "]")


def markdown_text(value: object) -> str:
    """Inline markdown that shows exactly the text: no formatting, link, HTML or line break of its own."""
    return _MARKDOWN_RE.sub(lambda m: _MARKDOWN[m.group()], for_terminal(value))


def markdown_cell(value: object) -> str:
    """A GFM table cell: inline text (pipes and newlines are already escaped by markdown_text)."""
    return markdown_text(value)


def markdown_code(value: object) -> str:
    """The text in monospace. Not a backtick code span: entities are literal inside one, so a
    backtick or pipe could not be escaped; <code> is our own tag around escaped text."""
    text = markdown_text(value)
    return f"<code>{text}</code>" if text else ""


def xml_text(value: object) -> str:
    """Text for an ElementTree attribute or element: what XML 1.0 cannot carry (NUL, other C0
    except tab and newline, lone surrogates, U+FFFE/U+FFFF) and DEL/C1/bidi shown as escapes.
    `<`, `&`, `"` and `]]>` are left to ElementTree's serializer, which escapes them."""
    return _XML_UNSAFE.sub(_escape, str(value))


def prometheus_label(value: object) -> str:
    """A label value for the text exposition format: backslash, double quote and line feed
    escaped as \\\\, \\" and \\n, the only escapes the format defines
    (https://prometheus.io/docs/instrumenting/exposition_formats/#text-format-details);
    other control characters shown as `\\\\x1b`, so the parser reads a literal backslash."""
    def one(match: re.Match[str]) -> str:
        char = match.group()
        if char == "\n":
            return "\\n"
        if char in '\\"':
            return "\\" + char
        return "\\" + _escape(match)

    return _PROMETHEUS.sub(one, str(value))


def json_safe(value: Any) -> Any:
    """The document with lone surrogates in every string (keys too) shown as `\\udxxx` escapes:
    json.dumps would otherwise write an unpaired \\ud800 escape, which RFC 8259 section 8.2
    leaves to each parser (Python keeps it, others fail or replace it)."""
    if isinstance(value, str):
        return _SURROGATE.sub(_escape, value)
    if isinstance(value, dict):
        return {json_safe(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
