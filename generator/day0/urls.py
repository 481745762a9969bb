"""--url: where DIR/http/ is served, and the URL of each file under it.

The URLs travel in DHCP options (239 for Cumulus, 67 for SONiC), in a shell script and in
ztp.json, so they are held to what all three carry unchanged: http or https, a host, no
whitespace, quotes, backslashes or commas (Kea reads option data as comma-separated values,
Kea ARM "Standard DHCPv4 Options": a comma in a string option must be escaped), and at most
255 bytes (a DHCP option's length is one octet, RFC 2132 §2).

No user:password@ either: the URL is copied into kea-dhcp4.json, the served scripts, DHCP
options (clear text on the wire) and the switch's syslog, so a credential in it is published.
A `?` or `#`, even empty, would swallow the file paths appended to the base (RFC 3986 §3.4/3.5:
everything after them is query or fragment, never path), and a port outside 1-65535 names no
server (RFC 3986 §3.2.3, TCP's 16-bit port).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from generator.common.errors import FabricgenError

OPTION_MAX = 255
_BAD = re.compile(r"[\s\"'`\\,<>{}|^]")


class UrlError(FabricgenError, ValueError):
    """One line: why --url cannot be used."""


def check_base_url(url: str) -> str:
    """The base URL without trailing slashes, or UrlError."""
    if not url or _BAD.search(url) or not url.isascii() or not url.isprintable():
        raise UrlError(f"--url {url!r}: spaces, quotes, backslashes, commas and non-ASCII characters cannot "
                       "travel in a DHCP option; give e.g. http://192.168.0.2:8080")
    parts = urlsplit(url)
    if "@" in parts.netloc:
        # the URL itself is never echoed: it holds the credential
        raise UrlError("--url: a user or password in the URL (user:pass@host) would be copied in clear text into "
                       "kea-dhcp4.json, the scripts, DHCP options and switch syslog; serve DIR/http/ without "
                       "authentication on the management network (it holds no secret), e.g. http://192.168.0.2:8080")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlError(f"--url {url!r}: give an http:// or https:// URL with a host, e.g. http://192.168.0.2:8080 "
                       "(where DIR/http/ is served)")
    if "?" in url or "#" in url:
        raise UrlError(f"--url {url!r}: no ? or # (even empty): file paths are appended to the URL and would "
                       "become part of a query or fragment")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        raise UrlError(f"--url {url!r}: the port must be a number from 1 to 65535")
    return url.rstrip("/")


def file_url(base: str, relpath: str) -> str:
    """The URL of http/RELPATH (contract: URL.rstrip('/') + '/' + relpath)."""
    return base.rstrip("/") + "/" + relpath


def check_option_length(url: str, what: str) -> None:
    if len(url.encode()) > OPTION_MAX:
        raise UrlError(f"the URL of {what} is {len(url.encode())} bytes, more than a DHCP option holds "
                       f"({OPTION_MAX}); give a shorter --url")


__all__ = ["OPTION_MAX", "UrlError", "check_base_url", "check_option_length", "file_url"]
