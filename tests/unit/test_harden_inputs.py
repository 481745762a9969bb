"""Issue 15, findings 6 and 7: input bombs and silent wrong output, each through the command
that reproduced it (`fabricgen validate|render|capacity|deploy` as a subprocess).

The contract for every case: exit non-zero, one line that names the file (with a line where
there is one) and the key path, no traceback, nothing written, and no wait (every run has a
timeout far below what the original took: 37 s to run out of memory, a FIFO forever).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.intent.loader import MAX_DEPTH, MAX_INTENT_BYTES_ENV, IntentError, load_intent, parse_yaml
from tests.cli_runner import run_cli
from tests.conftest import example

FABRICGEN = str(Path(sys.executable).parent / "fabricgen")


def _env(env: dict[str, str] | None) -> dict[str, str]:
    full = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})}
    full.pop(MAX_INTENT_BYTES_ENV, None) if env is None or MAX_INTENT_BYTES_ENV not in env else None
    return full


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: int = 120):
    """The installed `fabricgen` in a process of its own: for inputs that could block, recurse or
    exhaust memory, where the timeout and a fresh interpreter are part of what is tested."""
    return subprocess.run([FABRICGEN, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env=_env(env))


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """The same command in this process (tests/cli_runner.py): for a refusal judged by its output
    and exit code alone."""
    return run_cli(*args, cwd=cwd, env=_env(None))


def _one_error(r, must: tuple[str, ...]) -> str:
    """The run failed with exactly one line carrying every string in `must`."""
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert "Traceback" not in out, out
    lines = [ln for ln in out.splitlines() if all(m in ln for m in must)]
    assert len(lines) == 1, out
    return lines[0]


def _medium(tmp_path: Path, old: str | None = None, new: str | None = None) -> Path:
    text = example("medium").read_text()
    if old is not None:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "fabric.yaml"
    path.write_text(text)
    return path


# --- finding 6: input bombs -------------------------------------------------------------------

def _key_bomb() -> str:
    """A billion-laughs alias bomb whose anchors all live inside one mapping key."""
    levels = ['&a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"&{c} [" + ",".join([f"*{p}"] * 9) + "]" for p, c in zip("abcdefgh", "bcdefghi", strict=True)]
    return "fabric: {name: x}\n? [" + ", ".join(levels) + "]\n: boom\n"


def test_alias_bomb_in_a_mapping_key_fails_fast(tmp_path):
    text = _key_bomb()
    assert 300 < len(text) < 600            # the bomb was 540 bytes
    (tmp_path / "fabric.yaml").write_text(text)
    r = _run(["validate", "fabric.yaml"], tmp_path, timeout=60)
    line = _one_error(r, ("fabric.yaml:2",))
    assert "mapping key must be a plain name" in line


def test_alias_expansion_counts_keys_against_the_budget():
    # 9^6 = 531,441 mappings of two keys each: under a million values, over a million nodes with the keys
    levels = ["&a {k1: 1, k2: 2}"] + [f"&{c} [" + ",".join([f"*{p}"] * 9) + "]"
                                     for p, c in zip("abcdef", "bcdefg", strict=True)]
    text = "x: [" + ", ".join(levels) + "]\n"
    with pytest.raises(IntentError) as exc:
        parse_yaml(text, "bomb.yaml")
    assert len(exc.value.problems) == 1
    assert "keys and values once YAML aliases are expanded" in str(exc.value)


@pytest.mark.parametrize("shape", ["flow", "block"])
def test_deep_nesting_is_one_line_not_a_recursion_traceback(tmp_path, shape):
    depth = 500
    if shape == "flow":
        text = "fabric: " + "[" * depth + "]" * depth + "\n"
    else:
        text = "".join("  " * i + f"k{i}:\n" for i in range(depth)) + "  " * depth + "x\n"
    (tmp_path / "fabric.yaml").write_text(text)
    r = _run(["validate", "fabric.yaml"], tmp_path)
    line = _one_error(r, ("fabric.yaml:",))
    assert f"more than {MAX_DEPTH} levels" in line and len(r.stdout + r.stderr) < 1000


def test_nesting_at_the_limit_still_parses():
    text = "a: " + "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1) + "\n"
    data, _ = parse_yaml(text, "deep.yaml")
    assert isinstance(data["a"], list)


def test_fifty_megabyte_intent_is_refused_before_parsing(tmp_path):
    path = tmp_path / "fabric.yaml"
    with path.open("wb") as fh:
        fh.write(example("medium").read_bytes())
        fh.write(b"# " + b"x" * (50 * 1024 * 1024) + b"\n")
    r = _run(["validate", "fabric.yaml"], tmp_path, timeout=60)
    line = _one_error(r, ("fabric.yaml",))
    assert "4194304-byte limit" in line and MAX_INTENT_BYTES_ENV in line


def test_the_size_limit_is_raised_and_checked_through_its_variable(tmp_path, monkeypatch):
    path = _medium(tmp_path)
    size = path.stat().st_size
    monkeypatch.setenv(MAX_INTENT_BYTES_ENV, str(size - 1))
    with pytest.raises(IntentError, match=f"above the {size - 1}-byte limit"):
        load_intent(path)
    monkeypatch.setenv(MAX_INTENT_BYTES_ENV, str(size))
    assert load_intent(path).intent.fabric.name == "medium"
    monkeypatch.setenv(MAX_INTENT_BYTES_ENV, "4MB")
    with pytest.raises(IntentError, match=f"{MAX_INTENT_BYTES_ENV}: '4MB' is not a size in bytes"):
        load_intent(path)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_intent_that_is_not_a_regular_file_never_blocks(tmp_path, kind):
    if kind == "fifo":
        target = tmp_path / "fabric.yaml"
        os.mkfifo(target)
    else:
        target = Path("/dev/zero")
    r = _run(["validate", str(target)], tmp_path, timeout=30)
    assert "not a regular file" in _one_error(r, (str(target),))


# --- finding 6: password_file; finding 7: endpoint port ------------------------------------------

def _deploy(tmp_path: Path, endpoints: str, *, own_process: bool = False) -> subprocess.CompletedProcess:
    (tmp_path / "fabric.yaml").write_text(example("small").read_text())
    (tmp_path / "endpoints.yml").write_text(endpoints)
    args = ["deploy", "fabric.yaml", "--endpoints", "endpoints.yml", "--yes", "--dry-run"]
    return _run(args, tmp_path, timeout=60) if own_process else _cli(args, tmp_path)


def test_endpoint_port_with_a_fraction_is_refused_not_truncated(tmp_path):
    r = _deploy(tmp_path, "switches:\n  small-leaf-1: {host: 127.0.0.1, port: 41871.9}\npassword_env: NOPE\n")
    line = _one_error(r, ("endpoints.yml", "switches.small-leaf-1.port"))
    assert "41871.9 is not a port" in line and "1-65535" in line


@pytest.mark.parametrize("port", ["0", "65536", "-22", "true", "'22x'", "[22]"])
def test_endpoint_ports_outside_1_65535_are_refused(tmp_path, port):
    r = _deploy(tmp_path, f"switches:\n  small-leaf-1: {{host: 127.0.0.1, port: {port}}}\n")
    assert "is not a port" in _one_error(r, ("switches.small-leaf-1.port",))


def test_password_file_dev_zero_is_refused_without_reading(tmp_path):
    r = _deploy(tmp_path, "switches:\n  small-leaf-1: {host: 127.0.0.1, port: 2222}\npassword_file: /dev/zero\n",
                own_process=True)
    assert "not a regular file" in _one_error(r, ("password_file /dev/zero",))


def test_password_file_fifo_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "pw")
    r = _deploy(tmp_path, "switches:\n  small-leaf-1: {host: 127.0.0.1, port: 2222}\npassword_file: pw\n",
                own_process=True)
    assert "not a regular file" in _one_error(r, ("password_file",))


@pytest.mark.parametrize("mode, size, expect", [(0o644, 10, "must be 0600 or stricter"),
                                                (0o640, 10, "must be 0600 or stricter"),
                                                (0o700, 10, "must be 0600 or stricter"),
                                                (0o600, 100_000, "more than the 4096")])
def test_password_file_mode_and_size(tmp_path, mode, size, expect):
    pw = tmp_path / "pw"
    pw.write_text("x" * size)
    pw.chmod(mode)
    r = _deploy(tmp_path, "switches:\n  small-leaf-1: {host: 127.0.0.1, port: 2222}\npassword_file: pw\n")
    assert expect in _one_error(r, ("password_file",))


def test_password_file_0400_is_accepted(tmp_path):
    from generator.devices.credentials import _password

    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    pw.chmod(0o400)
    assert _password({"password_file": "pw"}, tmp_path, "e.yml") == "s3cret"


# --- finding 7: silent wrong output -------------------------------------------------------------

def test_colliding_host_names_are_an_error(tmp_path):
    """The original: hosts.name "gpu{n!s:.1}" with 12 nodes validated ok and merged hosts."""
    path = _medium(tmp_path, 'name: "gpu{n:03d}"', 'name: "gpu{n!s:.1}"')
    assert yaml.safe_load(path.read_text())["topology"]["nodes"] >= 10
    r = _cli(["validate", "fabric.yaml"], tmp_path)
    line = _one_error(r, ("FG407", "hosts.name"))
    assert "fabric.yaml:" in line and "'gpu1'" in line


def test_colliding_host_names_are_not_rendered(tmp_path):
    _medium(tmp_path, 'name: "gpu{n:03d}"', 'name: "gpu{n!s:.1}"')
    r = _cli(["render", "fabric.yaml", "-o", "out"], tmp_path)
    _one_error(r, ("FG407",))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("old, new, path", [
    ('name: "gpu{n:03d}"', 'name: "gpu{n:03d}\\n"', "hosts.name"),
    ("name: medium\n", 'name: "-"\n', "fabric.name"),
    ("name: medium\n", 'name: "medium\\n"\n', "fabric.name"),
    ("name: medium\n", "name: medium-\n", "fabric.name"),
    ("mgmt_interface: eno1", 'mgmt_interface: "eno1\\n"', "hosts.mgmt_interface"),
    ("mgmt_interface: eno1", 'mgmt_interface: ".."', "hosts.mgmt_interface"),
])
def test_names_are_whole_string_labels(tmp_path, old, new, path):
    """`$` matched before a trailing newline; "-" gave switches named --leaf-1."""
    _medium(tmp_path, old, new)
    r = _cli(["validate", "fabric.yaml"], tmp_path)
    assert "fabric.yaml:" in _one_error(r, (path,))


def test_ecn_threshold_beyond_the_buffer_is_an_error(tmp_path):
    _medium(tmp_path, "max_threshold: 1500KB", f"max_threshold: {10**38}")
    r = _cli(["validate", "fabric.yaml"], tmp_path)
    line = _one_error(r, ("FG214", "roce.ecn.max_threshold"))
    assert line.split(": ", 1)[1].startswith("error")


def test_non_finite_model_params_fail_capacity_cleanly(tmp_path):
    """The original: `fabricgen capacity` with workload.model_params: .inf printed a traceback."""
    _medium(tmp_path, "model_params: 70e9", "model_params: .inf")
    r = _cli(["capacity", "fabric.yaml"], tmp_path)
    assert "not a finite number" in _one_error(r, ("fabric.yaml:", "workload.model_params"))


@pytest.mark.parametrize("old, new, path", [
    ("model_params: 70e9", "model_params: inf", "workload.model_params"),
    ("model_params: 70e9", "model_params: -.inf", "workload.model_params"),
    ("host_leaf: 3", "host_leaf: .nan", "topology.cables.host_leaf"),
])
def test_non_finite_numbers_are_refused_everywhere(tmp_path, old, new, path):
    with pytest.raises(IntentError) as exc:
        load_intent(_medium(tmp_path, old, new))
    assert [p.path for p in exc.value.problems] == [path]
    assert "finite" in str(exc.value)


def test_netdev_names_that_look_like_numbers_stay_strings(tmp_path):
    """0x10 and 1.5 came back from Ansible's from_yaml of netplan.yaml as numbers."""
    text = example("small").read_text().replace("netdev: ens1f0np0", 'netdev: "0x10"')
    text = text.replace("netdev: ens2f0np0", 'netdev: "1.5"')
    (tmp_path / "fabric.yaml").write_text(text)
    r = _cli(["render", "fabric.yaml", "-o", "out"], tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    netplan = yaml.safe_load((tmp_path / "out/hosts/gpu01/netplan.yaml").read_text())
    assert list(netplan["network"]["ethernets"]) == ["0x10", "1.5"]
    inventory = yaml.safe_load((tmp_path / "out/inventory.yml").read_text())
    rails = inventory["all"]["children"]["hosts"]["hosts"]["gpu01"]["fabricgen_rails"]
    assert [nic["netdev"] for nic in rails] == ["0x10", "1.5"]


def _nccl(tmp_path: Path, key: str, value: str) -> subprocess.CompletedProcess:
    _medium(tmp_path, "  settings: {}\n", f"  settings:\n    {key}: {value}\n")
    return _cli(["validate", "fabric.yaml"], tmp_path)


def test_nul_in_an_nccl_value_is_refused(tmp_path):
    r = _nccl(tmp_path, "NCCL_DEBUG_SUBSYS", '"INIT\\0NET"')
    assert "not printable ASCII" in _one_error(r, ("FG302", "nccl.settings.NCCL_DEBUG_SUBSYS"))


@pytest.mark.parametrize("key, value, code, words", [
    ("NCCL_DEBUG_FILE", "/etc/passwd", "FG320", "system directory"),
    ("NCCL_NET_PLUGIN", "../../tmp/evil", "FG320", "relative"),
    ("NCCL_TOPO_FILE", "topo.xml", "FG320", "relative"),
    ("NCCL_GRAPH_FILE", "/opt/x/../../etc/g.xml", "FG320", "climbs"),
])
def test_dangerous_nccl_paths_are_errors(tmp_path, key, value, code, words):
    r = _nccl(tmp_path, key, value)
    line = _one_error(r, (code, f"nccl.settings.{key}"))
    assert words in line and ": error " in line


def test_unusual_nccl_path_is_a_warning_and_usual_ones_pass(tmp_path):
    r = _nccl(tmp_path, "NCCL_NET_PLUGIN", "/srv/evil/libnccl-net.so")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FG321" in r.stdout + r.stderr
    for key, value in (("NCCL_DEBUG_FILE", "/var/log/nccl/%h.%p.log"), ("NCCL_NET_PLUGIN", "aws-ofi"),
                       ("NCCL_TOPO_FILE", "/var/run/nvidia-topologyd/virtualTopology.xml")):
        r = _nccl(tmp_path, key, value)
        assert r.returncode == 0 and "FG32" not in r.stdout + r.stderr, r.stdout + r.stderr
