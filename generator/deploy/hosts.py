"""Run playbooks/hosts.yml (and discover.yml) through ansible-runner and summarise the result per host.

SSH host keys are checked strictly by default: a GPU server whose key changed is
refused rather than silently trusted. Pass `known_hosts` to use a dedicated file.

Play keywords (`serial`, `max_fail_percentage`) are templated before Ansible reads any host
or group variable, so the inventory's `hosts` group vars that carry them reach the play only
as extra vars: they are read from the inventory here and passed on (a caller's extravars win).
A check run reads every host at once (nothing changes, so there is nothing to batch).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ansible_runner
import yaml

PLAYBOOK_NAME = "hosts.yml"
DISCOVER_PLAYBOOK = "discover.yml"
DISCOVER_TASK = "Read the RDMA NICs from sysfs"      # playbooks/discover.yml
APPLY_PLAY = "Install and apply the fabricgen host files, in batches"     # playbooks/hosts.yml, play 2
# playbooks/hosts.yml, play 2: a host this run drained and did not undrain ("<host>: left drained: why"),
# a Slurm drain of an operator's that could not be put back, and the re-raise of a rescued failure
# (its message is the failure already reported)
LEFT_DRAINED_TASK = "Report a host left drained by this run"
NOT_RESTORED_TASK = "Report a drain that could not be restored"
# a rail port DOWN, slower or at another MTU on a host the run changed nothing on: not drained, reported
PORT_WARNING_TASK = "Report a rail port not as planned"
REFAIL_TASK = "Stop after a failed host"
# fails every host still in a batch that lost one (unreachable): the rollout stops before the next batch
LOST_TASK = "Stop the rollout after a lost host"
DRAIN_TASK = "Drain the host before its changes (fabricgen_hosts_drain)"
UNDRAIN_TASK = "Undrain the host after its changes (fabricgen_hosts_undrain)"
PRE_DRAIN_TASK = "Record a drain set before this run"     # fg_we_drained false: an operator's drain, kept
# Slurm: this run's drain was replaced (or resumed) by someone else during the run, so not undrained;
# or its state could not be read before the undrain, so it stays drained (then a left-drained line)
NOT_OURS_TASK = "Report a drain that is no longer this run's"
# inventory `hosts` group vars that the playbook uses as play keywords
PLAY_KEYWORD_VARS = ("fabricgen_hosts_serial", "fabricgen_hosts_max_fail_percentage")
# a check run: every host in one batch, and no host's failure stops the others being read
CHECK_PLAY_VARS = {"fabricgen_hosts_serial": 0, "fabricgen_hosts_max_fail_percentage": 100}
# forks when deploy.hosts.forks is unset: the largest batch, within these bounds (a controller runs one
# process per fork, each with an SSH connection)
FORKS_MIN, FORKS_MAX = 5, 50


@dataclass
class HostStats:
    ok: int = 0
    changed: int = 0
    failed: int = 0
    unreachable: int = 0
    skipped: int = 0


@dataclass
class HostRunResult:
    status: str                                   # ansible-runner status: successful | failed | timeout | canceled
    rc: int
    hosts: dict[str, HostStats] = field(default_factory=dict)
    failures: list[tuple[str, str, str]] = field(default_factory=list)   # (host, task, message)
    changes: list[tuple[str, str]] = field(default_factory=list)          # (host, task)
    stdout: str = ""
    # (play, hosts) per play run in order: a play with `serial` runs once per batch
    batches: list[tuple[str, list[str]]] = field(default_factory=list)
    # host -> task -> module result, for the tasks named in `collect`
    results: dict[str, dict[str, dict]] = field(default_factory=dict)
    # (host, why) per host this run drained and left drained (playbooks/hosts.yml LEFT_DRAINED_TASK),
    # and per host whose earlier drain could not be restored (NOT_RESTORED_TASK)
    left_drained: list[tuple[str, str]] = field(default_factory=list)
    not_restored: list[tuple[str, str]] = field(default_factory=list)
    # (host, what) per host whose rail port is not as planned though its settings are (PORT_WARNING_TASK)
    port_warnings: list[tuple[str, str]] = field(default_factory=list)
    # (host, what) per host whose drain someone else took over or ended during the run (NOT_OURS_TASK)
    drain_notes: list[tuple[str, str]] = field(default_factory=list)
    # hosts that became unreachable in a batch of the apply play, which then stopped the rollout (LOST_TASK)
    lost: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.rc == 0 and not self.failures and all(
            s.failed == 0 and s.unreachable == 0 for s in self.hosts.values())

    @property
    def changed(self) -> int:
        return sum(s.changed for s in self.hosts.values())


def playbook_path(name: str = PLAYBOOK_NAME) -> Path:
    """playbooks/<name>: FABRICGEN_PLAYBOOKS, else next to the source tree."""
    env = os.environ.get("FABRICGEN_PLAYBOOKS")
    candidates = [Path(env)] if env else []
    candidates.append(Path(__file__).resolve().parents[2] / "playbooks")
    for base in candidates:
        if (base / name).is_file():
            return base / name
    raise FileNotFoundError(f"{name} not found in {', '.join(map(str, candidates))}: "
                            "set FABRICGEN_PLAYBOOKS to the playbooks directory")


class _InventoryLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """inventory.yml as generator/render/inventory.py writes it: `!unsafe` marks a verbatim string."""


_InventoryLoader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _hosts_group(inventory: str | os.PathLike[str]) -> dict:
    """The inventory's `hosts` group ({} when unreadable or absent)."""
    try:
        with open(inventory, encoding="utf-8") as fh:
            data = yaml.load(fh, Loader=_InventoryLoader)  # noqa: S506 - a SafeLoader subclass
    except (OSError, yaml.YAMLError):
        return {}   # ansible-playbook reports an unreadable inventory itself
    group = (((data or {}).get("all") or {}).get("children") or {}).get("hosts") if isinstance(data, dict) else None
    return group if isinstance(group, dict) else {}


