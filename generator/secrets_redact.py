"""Device secrets out of reports: one list of secret paths per switch OS, and the functions that
replace their values with `<redacted sha256:0123456789ab>` (the first 12 hex digits of the
value's SHA-256), so a changed secret still shows up as a changed hash but is never printed.

Two kinds of rules, both matched against the end of a key path (`*` matches any one key):
- VALUE rules: the value at the path is secret (a subtree there becomes one marker);
- KEY rules: the map key itself is the secret (an SNMP community is the key of its entry);
  the key is replaced, what lies below it is not secret and stays readable.

Used by drift (generator/drift), plan (generator/gitops/plan_compare.py) and deploy output
(generator/deploy/rollout.py: `--dry-run` diffs).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

import yaml

# NVUE (Cumulus Linux 5.x), paths as in `nv set`:
# - `system aaa user <u> hashed-password|password` (NVIDIA, Cumulus Linux 5.11 "User Accounts");
# - `system aaa tacacs server <prio> secret`, `system aaa radius server <srv> secret` (TACACS/RADIUS
#   pages): the name `secret` is a shared key wherever NVUE uses it;
# - `interface <if> router ospf authentication md5-key` (reference/nvue/nvue_set_paths_supplementary.tsv);
#   `message-digest-key` next to it is the key ID, a number, and not secret;
# - `vrf <v> router bgp neighbor|peer-group <n> password` (reference/nvue/nvue_set_paths.tsv);
# - SNMP (Cumulus Linux 5.x "Simple Network Management Protocol"): `service snmp-server
#   readonly-community[-v6] <community> access <ip>` (the community is the key), `username <u>
#   auth-md5|auth-sha <password> encrypt-aes|encrypt-des <password>` (passwords as keys),
#   `trap-destination <ip> ... community-password <community>`.
# Not secret, so not listed: `ssh authorized-key <name> key` (an SSH *public* key), BGP communities
# (`router policy community-list`, `route-map ... set community`), `message-digest-key`.
NVUE_VALUE_RULES: tuple[tuple[str, ...], ...] = (
    ("hashed-password",), ("password",), ("md5-key",), ("secret",),
)
NVUE_KEY_RULES: tuple[tuple[str, ...], ...] = (
    ("snmp-server", "readonly-community", "*"),
    ("snmp-server", "readonly-community-v6", "*"),
    ("snmp-server", "username", "*", "auth-md5", "*"),
    ("snmp-server", "username", "*", "auth-sha", "*"),
    ("snmp-server", "username", "*", "*", "*", "encrypt-aes", "*"),
    ("snmp-server", "username", "*", "*", "*", "encrypt-des", "*"),
    ("community-password", "*"),
)

# SONiC config_db, TABLE / key / field, as the YANG models of sonic-buildimage @086b03bd name them:
# sonic-system-tacacs.yang (TACPLUS global, TACPLUS_SERVER: passkey), sonic-system-radius.yang
# (RADIUS global, RADIUS_SERVER: passkey), sonic-bgp-common.yang (auth_password of BGP_NEIGHBOR and
# BGP_PEER_GROUP; `password` too, as older tooling writes it), sonic-snmp.yang (SNMP_COMMUNITY keyed
# by the community itself; SNMP_USER_AUTH_PASSWORD / SNMP_USER_ENCRYPTION_PASSWORD), sonic-macsec.yang
# (MACSEC_PROFILE primary_cak, fallback_cak), sonic-ntp.yang (NTP_KEY value).
SONIC_VALUE_RULES: tuple[tuple[str, ...], ...] = (
    ("TACPLUS", "*", "passkey"), ("TACPLUS_SERVER", "*", "passkey"),
    ("RADIUS", "*", "passkey"), ("RADIUS_SERVER", "*", "passkey"),
    ("BGP_NEIGHBOR", "*", "auth_password"), ("BGP_NEIGHBOR", "*", "password"),
    ("BGP_PEER_GROUP", "*", "auth_password"), ("BGP_PEER_GROUP", "*", "password"),
    ("SNMP_USER", "*", "SNMP_USER_AUTH_PASSWORD"), ("SNMP_USER", "*", "SNMP_USER_ENCRYPTION_PASSWORD"),
    ("MACSEC_PROFILE", "*", "primary_cak"), ("MACSEC_PROFILE", "*", "fallback_cak"),
    ("NTP_KEY", "*", "value"),
)
SONIC_KEY_RULES: tuple[tuple[str, ...], ...] = (("SNMP_COMMUNITY", "*"),)

RULES = {"cumulus": (NVUE_VALUE_RULES, NVUE_KEY_RULES), "sonic": (SONIC_VALUE_RULES, SONIC_KEY_RULES)}
# An OS not known (a report mixing devices): both lists; their key names do not overlap.
ANY = (NVUE_VALUE_RULES + SONIC_VALUE_RULES, NVUE_KEY_RULES + SONIC_KEY_RULES)

MARK = re.compile(r"^<redacted sha256:[0-9a-f]{12}>$")
_YAML_LOADER = getattr(yaml, "CBaseLoader", yaml.BaseLoader)   # strings only, no tags


def _rules(os_name: str | None):
    return RULES.get(os_name or "", ANY)


def marker(value: Any) -> str:
    """`<redacted sha256:…>` of a value; an already redacted value stays as it is."""
    if isinstance(value, str):
        if MARK.match(value):
            return value
        text = value
    else:
        text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return f"<redacted sha256:{hashlib.sha256(text.encode()).hexdigest()[:12]}>"


def _ends_with(parts: tuple[str, ...], pattern: tuple[str, ...]) -> bool:
    if len(parts) < len(pattern):
        return False
    tail = parts[len(parts) - len(pattern):]
    return all(p == "*" or p == t for p, t in zip(pattern, tail, strict=True))


@functools.cache
def _index(os_name: str | None, which: int) -> tuple[tuple[int, dict[str, tuple]], ...]:
    """The rules of one list keyed by their last named element and its distance from the end
    ((1, "password"), (2, "community") for a rule ending in "*"): a config tree has tens of
    thousands of paths per switch (drift redacts 128 of them) and nearly every path ends in keys no
    rule names, so only the few rules that can match are tried."""
    by_distance: dict[int, dict[str, list]] = {}
    for rule in _rules(os_name)[which]:
        distance = next((k for k in range(1, len(rule) + 1) if rule[-k] != "*"), None)
        if distance is None:
            raise ValueError(f"secret rule {rule} names no key")
        by_distance.setdefault(distance, {}).setdefault(rule[-distance], []).append(rule)
    return tuple((k, {name: tuple(rules) for name, rules in named.items()}) for k, named in sorted(by_distance.items()))


@functools.cache
def _matcher(os_name: str | None, which: int) -> Callable[[tuple[str, ...]], bool]:
    """Whether a key path matches one rule of a list, as one closure per list: `plan` on a grown
    fabric asks it for every key of every changed file (~470,000 paths for 97 added nodes), and
    the index lookup and two calls around each question were a third of the redaction's time."""
    index = _index(os_name, which)
    # a path can match only when one of its last REACH keys is a name some rule ends with: nearly
    # no path of a rendered config is, and one set operation in C says so
    reach = max((distance for distance, _ in index), default=1)
    names = frozenset(name for _, named in index for name in named)

    def matches(parts: tuple[str, ...]) -> bool:
        if names.isdisjoint(parts[-reach:]):
            return False
        for distance, named in index:
            if len(parts) >= distance:
                rules = named.get(parts[-distance])
                if rules and any(_ends_with(parts, r) for r in rules):
                    return True
        return False

    return matches


