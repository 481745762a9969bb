"""Whether the file --endpoints (or $FABRICGEN_ENDPOINTS) names can be read at all, checked while the
command line is parsed: a missing, unreadable or non-YAML endpoints file is one line and exit 1 in
every command that takes it, before a switch is counted `unknown` for it (issue 36: `verify
--endpoints nope.yml` printed 230 rows of unknown). What the file says is checked where it is used
(deploy/credentials.py resolve_access)."""

from __future__ import annotations

from pathlib import Path

import yaml

from generator.deploy.credentials import MAX_ENDPOINTS_FILE_BYTES, CredentialsError, _read_regular


def check_endpoints_file(endpoints: str) -> None:
    """CredentialsError (one line naming the file and what to do) unless ENDPOINTS is a readable
    regular file holding a YAML mapping."""
    path = Path(endpoints)
    try:
        text = _read_regular(path, MAX_ENDPOINTS_FILE_BYTES, "--endpoints", "endpoints file", private=False)
    except CredentialsError as exc:
        if "No such file" not in str(exc):
            raise
        raise CredentialsError(f"{exc}; point --endpoints (or $FABRICGEN_ENDPOINTS) at an endpoints.yml, e.g. "
                               "the DIR/endpoints.yml of `fabricgen lab up --dir DIR`") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CredentialsError(f"--endpoints {endpoints}: not valid YAML: {str(exc).splitlines()[0]}; fix it, "
                               "or point --endpoints at the file `fabricgen lab up` wrote (DIR/endpoints.yml)") from None
    if not isinstance(data, dict):
        raise CredentialsError(f"--endpoints {endpoints}: not an endpoints file (expected `switches:` and/or "
                               "`hosts:` mappings); point --endpoints at the right file")
