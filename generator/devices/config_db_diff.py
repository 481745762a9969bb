"""The unified diff of two SONiC config_dbs as printed (json_text.config_db_text), matched row by row.

difflib.unified_diff matches line by line: ~6 ms of CPU for a factory config_db (1,200 lines)
against a day-0 file (3,000 lines), 40 % of what a SONiC day 0 spends per switch before its wave
under the GIL that 128 switches share (issue 32). Here the sequences difflib matches are the
printed rows (a row's lines, from its key to its closing brace) and the table and file lines
between them, ~600 items instead of 4,000; a row that differs at all is replaced as a whole. The
text is a unified diff of the same two files (`patch` turns the running file into the candidate),
with difflib's hunks and three lines of context; only a changed row shows all its lines.
"""

from __future__ import annotations

import difflib

from generator.common.json_text import config_db_text

CONTEXT = 3
_ROW_INDENT = " " * 8          # a row's key and closing brace; its fields are indented further


def config_db_diff(running: dict, candidate: dict, fromfile: str = "running", tofile: str = "candidate") -> str:
    """`--- running` / `+++ candidate` hunks, "" when both print the same."""
    a, b = _lines(running), _lines(candidate)
    rows_a, rows_b = _rows(a), _rows(b)
    matcher = difflib.SequenceMatcher(None, [rows for rows, _ in rows_a], [rows for rows, _ in rows_b], autojunk=False)
    lines = difflib.SequenceMatcher(None, a, b)
    lines.opcodes = _line_opcodes(matcher.get_opcodes(), rows_a, rows_b, len(a), len(b))
    out: list[str] = []
    for group in lines.get_grouped_opcodes(CONTEXT):
        if not out:
            out += [f"--- {fromfile}\n", f"+++ {tofile}\n"]
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                out += [" " + line for line in a[i1:i2]]
                continue
            out += ["-" + line for line in a[i1:i2]]
            out += ["+" + line for line in b[j1:j2]]
    return "".join(out).strip()


def _lines(config: dict) -> list[str]:
    return (config_db_text(config) + "\n").splitlines(keepends=True)


def _rows(lines: list[str]) -> list[tuple[tuple[str, ...], int]]:
    """(the lines of one item, its first line's index): a row from its key to its closing brace,
    or one line outside the rows (the braces of the file and of each table)."""
    items: list[tuple[tuple[str, ...], int]] = []
    start = 0
    while start < len(lines):
        end = start + 1
        line = lines[start]
        if line.startswith(_ROW_INDENT + '"') and line.rstrip().endswith(("{", "[")):
            # a row: its lines up to the brace that closes it at the row's indentation
            while end < len(lines) and not (lines[end].startswith(_ROW_INDENT) and lines[end][8] in "}]"):
                end += 1
            end = min(end + 1, len(lines))
        items.append((tuple(lines[start:end]), start))
        start = end
    return items


def _line_opcodes(opcodes, rows_a, rows_b, len_a: int, len_b: int) -> list[tuple[str, int, int, int, int]]:
    """The row opcodes as opcodes of lines (what difflib's grouping and the hunk headers count)."""
    def at(items, index: int, total: int) -> int:
        return items[index][1] if index < len(items) else total

    return [(tag, at(rows_a, i1, len_a), at(rows_a, i2, len_a), at(rows_b, j1, len_b), at(rows_b, j2, len_b))
            for tag, i1, i2, j1, j2 in opcodes]


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (difflib: 'start,length', 'start' for one line)."""
    length = stop - start
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"