def value_secret(os_name: str | None, parts: tuple[str, ...]) -> bool:
    return _matcher(os_name, 0)(parts)


def key_secret(os_name: str | None, parts: tuple[str, ...]) -> bool:
    return _matcher(os_name, 1)(parts)


def redact_tree(os_name: str | None, tree: Any, path: tuple[str, ...] = ()) -> Any:
    """A copy of a config tree with every secret value (and secret key) replaced by its marker."""
    value_rule, key_rule = _matcher(os_name, 0), _matcher(os_name, 1)

    def walk(tree: Any, path: tuple[str, ...]) -> Any:
        if path and value_rule(path):
            return marker(tree)
        if isinstance(tree, dict):
            out = {}
            for key, value in tree.items():
                child = (*path, str(key))
                out[marker(str(key)) if key_rule(child) else key] = walk(value, child)
            return out
        if isinstance(tree, list):
            return [walk(v, path) for v in tree]
        return tree

    return walk(tree, path)


# --- dotted paths as generator/common/structured_diff.join_path writes them -----------------------
_PATH_TOKEN = re.compile(r'\.?([A-Za-z0-9_-]+)|\[("(?:[^"\\]|\\.)*")\]')


def split_path(path: str) -> tuple[str, ...] | None:
    """`a.b["10.0.0.1"].c` -> ("a", "b", "10.0.0.1", "c"); None if the text is not such a path."""
    parts, pos = [], 0
    while pos < len(path):
        m = _PATH_TOKEN.match(path, pos)
        if m is None:
            return None
        parts.append(m.group(1) if m.group(1) is not None else json.loads(m.group(2)))
        pos = m.end()
    return tuple(parts)


