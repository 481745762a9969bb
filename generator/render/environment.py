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


def _shquote(value: object) -> str:
    """One shell word holding VALUE literally, always single-quoted (POSIX sh: nothing inside
    single quotes is special; a quote itself is closed, escaped and reopened). For every value a
    template interpolates into a script (day-0 ZTP scripts): names, URLs, hashes."""
    text = str(value)
    if "\0" in text:
        raise ValueError("a shell word cannot hold a NUL byte")
    return "'" + text.replace("'", "'\\''") + "'"


# What getattr() finds on a plain dict instance: its methods, nothing else (no __dict__)
_DICT_ATTRS = frozenset(dir(dict))


class _Environment(jinja2.Environment):
    """Jinja's `x.key` tries getattr(x, "key") first and, on a dict, pays a raised AttributeError
    before x["key"]: 1.2 M of them per 16k-GPU render (issue 14). For a plain dict the answer is
    the same without the exception: an item unless the name is one of dict's own attributes."""

    def getattr(self, obj, attribute):
        if type(obj) is dict and attribute not in _DICT_ATTRS:
            try:
                return obj[attribute]
            except KeyError:
                return self.undefined(obj=obj, name=attribute)
        return super().getattr(obj, attribute)


@cache
def environment() -> jinja2.Environment:
    env = _Environment(
        # templates/ ships as the package generator.templates (see pyproject.toml)
        loader=jinja2.FileSystemLoader(str(resources.files("generator.templates"))),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        # the templates ship with the package and do not change during a run: no stat() of the
        # file on every get_template and {% include %} (~80k at 98k GPUs, issue 14)
        auto_reload=False,
    )
    env.filters["yaml_key"] = _yaml_key
    env.filters["shquote"] = _shquote
    return env


def template(name: str) -> jinja2.Template:
    return environment().get_template(name)