def inventory_play_vars(inventory: str | os.PathLike[str]) -> dict[str, Any]:
    """PLAY_KEYWORD_VARS set in the inventory's `hosts` group vars ({} when it has none)."""
    group_vars = _hosts_group(inventory).get("vars")
    if not isinstance(group_vars, dict):
        return {}
    return {key: group_vars[key] for key in PLAY_KEYWORD_VARS if key in group_vars}


def _batch_hosts(serial: object, hosts: int) -> int:
    """Hosts in one batch of `serial` over HOSTS hosts, as Ansible counts it: a percentage is
    int(pct / 100 * hosts) or 1 (ansible.utils.helpers.pct_to_int); 0 or none is every host."""
    if isinstance(serial, str) and serial.endswith("%"):
        try:
            return int(float(serial[:-1]) / 100.0 * hosts) or 1
        except ValueError:
            return hosts
    try:
        count = int(serial)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return hosts
    return min(count, hosts) if count > 0 else hosts


def inventory_forks(inventory: str | os.PathLike[str], serial: object = None) -> int:
    """Ansible forks for the host playbook: deploy.hosts.forks (inventory var fabricgen_hosts_forks)
    when set, else the largest batch of `serial` (default: the inventory's), FORKS_MIN to FORKS_MAX.

    Ansible's default is 5 forks: a batch of 50 hosts would drain and change 5 at a time, ten
    rounds of the slowest host each (ansible.cfg DEFAULT_FORKS)."""
    group = _hosts_group(inventory)
    group_vars = group.get("vars") if isinstance(group.get("vars"), dict) else {}
    set_forks = group_vars.get("fabricgen_hosts_forks")
    if isinstance(set_forks, int) and not isinstance(set_forks, bool) and set_forks >= 1:
        return set_forks
    members = group.get("hosts")
    hosts = len(members) if isinstance(members, dict) else 0
    if serial is None:
        serial = group_vars.get("fabricgen_hosts_serial", [1, "10%"])
    batches = serial if isinstance(serial, list) else [serial]
    largest = max((_batch_hosts(b, hosts) for b in batches), default=hosts)
    return max(FORKS_MIN, min(FORKS_MAX, largest))


