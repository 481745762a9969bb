"""One Jinja environment per run: StrictUndefined, no autoescape, templates
compiled once and shared by every device of a target."""

from __future__ import annotations

from functools import cache
from importlib import resources

import jinja2
import yaml

_RESOLVER = yaml.resolver.Resolver()
_STR = "tag:yaml.org,2002:str"


def _yaml_key(value: object) -> str:
    """Quote a scalar so YAML reads it back as a string key (NVUE ids such as '3'). Asks
    PyYAML's YAML 1.1 resolver, as Ansible's from_yaml reads the netplan file: a netdev
    named 0x10 or 1.5 must not come back as a number (issue 15, finding 7)."""
    text = str(value)
    if text.isdigit() or _RESOLVER.resolve(yaml.ScalarNode, text, (True, False)) != _STR:
        return "'" + text.replace("'", "''") + "'"
    return text


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        # templates/ ships as the package generator.templates (see pyproject.toml)
        loader=jinja2.FileSystemLoader(str(resources.files("generator.templates"))),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["yaml_key"] = _yaml_key
    return env


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)
