"""FG250: SONiC YANG validation findings (`--sonic-yang DIR`).

Raised by the CLI from generator.render.sonic_check, not by a rule function: the
entry exists so `fabricgen validate --explain FG250` works."""

from __future__ import annotations

from generator.checks.registry import ERROR, rule


@rule("FG250", ERROR, "rendered config_db.json rejected by SONiC's YANG models", stage="compile")
def sonic_yang_rejects(ctx):
    """With `--sonic-yang DIR`, every rendered config_db.json is translated to SONiC's YANG
    JSON form and validated with libyang against the models in DIR (the same models the
    switch's own config validation uses). A finding names the device, table, key and
    libyang's reason: a value out of range, a dangling reference (e.g. a BUFFER_PG profile
    that does not exist), a failed `must` (e.g. WRED max below min) or a table with no
    model. Nothing is written when any switch fails."""
    return iter(())