def _message(res: dict[str, Any]) -> str:
    msg = str(res.get("msg") or "").strip()
    stdout = str(res.get("stdout") or "")
    # fabricgen's probes and roce-qos.sh tag problems with "error:"; prefer those lines
    errors = [line.strip() for line in stdout.splitlines() if line.strip().startswith("error:")]
    if errors:
        return "; ".join(errors)
    for key in ("stderr", "stdout"):
        text = str(res.get(key) or "").strip()
        if text:
            detail = text.splitlines()[-1]
            return f"{msg}: {detail}" if msg else detail
    if msg:
        return msg
    results = res.get("results")
    if isinstance(results, list):
        for item in results:
            if isinstance(item, dict) and item.get("failed"):
                return _message(item)
    return "failed"


def run_playbook(
    playbook: Path,
    inventory: str | os.PathLike[str],
    *,
    extravars: dict[str, Any] | None = None,
    limit: str | None = None,
    check: bool = False,
    diff: bool = False,
    private_data_dir: str | os.PathLike[str] | None = None,
    ssh_key: str | os.PathLike[str] | None = None,
    known_hosts: str | os.PathLike[str] | None = None,
    verbosity: int = 0,
    collect: tuple[str, ...] = (),
    tags: str | None = None,
    skip_tags: str | None = None,
    forks: int | None = None,
    host_vars: dict[str, dict[str, Any]] | None = None,
) -> HostRunResult:
    """Run `playbook` over `inventory` with strict host keys; summarise per host.

    `collect`: task names whose module results are kept per host (HostRunResult.results).
    `host_vars`: {host: vars} laid over the inventory's (a second inventory source, which Ansible
    reads last): where each of the lab's GPU servers listens (credentials.endpoint_host_vars)."""
    inventory = Path(inventory).resolve()
    if not inventory.is_file():
        raise FileNotFoundError(f"inventory {inventory} does not exist")

    owned_dir = None
    if private_data_dir is None:
        owned_dir = tempfile.mkdtemp(prefix="fabricgen-runner-")
        private_data_dir = owned_dir
    pdd = Path(private_data_dir)
    pdd.mkdir(parents=True, exist_ok=True)
    # Ansible's SSH ControlPath sockets: a short path (a Unix socket's is at most 108 bytes, unix(7);
    # the private data dir may be deep) of this run's own (mkdtemp: 0700, a fresh name). A fixed
    # /tmp/fgcp was the first user's: anyone else on a shared bastion got "Cannot write to ControlPath"
    control_dir = tempfile.mkdtemp(prefix="fgcp-")

    ssh_args = ["-o StrictHostKeyChecking=yes"]
    if known_hosts is not None:
        ssh_args.append(f"-o UserKnownHostsFile={Path(known_hosts).resolve()}")
    envvars = {
        "ANSIBLE_HOST_KEY_CHECKING": "True",
        "ANSIBLE_SSH_COMMON_ARGS": " ".join(ssh_args),
        "ANSIBLE_RETRY_FILES_ENABLED": "False",
        "ANSIBLE_NOCOLOR": "1",
        # short socket paths: the default under a deep private_data_dir can exceed 108 bytes
        "ANSIBLE_SSH_CONTROL_PATH_DIR": control_dir,
        "LC_ALL": os.environ.get("LC_ALL") or "C.UTF-8",
        # ansible-playbook lives next to this interpreter in a virtualenv that is not activated
        "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", os.defpath)]),
    }
    cmdline = []
    if check:
        cmdline.append("--check")
    if diff:
        cmdline.append("--diff")
    if ssh_key is not None:
        cmdline += ["--private-key", str(Path(ssh_key).resolve())]
    sources: str | None = str(inventory)
    if host_vars:
        # both sources on the command line, the overlay last (ansible-runner would put its own -i after
        # ours): for a host in two sources Ansible keeps the value of the one read last
        overlay = pdd / "endpoint-hosts.yml"
        from generator.devices.credentials import endpoint_overlay, servers_only

        overlay.write_text(yaml.safe_dump(endpoint_overlay(host_vars), sort_keys=True), encoding="utf-8")
        cmdline += ["-i", str(inventory), "-i", str(overlay)]
        sources = None
        limit = servers_only(limit)

    try:
        runner = ansible_runner.run(
            private_data_dir=str(pdd),
            playbook=str(playbook),
            inventory=sources,
            extravars=dict(extravars or {}),
            envvars=envvars,
            limit=limit,
            cmdline=" ".join(cmdline) or None,
            verbosity=verbosity or None,
            tags=tags,
            skip_tags=skip_tags,
            forks=forks,
            quiet=True,
        )
        result = HostRunResult(status=runner.status, rc=runner.rc)
        stats = runner.stats or {}
        names = set()
        for key in ("ok", "changed", "failures", "dark", "skipped", "processed"):
            names.update((stats.get(key) or {}).keys())
        for name in sorted(names):
            result.hosts[name] = HostStats(
                ok=stats.get("ok", {}).get(name, 0),
                changed=stats.get("changed", {}).get(name, 0),
                failed=stats.get("failures", {}).get(name, 0),
                unreachable=stats.get("dark", {}).get(name, 0),
                skipped=stats.get("skipped", {}).get(name, 0),
            )
        drained: list[str] = []
        undrained: set[str] = set()
        for event in runner.events:
            kind = event.get("event")
            data = event.get("event_data") or {}
            host = data.get("host", "")
            task = data.get("task", "")
            if kind == "playbook_on_play_start":
                result.batches.append((str(data.get("play") or data.get("name") or ""), []))
                continue
            if host and kind.startswith("runner_on_") and result.batches and host not in result.batches[-1][1]:
                result.batches[-1][1].append(host)
            if kind in ("runner_on_failed", "runner_on_unreachable") and not data.get("ignore_errors"):
                if kind == "runner_on_unreachable" and result.batches and \
                        result.batches[-1][0] == APPLY_PLAY and host not in result.lost:
                    result.lost.append(host)
                # the batch mates of a lost host fail on purpose (LOST_TASK): the lost host is the news
                if task not in (REFAIL_TASK, LOST_TASK):
                    result.failures.append((host, task, _message(data.get("res") or {})))
            elif kind in ("runner_on_ok", "runner_item_on_ok") and (data.get("res") or {}).get("changed"):
                if kind == "runner_on_ok":
                    result.changes.append((host, task))
            if kind == "runner_on_ok" and task in collect:
                result.results.setdefault(host, {})[task] = data.get("res") or {}
            if kind == "runner_on_ok" and task == DRAIN_TASK and host not in drained:
                drained.append(host)
            if kind == "runner_on_ok" and task == UNDRAIN_TASK:
                undrained.add(host)       # a failed undrain is reported by LEFT_DRAINED_TASK
            if kind == "runner_on_ok" and task == PRE_DRAIN_TASK and \
                    str(((data.get("res") or {}).get("ansible_facts") or {}).get("fg_we_drained")).lower() == "false":
                undrained.add(host)       # drained before the run: left so on purpose, not ours to report
            if kind == "runner_on_ok" and task == NOT_OURS_TASK:
                line = " ".join(str((data.get("res") or {}).get("msg") or "").split())
                line = line.removeprefix(f"{host}: ")
                undrained.add(host)       # reported here, one way or the other
                if "could not be read" in line:
                    result.left_drained.append((host, line.removeprefix("not undrained: ")))
                else:
                    result.drain_notes.append((host, line))
                continue
            if kind == "runner_on_ok" and task in (LEFT_DRAINED_TASK, NOT_RESTORED_TASK, PORT_WARNING_TASK):
                line = " ".join(str((data.get("res") or {}).get("msg") or "").split())
                target = {LEFT_DRAINED_TASK: result.left_drained, NOT_RESTORED_TASK: result.not_restored,
                          PORT_WARNING_TASK: result.port_warnings}[task]
                target.append((host, line.removeprefix(f"{host}: ").removeprefix("left drained: ")))
        # a host whose drain hook ran and whose undrain never ran nor was reported (unreachable
        # mid-batch: Ansible runs no rescue or always block for it) is left drained all the same
        reported = {host for host, _ in result.left_drained}
        for host in drained:
            if host not in undrained and host not in reported:
                result.left_drained.append((host, "unreachable after its drain, state unknown: check it, then "
                                                  "undrain it by hand" if host in result.lost else
                                                  "drained, the run stopped before its undrain "
                                                  "(unreachable or interrupted)"))
        stdout = runner.stdout.read() if runner.stdout else ""
        result.stdout = stdout
        return result
    finally:
        shutil.rmtree(control_dir, ignore_errors=True)
        if owned_dir is not None:
            shutil.rmtree(owned_dir, ignore_errors=True)


