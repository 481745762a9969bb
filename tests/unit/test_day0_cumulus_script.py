"""The Cumulus ZTP script: `bash -n` and shellcheck clean for every example, and run with bash
against fake switch tools (nv, hostname, ip, curl, logger) that do what contract section 3 says
the switch's tools do: the right release applies the right file and exits 0; anything else
exits non-zero with nothing applied."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from generator.day0.kit import build_kit, write_kit
from tests.day0_support import URL, compiled, inventory, mac_of

CUMULUS_EXAMPLES = ("small", "medium", "large", "phased")
SHELLCHECK = shutil.which("shellcheck")


@pytest.mark.parametrize("name", CUMULUS_EXAMPLES)
def test_script_is_bash_and_shellcheck_clean(name: str, tmp_path: Path) -> None:
    text, plan = compiled(name)
    kit = build_kit(plan, text, inventory(plan, switches=len(plan.switches) - 1), URL, "eth0", PASSWORD)
    script = tmp_path / "cumulus-ztp.sh"
    script.write_text(kit.files["http/ztp/cumulus-ztp.sh"])
    assert script.read_text().startswith("#!/bin/bash\n# CUMULUS-AUTOPROVISIONING\n")
    r = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    if SHELLCHECK is None:
        pytest.skip("shellcheck is not installed")
    r = subprocess.run([SHELLCHECK, "--shell=bash", "--severity=style", str(script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    # no jq or python on the switch (contract section 3)
    code = "\n".join(line for line in script.read_text().splitlines() if not line.lstrip().startswith("#"))
    assert "jq " not in code and "python" not in code


FAKES = {
    "nv": """\
        #!/bin/bash
        case "$1 $2" in
          "show system")
            if [ -n "${FAKE_NO_PRODUCT_RELEASE:-}" ]; then
              printf '{"build": "Cumulus Linux %s", "hostname": "%s"}\\n' "$FAKE_RELEASE" "$FAKE_HOSTNAME"
            else
              printf '{\\n  "build": "Cumulus Linux %s",\\n  "hostname": "%s",\\n  "product-release": "%s"\\n}\\n' \\
                "$FAKE_RELEASE" "$FAKE_HOSTNAME" "$FAKE_RELEASE"
            fi ;;
          "config replace"|"config patch")
            [ -f "$3" ] || exit 1
            echo "nv config $2 $(sha256sum "$3" | cut -d ' ' -f 1)" >> "$FAKE_DIR/calls" ;;
          "config apply"|"config save") echo "nv $*" >> "$FAKE_DIR/calls" ;;
          "set system") echo "nv $1 $2 $3 $4 $5 $6" >> "$FAKE_DIR/calls" ;;
          "set interface"|"unset interface") echo "nv $*" >> "$FAKE_DIR/calls" ;;
          *) echo "nv: unexpected $*" >> "$FAKE_DIR/calls"; exit 2 ;;
        esac
        """,
    "hostname": """\
        #!/bin/bash
        echo "$FAKE_HOSTNAME"
        """,
    "ip": """\
        #!/bin/bash
        [ "$*" = "-br link show dev eth0" ] || exit 1
        printf 'eth0             UP             %s <BROADCAST,MULTICAST,UP,LOWER_UP>\\n' "$FAKE_MAC"
        """,
    "curl": """\
        #!/bin/bash
        out= url=
        while [ $# -gt 0 ]; do
          case "$1" in
            -o) out=$2; shift 2 ;;
            --retry) shift 2 ;;
            -*) shift ;;
            *) url=$1; shift ;;
          esac
        done
        echo "curl $url" >> "$FAKE_DIR/calls"
        rel=${url#"$FAKE_BASE"/}
        if [ "$rel" = "$url" ] || [ ! -f "$FAKE_HTTP/$rel" ]; then exit 22; fi
        cp "$FAKE_HTTP/$rel" "$out"
        """,
    "logger": """\
        #!/bin/bash
        [ "$1" = "-t" ] && shift 2
        echo "$*" >> "$FAKE_DIR/log"
        """,
    # never the host's own: these would change the machine's accounts
    "passwd": """\
        #!/bin/bash
        echo "passwd $*" >> "$FAKE_DIR/calls"
        """,
    "usermod": """\
        #!/bin/bash
        echo "usermod $1 $(printf '%s' "$2" | sha256sum | cut -c 1-8) $3" >> "$FAKE_DIR/calls"
        """,
}
PASSWORD = "lab-Secret-7f3"


class Switch:
    """A fake Cumulus switch: the tools in a PATH directory, their calls and log lines in files."""

    def __init__(self, tmp: Path, kit: Path, base: str, *, hostname: str, mac: str, release: str) -> None:
        self.dir = tmp / "switch"
        bin_dir = self.dir / "bin"
        bin_dir.mkdir(parents=True)
        for name, body in FAKES.items():
            (bin_dir / name).write_text(textwrap.dedent(body))
            (bin_dir / name).chmod(0o755)
        self.kit = kit
        self.env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "FAKE_DIR": str(self.dir), "FAKE_HTTP": str(kit / "http"),
                    "FAKE_BASE": base, "FAKE_HOSTNAME": hostname, "FAKE_MAC": mac, "FAKE_RELEASE": release,
                    "HOME": str(self.dir), "TMPDIR": str(self.dir)}

    def run(self, **env: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(self.kit / "http/ztp/cumulus-ztp.sh")], capture_output=True, text=True,
                              env={**self.env, **env}, cwd=self.dir, timeout=60)

    def _lines(self, name: str) -> list[str]:
        path = self.dir / name
        return path.read_text().splitlines() if path.exists() else []

    @property
    def calls(self) -> list[str]:
        return self._lines("calls")

    @property
    def log(self) -> list[str]:
        return self._lines("log")


@pytest.fixture()
def medium_kit(tmp_path: Path) -> tuple[Path, object]:
    text, plan = compiled("medium")
    kit = write_kit(build_kit(plan, text, inventory(plan), URL, "eth0"), tmp_path / "kit")
    return kit, plan


def _sha(kit: Path, name: str) -> str:
    return json.loads((kit / "http/manifest.json").read_text())["files"][f"switches/{name}/startup.yaml"]


def test_right_release_replaces_applies_saves(tmp_path: Path, medium_kit) -> None:
    kit, plan = medium_kit
    name = plan.switches[4].name
    sw = Switch(tmp_path, kit, URL, hostname=name, mac="44:38:39:ff:ff:ff", release="5.11.0")
    r = sw.run()
    assert r.returncode == 0, (sw.log, sw.calls)
    user = next(u for u in plan.management.users if u.name == plan.deploy_user)
    hashed = hashlib.sha256(user.hashed_password.encode()).hexdigest()[:8]
    assert sw.calls == [f"curl {URL}/switches/{name}/startup.yaml", f"nv config replace {_sha(kit, name)}",
                        "nv config apply -y", "nv config save", "passwd -x 99999 cumulus",
                        f"usermod -p {hashed} cumulus"]
    assert len(sw.log) == 1 and sw.log[0].startswith(f"provisioned {name} (found by hostname {name})")
    assert "$6$" not in r.stdout + r.stderr + "\n".join(sw.log)        # no password hash in any log
    assert not [p for p in sw.dir.iterdir() if p.name.startswith("tmp.")]   # its temporary directory is gone


def test_factory_hostname_found_by_eth0_mac(tmp_path: Path, medium_kit) -> None:
    kit, plan = medium_kit
    name = plan.switches[3].name
    sw = Switch(tmp_path, kit, URL, hostname="cumulus", mac=mac_of(3).upper(), release="5.11")
    r = sw.run(FAKE_NO_PRODUCT_RELEASE="1")          # only "build": the release is read from it
    assert r.returncode == 0, (sw.log, sw.calls)
    assert f"nv config replace {_sha(kit, name)}" in sw.calls
    assert sw.log[0].startswith(f"provisioned {name} (found by eth0 MAC {mac_of(3)})")


def test_other_release_refuses_with_one_line(tmp_path: Path, medium_kit) -> None:
    kit, plan = medium_kit
    name = plan.switches[0].name
    sw = Switch(tmp_path, kit, URL, hostname=name, mac=mac_of(0), release="5.15.0")
    r = sw.run()
    assert r.returncode != 0
    assert len(sw.log) == 1
    assert sw.log[0].startswith(f"refusing: {name} runs Cumulus Linux 5.15.0, the fabric is rendered for "
                                "Cumulus Linux 5.11 (switch_os.version); nothing applied")
    assert not [c for c in sw.calls if c.startswith(("nv", "curl"))]


def test_sha_mismatch_applies_nothing(tmp_path: Path, medium_kit) -> None:
    kit, plan = medium_kit
    name = plan.switches[1].name
    served = kit / "http/switches" / name / "startup.yaml"
    served.write_text(served.read_text() + "# changed after day0\n")
    sw = Switch(tmp_path, kit, URL, hostname=name, mac=mac_of(1), release="5.11.0")
    r = sw.run()
    assert r.returncode != 0
    assert not [c for c in sw.calls if c.startswith("nv")]
    assert len(sw.log) == 1 and "has sha256" in sw.log[0] and "nothing applied" in sw.log[0]


def test_unknown_switch_and_missing_file_fail(tmp_path: Path, medium_kit) -> None:
    kit, plan = medium_kit
    sw = Switch(tmp_path, kit, URL, hostname="cumulus", mac="02:00:00:00:00:99", release="5.11.0")
    r = sw.run()
    assert r.returncode != 0 and sw.calls == []
    assert len(sw.log) == 1 and sw.log[0].startswith("error: no entry for hostname 'cumulus' or eth0 MAC")
    name = plan.switches[2].name
    (kit / "http/switches" / name / "startup.yaml").unlink()
    sw2 = Switch(tmp_path / "b", kit, URL, hostname=name, mac=mac_of(2), release="5.11.0")
    r = sw2.run()
    assert r.returncode != 0 and not [c for c in sw2.calls if c.startswith("nv")]
    assert "download of" in sw2.log[0] and "curl exit 22" in sw2.log[0]


def test_without_management_the_script_patches(tmp_path: Path) -> None:
    text, plan = compiled("small")
    kit = write_kit(build_kit(plan, text, inventory(plan), URL, "eth0", PASSWORD), tmp_path / "kit")
    name = plan.switches[0].name
    sw = Switch(tmp_path, kit, URL, hostname=name, mac=mac_of(0), release="5.11.2")
    r = sw.run()
    assert r.returncode == 0, sw.log
    # the factory account stays: NVUE and /etc/shadow get the deploy password's hash, no expiry
    length = __import__("ipaddress").ip_network(plan.mgmt_pool).prefixlen
    gateway = str(__import__("ipaddress").ip_network(plan.mgmt_pool)[1])
    address = f"{plan.switches[0].mgmt_ip}/{length}"
    # eth0 static at its planned address after day 0, in patch mode too
    assert sw.calls[1:7] == [f"nv config patch {_sha(kit, name)}", f"nv set interface eth0 ip address {address}",
                             f"nv set interface eth0 ip gateway {gateway}", "nv unset interface eth0 ip address dhcp",
                             "nv set system aaa user cumulus hashed-password", "nv config apply -y"]
    assert sw.calls[-2:][0] == "passwd -x 99999 cumulus" and sw.calls[-1].startswith("usermod -p ")
    script = (kit / "http/ztp/cumulus-ztp.sh").read_text()
    assert PASSWORD not in script
    # the same intent and password give the same kit
    again = build_kit(plan, text, inventory(plan), URL, "eth0", PASSWORD).files["http/ztp/cumulus-ztp.sh"]
    assert again == script


def test_without_management_or_password_the_kit_is_refused() -> None:
    from generator.day0.kit import KitError

    text, plan = compiled("small")
    with pytest.raises(KitError, match="deploy.user cumulus: without management.users the kit keeps the factory "
                                       "account, whose password must be changed at the first login"):
        build_kit(plan, text, inventory(plan), URL, "eth0")


def test_hostile_url_stays_one_literal_word(tmp_path: Path) -> None:
    """A URL with shell syntax the URL rules allow ($, parentheses, semicolons) reaches curl as it
    is: nothing runs."""
    base = "http://192.168.0.2:8080/k$(touch${IFS}pwned);x"
    base = base.replace("${IFS}", "")      # braces are refused by the URL rules; keep what passes
    text, plan = compiled("medium")
    kit = write_kit(build_kit(plan, text, inventory(plan), base, "eth0"), tmp_path / "kit")
    name = plan.switches[0].name
    sw = Switch(tmp_path, kit, base, hostname=name, mac=mac_of(0), release="5.11.0")
    r = sw.run()
    assert r.returncode == 0, sw.log
    assert sw.calls[0] == f"curl {base}/switches/{name}/startup.yaml"
    assert not list(tmp_path.rglob("pwned*")) and not os.path.exists("pwned")
    assert hashlib.sha256((kit / "http/ztp/cumulus-ztp.sh").read_bytes()).hexdigest() == json.loads(
        (kit / "http/manifest.json").read_text())["files"]["ztp/cumulus-ztp.sh"]


def test_downloads_retry_refused_connections_from_the_mgmt_vrf() -> None:
    """curl --retry alone does not retry a refused connection; eth0 sits in VRF mgmt (issue 32)."""
    text, plan = compiled("small")
    script = build_kit(plan, text, inventory(plan), URL, "eth0", PASSWORD).files["http/ztp/cumulus-ztp.sh"]
    assert "fetch=(curl -fsS --retry 5 --retry-connrefused)" in script
    assert "fetch=(ip vrf exec mgmt \"${fetch[@]}\")" in script
    assert "grep -m 1 '^Error'" in script          # the driver's rule for nv's output