def _join(parts: tuple[str, ...]) -> str:
    from generator.common.structured_diff import join_path

    out = ""
    for p in parts:
        out = join_path(out, p)
    return out


def redact_change(os_name: str | None, path: str, value: Any) -> tuple[str, Any]:
    """(path, value) of one difference with secret keys in the path and a secret value redacted."""
    parts = split_path(path)
    if not parts:
        return path, value
    new_parts, secret = [], False
    for i in range(1, len(parts) + 1):
        prefix = parts[:i]
        new_parts.append(marker(parts[i - 1]) if key_secret(os_name, prefix) else parts[i - 1])
        secret = secret or value_secret(os_name, prefix)
    if secret:
        value = marker(value) if value is not None else None
    else:
        value = redact_tree(os_name, value, parts)
    new_path = _join(tuple(new_parts)) if tuple(new_parts) != parts else path
    return new_path, value


# --- text: YAML (`nv config diff`), JSON (config_db dumps, unified diffs), JSON-patch lines ----------
_KEY_LINE = re.compile(r"""^(?P<lead>\s*(?:-\s+)*)(?P<key>"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'#\-{}\[\],][^:]*?)"""
                       r"""\s*:(?:(?P<sp>\s+)(?P<val>.*?))?(?P<comma>,?)\s*$""")
_ITEM_LINE = re.compile(r"^(?P<lead>\s*-\s+)(?P<val>.+?)(?P<comma>,?)\s*$")
_PATCH_LINE = re.compile(r"^(?P<op>add|remove|replace|move|copy|test) (?P<path>/\S*)(?P<rest>.*)$")
_OPENERS = {"", "{", "[", "|", ">", "|-", ">-"}


def _unquote(key: str) -> str:
    if key.startswith('"'):
        try:
            return json.loads(key)
        except ValueError:
            pass
        # YAML's double-quoted escapes beyond JSON's (\x70, \U00000070: YAML 1.2 section 5.7) spell
        # a key too: `nv config diff` is YAML, and a key hidden that way is still the key
        try:
            value = yaml.load(key, Loader=_YAML_LOADER)
        except yaml.YAMLError:
            value = None
        return value if isinstance(value, str) else key[1:-1]
    if key.startswith("'"):
        return key[1:-1].replace("''", "'")
    return key


def _quote_like(original: str, text: str) -> str:
    return f'"{text}"' if original.startswith('"') else text


def _redact_patch_line(os_name: str | None, m: re.Match) -> str:
    parts = tuple(p.replace("~1", "/").replace("~0", "~") for p in m.group("path").split("/")[1:])
    new_parts = [marker(p) if key_secret(os_name, parts[:i + 1]) else p for i, p in enumerate(parts)]
    rest = m.group("rest")
    value_text = rest.strip()
    source = ""
    if value_text.startswith("from "):
        source, _, value_text = value_text.partition(" ")[2].partition(" ")
        source = f" from {source}"
    if value_text:
        try:
            value = json.loads(value_text)
        except ValueError:
            value = value_text
        if any(value_secret(os_name, parts[:i + 1]) for i in range(len(parts))):
            value = marker(value)
        else:
            value = redact_tree(os_name, value, parts)
        rest = f"{source} {json.dumps(value, sort_keys=True)}"
    path = "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in new_parts)
    return f"{m.group('op')} {path}{rest}"


