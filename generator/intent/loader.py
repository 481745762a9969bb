"""Load an intent file: safe YAML with line numbers, then the strict model.

Every problem becomes one IntentError line: file:line, the key path, what is
wrong and what to do. No traceback reaches the user.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from generator.intent.model import Intent


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


class IntentError(Exception):
    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class LoadedIntent:
    intent: Intent
    file: str
    lines: dict[str, int]      # key path -> 1-based line
    text: str

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


MAX_NODES = 1_000_000   # alias expansion ("billion laughs") must not exhaust memory


def _walk(node: yaml.Node, path: str, lines: dict[str, int], problems: list[Problem], file: str,
          active: set[int] | None = None, budget: list[int] | None = None) -> None:
    active = set() if active is None else active
    budget = [MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        raise IntentError([Problem(file, node.start_mark.line + 1, path,
                                   "YAML aliases expand to more than a million nodes: write the intent out plainly")])
    if id(node) in active:
        raise IntentError([Problem(file, node.start_mark.line + 1, path,
                                   "recursive YAML alias: an anchor may not contain an alias to itself")])
    if isinstance(node, yaml.MappingNode):
        active.add(id(node))
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            child = f"{path}.{key}" if path else key
            line = key_node.start_mark.line + 1
            if key in seen:
                # PyYAML silently keeps the last value; a reviewed intent must not hide one
                problems.append(Problem(file, line, child, f"duplicate key (first at line {seen[key]}): remove one"))
            seen[key] = line
            lines.setdefault(child, line)
            _walk(value_node, child, lines, problems, file, active, budget)
        active.discard(id(node))
    elif isinstance(node, yaml.SequenceNode):
        active.add(id(node))
        for i, item in enumerate(node.value):
            child = f"{path}[{i}]"
            lines.setdefault(child, item.start_mark.line + 1)
            _walk(item, child, lines, problems, file, active, budget)
        active.discard(id(node))


def parse_yaml(text: str, file: str) -> tuple[Any, dict[str, int]]:
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise IntentError([Problem(file, 1, "", "the file is empty: an intent needs at least fabric: and topology:")])
        lines: dict[str, int] = {}
        problems: list[Problem] = []
        _walk(node, "", lines, problems, file)
        if problems:
            raise IntentError(problems)
        data = loader.construct_document(node)
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


def _hint(err: dict[str, Any]) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key: check the spelling against `fabricgen schema` or DESIGN.md"
    if kind == "missing":
        return "required key is missing: add it"
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    got = err.get("input")
    if kind not in ("model_type",) and got is not None and not isinstance(got, dict | list) and repr(got) not in msg:
        msg = f"{msg} (got {got!r})"
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


def validate_data(data: Any, lines: dict[str, int], file: str) -> Intent:
    if not isinstance(data, dict):
        raise IntentError([Problem(file, 1, "", "an intent is a YAML mapping with fabric: and topology: at the top")])
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
            code = "FG101" if path == "topology.kind" else "FG000"
            problems.append(Problem(file, li.line_of(path), path, _hint(err), code))
        raise IntentError(problems) from None


def load_intent(path: str | Path) -> LoadedIntent:
    p = Path(path)
    file = str(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise IntentError([Problem(file, None, "", "file not found: pass the path of a fabric.yaml")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise IntentError([Problem(file, None, "", f"cannot read the intent: {exc}")]) from None
    data, lines = parse_yaml(text, file)
    intent = validate_data(data, lines, file)
    return LoadedIntent(intent=intent, file=file, lines=lines, text=text)
