"""generator/devices/__init__.py: the drivers load without napalm's vendor drivers, and napalm's own
names still work when something asks for them (issue 32: start-up time of deploy, drift, verify)."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import sys
import generator.devices.nvue, generator.devices.sonic, generator.devices.sessions
print(sorted(m for m in ("napalm.eos", "napalm.junos", "napalm.nxos", "napalm.ios") if m in sys.modules))
import napalm
from generator.devices.sonic import SonicDriver
print(napalm.get_network_driver("sonic_fabric") is SonicDriver, "napalm.junos" in sys.modules, bool(napalm.__version__))
"""


def test_drivers_load_without_napalms_vendor_drivers_and_napalm_still_works():
    run = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.splitlines() == ["[]", "True True True"]


def test_a_name_napalm_lacks_is_an_attribute_error():
    run = subprocess.run([sys.executable, "-c", "import generator.devices.ssh, napalm\n"
                          "try:\n    napalm.no_such_name\nexcept AttributeError as exc:\n    print(exc)"],
                         capture_output=True, text=True, timeout=120, check=True)
    assert run.stdout.strip() == "module 'napalm' has no attribute 'no_such_name'"
