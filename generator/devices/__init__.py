"""Talking to switches, shared by deploy, drift and verify: which switches an endpoints file
lists (endpoints.py) and one SSH session per switch per command, opened in a bounded pool,
with one retry of a read that did not complete (sessions.py).

The drivers need napalm's base classes and exceptions only (napalm.base). napalm's package
`__init__` imports every vendor driver it ships (EOS, IOS, IOS-XR, Junos with junos-eznc, ncclient
and lxml, NX-OS ...: napalm/__init__.py, "to fix threading deadlock on get_network_driver()"):
0.4-0.6 s of every `fabricgen deploy`, `drift` and `verify` start-up on a 2-core bastion, before a
switch is asked anything (issue 32). So the package is registered without running that file; the
first use of a name only it defines (`napalm.get_network_driver`, `napalm.SUPPORTED_DRIVERS`, a
community driver's lookup) runs it then, in full, and everything napalm says keeps working.
"""

from __future__ import annotations

import importlib.util
import sys
import threading


def _napalm_on_first_use() -> None:
    if "napalm" in sys.modules:
        return                          # imported already (a test, a plugin): nothing to save
    spec = importlib.util.find_spec("napalm")
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return                          # not installed as a package: the import reports it
    package = importlib.util.module_from_spec(spec)     # __path__ set: napalm.base imports
    lock = threading.Lock()

    def __getattr__(name: str):        # PEP 562: only for what the package does not hold yet
        with lock:
            if package.__dict__.get("__getattr__") is __getattr__:
                del package.__dict__["__getattr__"]
                spec.loader.exec_module(package)       # napalm/__init__.py, into the same module
        try:
            return package.__dict__[name]
        except KeyError:
            raise AttributeError(f"module 'napalm' has no attribute {name!r}") from None

    package.__getattr__ = __getattr__
    sys.modules["napalm"] = package


_napalm_on_first_use()
