"""NVUE's value check, in the simulated switch.

A real switch checks every value of `nv set`, `nv config patch` and `nv config replace`
against its release's object model (NVUE-Object-Model page) and refuses the whole
command on one bad value or unknown key, leaving the pending config as it was. The lab
does the same with the same models fabricgen's FG260 uses (generator.render.nvue_model).
"""

from __future__ import annotations

from generator.lab.schema import SchemaError


def check_values(tree: dict, version: str) -> None:
    """Raise SchemaError with one `Error: ...` line per problem when NVUE would refuse `tree`
    (a `set` mapping of strings, as NVUE reads it)."""
    from generator.render.nvue_model import model_release, validate_nvue

    try:
        model_release(version)
    except ValueError:
        return      # before 5.0 there is no NVUE object model to check against
    problems = validate_nvue(tree, version)
    if problems:
        raise SchemaError("\n".join(f"Error: Invalid config: {p.line()}" for p in problems))
