"""Issue 34 finding 2: a hostile kit script runs in a box (generator/lab/ztp_sandbox.py). The
probe's kit wrote outside its private directory and left a `setsid` process alive after
`lab down`; here the writes fail, and the process is gone when the script ends and after
`lab down`. Real parts: a real lab, real bash, real unshare/setpriv."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from generator.lab.control import LabDevice, lab_down
from generator.lab.ztp import ZtpError, lab_ztp
from tests.integration.test_lab_ztp import handmade_kit

pytestmark = pytest.mark.integration

ESCAPE = """#!/bin/bash
# CUMULUS-AUTOPROVISIONING
for target in OUTSIDE; do
    if echo pwned > "$target" 2>/dev/null; then logger -t probe "wrote $target"; else logger -t probe "refused $target"; fi
done
echo mine > "$TMPDIR/mine" && logger -t probe "private: $(cat "$TMPDIR/mine")"
# a daemon out of the script's session; the script waits for its pid file (no sleep)
/usr/bin/setsid /bin/bash -c 'echo $$ > "$1"; while :; do /bin/sleep 1; done' TOKEN "$TMPDIR/daemon.pid" &
until [ -s "$TMPDIR/daemon.pid" ]; do :; done
logger -t probe "daemon: $(cat "$TMPDIR/daemon.pid")"
exit 0
"""


def _alive(token: str) -> list[int]:
    """PIDs whose command line holds TOKEN."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if token.encode() in Path(f"/proc/{entry}/cmdline").read_bytes():
                    found.append(int(entry))
            except OSError:
                continue
    return found


def test_a_hostile_kit_writes_nowhere_else_and_leaves_no_process(tmp_path, lab_start):
    token = f"fabricgen-escape-{secrets.token_hex(8)}"
    lab = lab_start([LabDevice("sw1", "cumulus", "5.11", mgmt_mode="dhcp", ztp=True, mac="44:38:39:00:00:77")])
    outside = [tmp_path / "escaped", lab.directory / "escaped", Path("/tmp") / f"{token}.txt"]
    script = ESCAPE.replace("OUTSIDE", " ".join(str(p) for p in outside)).replace("TOKEN", token)
    try:
        [result] = lab_ztp(lab.directory, handmade_kit(tmp_path, script))
        syslog = (lab.directory / "devices" / "sw1" / "var" / "log" / "syslog").read_text()
        said = [line.split(" probe: ", 1)[1] for line in syslog.splitlines() if " probe: " in line]
        assert said[:3] == [f"refused {p}" for p in outside], said
        assert "private: mine" in said and any(s.startswith("daemon: ") for s in said), said
        assert result.ok, result.line
        assert not any(p.exists() for p in outside)
        # the script has ended: its PID namespace, and the daemon with it, are gone
        assert _alive(token) == []
        lab_down(lab.directory)
        assert _alive(token) == []
    finally:
        for pid in _alive(token):           # only what this test's kit started, by PID
            os.kill(pid, 9)


def test_without_user_namespaces_lab_ztp_refuses_before_any_switch_moves(tmp_path, lab_start, monkeypatch):
    from generator.lab import ztp_sandbox

    lab = lab_start([LabDevice("sw1", "cumulus", "5.11", mgmt_mode="dhcp", ztp=True, mac="44:38:39:00:00:77")])
    marker = tmp_path / "ran"
    kit = handmade_kit(tmp_path, f"#!/bin/bash\n# CUMULUS-AUTOPROVISIONING\ntouch {marker}\n")
    # a stand-in unshare that fails as unshare(1) does where user namespaces are off
    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    tools = dict(ztp_sandbox._tools())
    monkeypatch.setattr(ztp_sandbox, "_tools", lambda: {**tools, "unshare": str(fake)})
    ztp_sandbox.check.cache_clear()
    try:
        with pytest.raises(ZtpError, match="cannot contain kit scripts: .*Operation not permitted.*user namespaces"):
            lab_ztp(lab.directory, kit)
    finally:
        ztp_sandbox.check.cache_clear()
    assert not marker.exists()


def test_a_mount_no_path_reaches_does_not_stop_the_box(tmp_path):
    """A mount listed in mountinfo that no path reaches (hidden under a later mount, or detached
    because another program unlinked its mount point meanwhile, as `ip netns del` does in a parallel
    root test) cannot be written through, so it does not stop the box; before, the box refused
    (`cannot make ... read-only`, exit 125) and `lab ztp` failed with no line per switch (CI, stop 41).
    The hidden mount is made in a user namespace of the test's own (no root)."""
    import subprocess

    from generator.lab import ztp_sandbox

    hidden = tmp_path / "outer" / "a" / "b"
    hidden.mkdir(parents=True)
    box = tmp_path / "box"
    box.mkdir()
    inner = ztp_sandbox.command(["/bin/sh", "-c", "echo boxed > \"$0\"", str(box / "ran")], box)
    setup = f'mount -t tmpfs none "{hidden}" && mount -t tmpfs none "{hidden.parent}" && exec "$@"'
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", setup, "setup", *inner],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert (box / "ran").read_text() == "boxed\n"
