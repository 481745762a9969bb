"""Whether the file --endpoints (or $FABRICGEN_ENDPOINTS) names can be read at all, checked while the
command line is parsed: a missing, unreadable or non-YAML endpoints file is one line and exit 1 in
every command that takes it, before a switch is counted `unknown` for it (issue 36: `verify
--endpoints nope.yml` printed 230 rows of unknown). What the file says is checked where it is used
(devices/credentials.py resolve_access)."""

from __future__ import annotations

from generator.devices.credentials import CredentialsError
from generator.devices.endpoints import EndpointsError, load_endpoints


def check_endpoints_file(endpoints: str) -> None:
    """CredentialsError (one line naming the file and what to do) unless ENDPOINTS is a trusted,
    bounded regular file holding a YAML mapping (devices/endpoints.py's rules: owner, mode, size,
    YAML bounds)."""
    try:
        data = load_endpoints(endpoints)
    except EndpointsError as exc:
        text = str(exc)
        if "no such endpoints file" in text:
            raise CredentialsError(
                f"--endpoints: cannot read endpoints file {endpoints}: No such file or directory; point "
                "--endpoints (or $FABRICGEN_ENDPOINTS) at an endpoints.yml, e.g. the DIR/endpoints.yml of "
                "`fabricgen lab up --dir DIR`") from None
        if "YAML syntax" in text:
            text = text.replace("YAML syntax", "not valid YAML", 1) + (
                "; fix it, or point --endpoints at the file `fabricgen lab up` wrote (DIR/endpoints.yml)")
        raise CredentialsError(f"--endpoints {text}") from None
    if not isinstance(data, dict):
        raise CredentialsError(f"--endpoints {endpoints}: not an endpoints file (expected `switches:` and/or "
                               "`hosts:` mappings); point --endpoints at the right file")