def run_hosts_playbook(
    render_dir: str | os.PathLike[str],
    inventory: str | os.PathLike[str],
    *,
    limit: str | None = None,
    check: bool = False,
    diff: bool = False,
    private_data_dir: str | os.PathLike[str] | None = None,
    extravars: dict[str, Any] | None = None,
    ssh_key: str | os.PathLike[str] | None = None,
    known_hosts: str | os.PathLike[str] | None = None,
    verbosity: int = 0,
    tags: str | None = None,
    skip_tags: str | None = None,
    collect: tuple[str, ...] = (),
    host_vars: dict[str, dict[str, Any]] | None = None,
) -> HostRunResult:
    """Pre-flight, then apply the rendered host files in `render_dir` to the hosts of `inventory`,
    in the batches its `hosts` group vars set.

    `ssh_key` is a private key file; `known_hosts` replaces ~/.ssh/known_hosts (host
    keys are still checked strictly). `extravars` may set fabricgen_root etc. `tags` /
    `skip_tags`: the playbook's feature tags (preflight, netplan, sysctl, qos, nccl, units, lldpd).
    `collect`: task names whose module results are kept per host (drift reads its probes' output).
    """
    render_dir = Path(render_dir).resolve()
    if not (render_dir / "hosts").is_dir():
        raise FileNotFoundError(f"{render_dir}/hosts does not exist: run `fabricgen render INTENT -o {render_dir}`")
    variables: dict[str, Any] = {"fabricgen_render_dir": str(render_dir)}
    variables.update(CHECK_PLAY_VARS if check else inventory_play_vars(inventory))
    variables.update(extravars or {})
    return run_playbook(playbook_path(), inventory, extravars=variables, limit=limit, check=check, diff=diff,
                        private_data_dir=private_data_dir, ssh_key=ssh_key, known_hosts=known_hosts,
                        verbosity=verbosity, tags=tags, skip_tags=skip_tags, collect=collect,
                        forks=inventory_forks(inventory, variables.get("fabricgen_hosts_serial")), host_vars=host_vars)


def run_discover_playbook(
    inventory: str | os.PathLike[str],
    *,
    limit: str | None = None,
    private_data_dir: str | os.PathLike[str] | None = None,
    extravars: dict[str, Any] | None = None,
    ssh_key: str | os.PathLike[str] | None = None,
    known_hosts: str | os.PathLike[str] | None = None,
    host_vars: dict[str, dict[str, Any]] | None = None,
) -> HostRunResult:
    """playbooks/discover.yml (read-only): HostRunResult.results[host][DISCOVER_TASK]["stdout"] is
    the host's JSON (playbooks/files/fabricgen_nics.py discover)."""
    return run_playbook(playbook_path(DISCOVER_PLAYBOOK), inventory, extravars=extravars, limit=limit,
                        private_data_dir=private_data_dir, ssh_key=ssh_key, known_hosts=known_hosts,
                        collect=(DISCOVER_TASK,), host_vars=host_vars)


__all__ = ["run_hosts_playbook", "run_discover_playbook", "run_playbook", "inventory_play_vars", "inventory_forks",
           "HostRunResult", "HostStats", "playbook_path", "APPLY_PLAY", "DISCOVER_TASK", "LEFT_DRAINED_TASK"]
