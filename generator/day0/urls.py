"""--url: where DIR/http/ is served, and the URL of each file under it.

The URLs travel in DHCP options (239 for Cumulus, 67 for SONiC), in a shell script and in
ztp.json, so they are held to what all three carry unchanged: http or https, a host, no
whitespace, quotes, backslashes or commas (Kea reads option data as comma-separated values,
Kea ARM "Standard DHCPv4 Options": a comma in a string option must be escaped), and at most
255 bytes (a DHCP option's length is one octet, RFC 2132 §2).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

OPTION_MAX = 255
_BAD = re.compile(r"[\s\"'`\\,<>{}|^]")


class UrlError(ValueError):
    """One line: why --url cannot be used."""


def check_base_url(url: str) -> str:
    """The base URL without trailing slashes, or UrlError."""
    if not url or _BAD.search(url) or not url.isascii() or not url.isprintable():
        raise UrlError(f"--url {url!r}: spaces, quotes, backslashes, commas and non-ASCII characters cannot "
                       "travel in a DHCP option; give e.g. http://192.168.0.2:8080")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlError(f"--url {url!r}: give an http:// or https:// URL with a host, e.g. http://192.168.0.2:8080 "
                       "(where DIR/http/ is served)")
    if parts.query or parts.fragment:
        raise UrlError(f"--url {url!r}: no ?query or #fragment: file paths are appended to it")
    return url.rstrip("/")


def file_url(base: str, relpath: str) -> str:
    """The URL of http/RELPATH (contract: URL.rstrip('/') + '/' + relpath)."""
    return base.rstrip("/") + "/" + relpath


def check_option_length(url: str, what: str) -> None:
    if len(url.encode()) > OPTION_MAX:
        raise UrlError(f"the URL of {what} is {len(url.encode())} bytes, more than a DHCP option holds "
                       f"({OPTION_MAX}); give a shorter --url")


__all__ = ["OPTION_MAX", "UrlError", "check_base_url", "check_option_length", "file_url"]
