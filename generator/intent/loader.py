"""Load an intent file: safe YAML with line numbers, then the strict model.

Every problem becomes one IntentError line: file:line, the key path, what is
wrong and what to do. No traceback reaches the user.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import ValidationError

from generator.common.bounded_read import ReadRefused, read_bounded_text
from generator.common.bounded_yaml import MAX_DEPTH, MAX_NODES, BoundedLoader, Expansion, TooDeep
from generator.common.errors import FabricgenError
from generator.intent.model import Intent
from generator.intent.spelling import choices_at, did_you_mean, keys_at
from generator.intent.units import UNQUOTED_NUMBER

if TYPE_CHECKING:
    from generator.intent.discovery import Discovery


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int | None
    path: str
    message: str
    code: str = "FG000"     # FG000: malformed input; a rule code where a rule explains it

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        code = "" if self.code == "FG000" else f"{self.code} "
        return f"{where}: {code}{self.path}: {self.message}" if self.path else f"{where}: {code}{self.message}"


class IntentError(FabricgenError):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    file: str
    lines: dict[str, int]      # key path -> 1-based line
    text: str
    # the discovery file hosts.discovered names, read and checked (generator/intent/discovery.py)
    discovered: Discovery | None = None

    def line_of(self, path: str) -> int | None:
        """Line of the deepest key on `path` that exists in the file."""
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            path = path[:cut] if cut > 0 else ""
        return None


def format_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


# Guards that run before and while the YAML is composed, so that no input can take
# minutes, gigabytes or a RecursionError traceback (issue 15, finding 6).
MAX_INTENT_BYTES_ENV = "FABRICGEN_MAX_INTENT_BYTES"
DEFAULT_MAX_INTENT_BYTES = 4 * 1024 * 1024   # the large example is ~3 KB; 4 MiB is three orders of headroom
# Alias-expansion budget and nesting limit: the common YAML loader's (generator/common/bounded_yaml.py),
# so that every YAML file fabricgen reads is held to the same bounds.


def max_intent_bytes() -> int:
    """The intent size limit: FABRICGEN_MAX_INTENT_BYTES when set (bytes), else 4 MiB."""
    raw = os.environ.get(MAX_INTENT_BYTES_ENV)
    if raw is None or raw == "":
        return DEFAULT_MAX_INTENT_BYTES
    if not raw.isascii() or not raw.isdigit() or int(raw) < 1:
        raise IntentError([Problem(MAX_INTENT_BYTES_ENV, None, "",
                                   f"{raw!r} is not a size in bytes: set a positive whole number, e.g. 8388608")])
    return int(raw)


def _too_large(file: str, size: int, limit: int) -> IntentError:
    return IntentError([Problem(file, None, "", (
        f"the intent is {'more than ' if size > limit else ''}{size} bytes, above the {limit}-byte limit "
        f"({limit / 1048576:g} MiB): an intent is a few KB; if this one really is larger, raise the limit "
        f"with the environment variable {MAX_INTENT_BYTES_ENV}=<bytes>"))])


class KeyLines(dict):
    """Key path -> 1-based line, and `numbers`: key path -> the text of each unquoted number as
    written, so that a number where a string belongs is quoted back as the user wrote it (YAML
    reads 5.10 as 5.1 and 2:1 as 121: the value alone cannot say what to quote)."""

    def __init__(self) -> None:
        super().__init__()
        self.numbers: dict[str, str] = {}


_NUMBER_TAGS = ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")


def _walk(node: yaml.Node, path: str, lines: dict[str, int], problems: list[Problem], file: str,
          active: set[int] | None = None, budget: list[int] | None = None, depth: int = 0,
          doomed: Expansion | None = None) -> None:
    """Key path -> line (LINES) and duplicate keys (PROBLEMS) of NODE, every alias expanded, within
    MAX_NODES nodes and MAX_DEPTH levels. DOOMED: the expansion of a tree that is sure to be
    refused (parse_yaml); a subtree that cannot be where that happens is skipped at its size, so
    the refusal names the same line and path as a full walk, at the cost of the text."""
    active = set() if active is None else active
    budget = [MAX_NODES] if budget is None else budget
    if doomed is not None and doomed.clean(node, depth, budget[0]):
        budget[0] -= doomed.size[id(node)]
        return
    budget[0] -= 1
    if budget[0] < 0:
        raise IntentError([Problem(file, node.start_mark.line + 1, path,
                                   f"more than {MAX_NODES:,} keys and values once YAML aliases are expanded: "
                                   "write the intent out plainly")])
    if id(node) in active:
        raise IntentError([Problem(file, node.start_mark.line + 1, path,
                                   "recursive YAML alias: an anchor may not contain an alias to itself")])
    if depth > MAX_DEPTH:
        # an alias chain (&a1 [*a0], &a2 [*a1], ...) nests as deep as the file has anchors, which
        # the composer's depth limit does not see: 3,000 of them in 48 KB ended in a RecursionError
        raise IntentError([Problem(file, node.start_mark.line + 1, path, (
            f"mappings and lists nest more than {MAX_DEPTH} levels deep once YAML aliases are expanded: "
            "an intent needs at most 5; write the intent out plainly"))])
    if isinstance(node, yaml.MappingNode):
        active.add(id(node))
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            line = key_node.start_mark.line + 1
            if not isinstance(key_node, yaml.ScalarNode):
                # stringifying a collection key expands every alias inside it before any budget
                # applies (a 540-byte alias bomb in a key ran out of memory); no intent key is one
                raise IntentError([Problem(file, line, path, "a mapping key must be a plain name, not a "
                                           f"{'list' if isinstance(key_node, yaml.SequenceNode) else 'mapping'}")])
            budget[0] -= 1          # keys count too: a wide mapping costs as much as a long list
            key = str(key_node.value)
            child = f"{path}.{key}" if path else key
            if key in seen:
                # PyYAML silently keeps the last value; a reviewed intent must not hide one
                problems.append(Problem(file, line, child, f"duplicate key (first at line {seen[key]}): remove one"))
            seen[key] = line
            lines.setdefault(child, line)
            _walk(value_node, child, lines, problems, file, active, budget, depth + 1, doomed)
        active.discard(id(node))
    elif isinstance(node, yaml.SequenceNode):
        active.add(id(node))
        for i, item in enumerate(node.value):
            child = f"{path}[{i}]"
            lines.setdefault(child, item.start_mark.line + 1)
            _walk(item, child, lines, problems, file, active, budget, depth + 1, doomed)
        active.discard(id(node))
    elif node.style is None and node.tag in _NUMBER_TAGS and isinstance(lines, KeyLines):
        lines.numbers[path] = node.value


def parse_yaml(text: str, file: str) -> tuple[Any, dict[str, int]]:
    limit = max_intent_bytes()
    if len(text) > limit:       # characters: a lower bound of the bytes, and what parsing costs
        raise _too_large(file, len(text), limit)
    loader = BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise IntentError([Problem(file, 1, "", "the file is empty: an intent needs at least fabric: and topology:")])
        lines = KeyLines()
        problems: list[Problem] = []
        expansion = Expansion(node, MAX_NODES + 1, keys_whole=False)
        doomed = None if expansion.clean(node, 0, MAX_NODES) else expansion
        _walk(node, "", lines, problems, file, doomed=doomed)
        if problems:
            raise IntentError(problems)
        data = loader.construct_document(node)
    except TooDeep as exc:
        raise IntentError([Problem(file, exc.mark.line + 1, "", (
            f"mappings and lists nest more than {MAX_DEPTH} levels deep: an intent needs at most 5; "
            "check the indentation or unbalanced [ {"))]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = exc.problem or "invalid YAML"
        if "python/" in str(exc) or "could not determine a constructor" in str(what):
            what = f"{what}: only plain YAML is accepted (tags such as !!python/... are never executed)"
        raise IntentError([Problem(file, line, "", f"YAML syntax: {what}")]) from None
    except yaml.YAMLError as exc:
        raise IntentError([Problem(file, None, "", f"YAML syntax: {exc}")]) from None
    finally:
        loader.dispose()
    return data, lines


def _hint(err: dict[str, Any], loc: tuple[Any, ...], written: str | None) -> str:
    """The one-line message of a pydantic error at `loc`; `written`: the value's YAML text when
    it was an unquoted number."""
    kind = err["type"]
    if kind == "extra_forbidden":
        keys = keys_at(loc[:-1])
        guess = did_you_mean(loc[-1], keys)
        if guess:
            return f"unknown key: did you mean {guess}?"
        return f"unknown key: the keys here are {', '.join(keys)} (`fabricgen schema` describes them)"
    if kind == "missing":
        return "required key is missing: add it"
    if kind == UNQUOTED_NUMBER and written is not None:
        ctx = err["ctx"]
        return f'got the number {ctx["number"]}: write it quoted: "{written}" ({ctx["why"]})'
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    got = err.get("input")
    if kind not in ("model_type",) and got is not None and not isinstance(got, dict | list) and repr(got) not in msg:
        msg = f"{msg} (got {got!r})"
    if kind == "literal_error":
        guess = did_you_mean(got, choices_at(loc))
        if guess:
            msg = f"{msg}: did you mean {guess}?"
    return msg


SECRET_KEYS = ("password", "secret", "community")


def _plaintext_secrets(data: Any, path: str = "") -> list[str]:
    """Key paths that hold a secret in clear text: reviewed intents live in git."""
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            child = f"{path}.{key}" if path else str(key)
            if str(key).lower() in SECRET_KEYS and value not in (None, ""):
                found.append(child)
            found += _plaintext_secrets(value, child)
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found += _plaintext_secrets(item, f"{path}[{i}]")
    return found


def _secret_hint(path: str) -> str:
    if path.endswith("password"):
        return ("a plaintext password does not belong in the intent: put a crypt hash in hashed_password "
                "(`mkpasswd -m sha-512`), or SSH keys in ssh_keys")
    return ("a plaintext secret does not belong in the intent: name the environment variable that holds it "
            "and have the deploy read it from there")


def _non_finite(data: Any, path: str = "") -> list[str]:
    """Key paths holding .inf, -.inf or .nan: no intent value means infinity, and they
    crash arithmetic far from the intent (capacity, headroom) instead of failing here."""
    if isinstance(data, float) and not math.isfinite(data):
        return [path]
    found = []
    if isinstance(data, dict):
        for key, value in data.items():
            found += _non_finite(value, f"{path}.{key}" if path else str(key))
    elif isinstance(data, list):
        for i, item in enumerate(data):
            found += _non_finite(item, f"{path}[{i}]")
    return found


def _line_finder(lines: dict[str, int]) -> LoadedIntent:
    li = LoadedIntent.__new__(LoadedIntent)
    object.__setattr__(li, "lines", lines)
    return li


# keys whose refusal has a rule code, so that `--explain` tells the why
_CODES = {"topology.kind": "FG101", "switch_os.version": "FG270"}


def validate_data(data: Any, lines: dict[str, int], file: str) -> Intent:
    if not isinstance(data, dict):
        raise IntentError([Problem(file, 1, "", "an intent is a YAML mapping with fabric: and topology: at the top")])
    infinite = _non_finite(data)
    if infinite:
        li = _line_finder(lines)
        raise IntentError([Problem(file, li.line_of(p), p, "not a finite number (.inf or .nan): write a number")
                           for p in infinite])
    secrets = _plaintext_secrets(data)
    if secrets:
        li = LoadedIntent.__new__(LoadedIntent)
        object.__setattr__(li, "lines", lines)
        raise IntentError([Problem(file, li.line_of(p), p, _secret_hint(p)) for p in secrets])
    try:
        return Intent.model_validate(data)
    except ValidationError as exc:
        problems = []
        seen = set()
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith(("function-", "tagged-union"))))
            # a union reports each branch; the path is what matters to the user
            path = format_path(loc).replace("global_", "global")
            if path in seen:
                continue
            seen.add(path)
            li = LoadedIntent.__new__(LoadedIntent)
            object.__setattr__(li, "lines", lines)
            code = _CODES.get(path, "FG000")
            written = getattr(lines, "numbers", {}).get(path)
            problems.append(Problem(file, li.line_of(path), path, _hint(err, loc, written), code))
        raise IntentError(problems) from None


def _read_intent(p: Path, file: str) -> str:
    """The file's text, read only when it is a regular file within the size limit: the size is
    known before parsing, and a FIFO or device (/dev/zero) is never waited on (common/bounded_read.py)."""
    limit = max_intent_bytes()
    try:
        # universal newlines, as Path.read_text gives: the text is hashed into the manifest
        return read_bounded_text(p, limit)
    except FileNotFoundError:
        raise IntentError([Problem(file, None, "", "file not found: pass the path of a fabric.yaml")]) from None
    except ReadRefused as exc:
        if exc.kind == "size":
            raise _too_large(file, exc.size or limit + 1, limit) from None
        if exc.kind == "type":
            raise IntentError([Problem(file, None, "", "not a regular file: pass the path of a fabric.yaml")]) from None
        raise IntentError([Problem(file, None, "", f"cannot read the intent: {exc.message}")]) from None
    except OSError as exc:
        raise IntentError([Problem(file, None, "", f"cannot read the intent: {exc.strerror or exc}")]) from None


def load_intent(path: str | Path) -> LoadedIntent:
    p = Path(path)
    file = str(path)
    text = _read_intent(p, file)
    data, lines = parse_yaml(text, file)
    intent = validate_data(data, lines, file)
    discovered = None
    if intent.hosts.discovered is not None:
        from generator.intent.discovery import discovery_path, read_discovery

        discovered = read_discovery(discovery_path(p, intent.hosts.discovered),
                                    named_at=(file, lines.get("hosts.discovered")))
    return LoadedIntent(intent=intent, file=file, lines=lines, text=text, discovered=discovered)