def redact_text(os_name: str | None, text: str) -> str:
    """Secrets out of config text: YAML or JSON (indented, one key per line, as `nv config diff`
    and json.dumps(indent=...) write them), a unified diff of such text, or JSON-patch lines."""
    if not text or _nothing_to_redact(os_name, text):
        return text
    lines = text.split("\n")
    unified = any(ln.startswith("@@") for ln in lines)
    stack: list[_Open] = []
    out = []
    for line in lines:
        mark, body = "", line
        if unified:
            if line.startswith(("+++", "---", "@@")):
                out.append(line)
                continue
            mark, body = line[:1], line[1:]
        patch = _PATCH_LINE.match(body)
        if patch:
            out.append(mark + _redact_patch_line(os_name, patch))
            continue
        out.append(mark + _redact_line(os_name, body, stack))
    return "\n".join(out)


@functools.cache
def _rule_names(os_name: str | None) -> tuple[tuple[str, ...], ...]:
    """The names each rule of either list holds ("*" aside): a path matches a rule only where
    every one of them is one of its keys."""
    value_rules, key_rules = _rules(os_name)
    return tuple(sorted({tuple(sorted({p for p in rule if p != "*"})) for rule in value_rules + key_rules}))


def _nothing_to_redact(os_name: str | None, text: str) -> bool:
    """True when no line of TEXT can be secret: for every rule, a name it holds does not occur in
    TEXT. A key is read from the text as written or unquoted; only an escape that spells a
    character by its code (JSON's \\u0070, YAML's \\x70, \\u0070, \\U00000070) could spell a name
    the text does not hold, so a text with one is always read line by line. `plan` of a grown
    fabric hands over thousands of host files (netplan, nccl.conf, scripts) that hold no secret."""
    if any(escape in text for escape in _CODE_ESCAPES):
        return False
    return not any(all(name in text for name in names) for names in _rule_names(os_name))


_CODE_ESCAPES = ("\\u", "\\U", "\\x")


# One open key of the text: its indent, its key path, and whether a value rule matched that path
# or one above it (everything below a secret is secret). Carried down the stack, so a line asks one
# rule question instead of one per level above it.
_Open = tuple[int, tuple[str, ...], bool]


def _redact_line(os_name: str | None, body: str, stack: list[_Open]) -> str:
    m = _KEY_LINE.match(body)
    if m:
        indent = len(m.group("lead"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        raw = m.group("key")
        key = _unquote(raw)
        parts = (*stack[-1][1], key) if stack else (key,)
        secret_key = key_secret(os_name, parts)
        if secret_key:
            raw = _quote_like(raw, marker(key))
        val = m.group("val") or ""
        secret = (stack and stack[-1][2]) or value_secret(os_name, parts)
        stack.append((indent, parts, secret))   # a scalar has no children, but its siblings pop it
        secret_value = val not in _OPENERS and secret
        if not (secret_key or secret_value):
            return body                          # as written, spaces and all: only secrets change
        if secret_value:
            quoted = val.startswith('"')
            val = _quote_like(val, marker(_unquote(val) if quoted or val.startswith("'") else val))
        return f"{m.group('lead')}{raw}:{m.group('sp') or (' ' if val else '')}{val}{m.group('comma')}"
    item = _ITEM_LINE.match(body)
    if item and stack:
        indent = len(item.group("lead"))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if stack and stack[-1][2]:
            val = item.group("val")
            return f"{item.group('lead')}{_quote_like(val, marker(_unquote(val)))}{item.group('comma')}"
        return body
    stripped = body.strip()
    if stripped and stripped[0] in "}]":
        indent = len(body) - len(body.lstrip())
        while stack and stack[-1][0] >= indent:
            stack.pop()
    elif stripped and stripped[0] in '"\'' and stack and stack[-1][2]:
        # a JSON list item under a secret key
        comma = "," if stripped.endswith(",") else ""
        lead = body[:len(body) - len(body.lstrip())]
        return f'{lead}"{marker(_unquote(stripped.rstrip(",")))}"{comma}'
    return body
