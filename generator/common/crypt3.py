"""crypt(3) from the system's libcrypt (libxcrypt): the hashes a switch's /etc/shadow and NVUE's
`hashed-password` hold ($6$ SHA-512, $y$ yescrypt). One wrapper for the deploy pre-flight, the day-0
kit and the lab.

Python's `crypt` module is deprecated (PEP 594) and gone in 3.13, so libcrypt is called through
ctypes. crypt(3) returns a pointer to a static buffer: calls are serialised by a lock.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from functools import cache

_CRYPT_LOCK = threading.Lock()


@cache
def _libcrypt():
    name = ctypes.util.find_library("crypt")
    if not name:
        return None
    lib = ctypes.CDLL(name)
    lib.crypt.restype = ctypes.c_char_p
    lib.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    return lib


def available() -> bool:
    return _libcrypt() is not None


def crypt(word: str, salt: str) -> str | None:
    """crypt(3) of `word` with `salt` (a full hash works as its own salt); None when this machine
    has no libcrypt or libcrypt refuses the salt."""
    lib = _libcrypt()
    if lib is None:
        return None
    with _CRYPT_LOCK:
        result = lib.crypt(word.encode(), salt.encode())
    return result.decode() if result else None
