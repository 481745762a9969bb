"""One Jinja environment per run: StrictUndefined, no autoescape, templates
compiled once and shared by every device of a target."""

from __future__ import annotations

from functools import cache
from importlib import resources

import jinja2


def _yaml_key(value: object) -> str:
    """Quote a scalar so YAML reads it back as a string key (NVUE ids such as '3')."""
    text = str(value)
    if text.isdigit() or text.lower() in ("on", "off", "yes", "no", "true", "false", "null", "~", ""):
        return f"'{text}'"
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
