"""`fabricgen lab ztp --dir DIR --day0 DAY0DIR`: every simulated switch that booted with ZTP on
(`lab up --ztp`) does what its NOS's ZTP does with the kit of `fabricgen day0`.

Per switch (a bounded pool runs several at once; lines come out in the lab's device order):

1. DHCP: the kit's Kea config answers the switch's eth0 MAC and vendor class (ztp_kit.py). No
   reservation, no answer: the switch keeps waiting ("no DHCP answer for <mac>").
2. The lease: eth0 takes the reserved address, the gateway (routers) and the hostname (option 12);
   the lab server moves the switch there (ztp_channel.py "lease").
3. Cumulus Linux (user guide, "Zero Touch Provisioning - ZTP"): option 239 names the script; ZTP
   downloads it, runs it only if it holds the CUMULUS-AUTOPROVISIONING marker, and counts exit 0
   as success (after which ZTP does not run again). The script runs with its #! interpreter.
   SONiC (sonic-ztp, doc/ztp/ztp.md; src/usr/lib/ztp/ztp-engine.py): option 67 names the ZTP
   JSON (239 a provisioning script, used only without 67); its sections run in sorted order,
   the plugin of a section is its `plugin` object or its name without the leading "NN-";
   `halt-on-failure` stops at a failed section, `ignore-result` does not count its failure;
   ZTP succeeds when no counted section failed. Each section's plugin and URLs are downloaded
   when that section runs, with plain curl in the default VRF (sonic-ztp Downloader.py): once a
   section has put eth0 into VRF mgmt (MGMT_VRF_CONFIG and a reload), the kit server is out of
   reach and later downloads fail as curl's exit 7. The lab has the `configdb-json` plugin (as
   sonic-ztp src/usr/lib/ztp/plugins/configdb-json does it) and user-defined plugins
   (`plugin.url`); any other plugin name fails the section, as a plugin missing on the switch does.
4. The result: "provisioned at <ip>", "refused: <the script's refusing line>", or "failed: ...".
   A provisioned switch leaves ZTP; endpoints.yml then names the account its config leaves.

Scripts run as on the switch, with real bash/python3: a scrubbed environment (PATH, HOME, TMPDIR,
LANG, USER only; never FABRICGEN_PASSWORD or anything else of the caller's), a private 0700
directory per switch (its TMPDIR lasts for all sections of that switch), a timeout for the
whole switch, and capped output. PATH holds the switch tools of the contract (shims acting on
THAT switch through the lab server, ztp_client.py) and an allow-list of coreutils; a tool the
real switch does not offer a script (jq, python on Cumulus) is not there. Each script runs in
its own user, mount, PID and network namespaces (ztp_sandbox.py): its private directory is the
only place it can write, and nothing it started outlives it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from generator.common.errors import FabricgenError
from generator.lab import ztp_sandbox
from generator.lab.ztp_channel import SOCKET_FILE, request
from generator.lab.ztp_kit import KitError, KitServer, dhcp_answer, load_kea, option_name

# The vendor class (option 60) each NOS's DHCP client sends. Cumulus: "cumulus-linux <arch>"
# (Cumulus ZTP page; contract section 2). SONiC's dhclient configuration sends none the lab could
# confirm, so none is sent: the kit answers SONiC switches by reservation alone.
VENDOR_CLASS = {"cumulus": "cumulus-linux x86_64", "sonic": None}
CUMULUS_MARKER = b"CUMULUS-AUTOPROVISIONING"
SWITCH_TIMEOUT = 300.0
WORKERS = 4
OUTPUT_CAP = 64 << 10
# Contract section 3/4: the switch tools a ZTP script may call, one shim each.
SHIMS = {"cumulus": ("nv", "hostname", "ip", "curl", "logger", "passwd", "usermod"),
         "sonic": ("show", "sonic-cfggen", "config", "curl", "logger", "hostname", "test")}
# Host tools a script may use besides them (coreutils and friends the switch images ship).
HOST_TOOLS = ("awk", "base64", "basename", "bash", "cat", "chmod", "cmp", "cp", "cut", "date", "diff", "dirname",
              "echo", "env", "expr", "false", "grep", "head", "id", "ls", "md5sum", "mkdir", "mktemp", "mv", "od",
              "printf", "readlink", "rm", "rmdir", "sed", "seq", "sh", "sha256sum", "sleep", "sort", "stat", "tail",
              "tee", "test", "touch", "tr", "true", "uname", "uniq", "wc", "xargs")
# SONiC runs its provisioning scripts with python3 (the kit's #!/usr/bin/python3); Cumulus scripts
# must not need it (contract section 3), so it is on a SONiC switch's PATH only.
PYTHON_TOOLS = {"sonic": ("python3",), "cumulus": ()}
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
STATE_DIR = "/var/lib/ztp"
MAX_ZTP_JSON = 1 << 20


class ZtpError(FabricgenError, RuntimeError):
    """`lab ztp` cannot start: one line; no switch was touched."""


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    line: str


def lab_ztp(directory: Path, day0: Path, *, timeout: float = SWITCH_TIMEOUT, workers: int = WORKERS) -> list[Result]:
    """Run ZTP on every switch of the lab in DIRECTORY that booted with ZTP on; one Result each."""
    from generator.lab.control import _running_pid

    directory = Path(directory).resolve()
    day0 = Path(day0).resolve()
    if _running_pid(directory) is None:
        raise ZtpError(f"no lab is running in {directory}; start one with "
                       f"`fabricgen lab up INTENT --dir {directory} --ztp --inventory CSV`")
    sock = directory / SOCKET_FILE
    if not sock.exists():
        raise ZtpError(f"the lab in {directory} did not boot its switches with ZTP on; start it with "
                       "`fabricgen lab up INTENT --dir DIR --ztp --inventory CSV`")
    if not day0.is_dir():
        raise ZtpError(f"--day0 {day0}: no such directory; give the directory `fabricgen day0 -o` wrote")
    try:
        ztp_sandbox.check()          # before any switch moves: a kit never runs uncontained
    except ztp_sandbox.SandboxError as exc:
        raise ZtpError(str(exc)) from None
    try:
        dhcp4 = load_kea(day0)
        kit = KitServer(day0)
        devices = request(sock, {"op": "state"})["devices"]
        ztp = {name: info for name, info in devices.items() if info.get("ztp_booted")}
        if not ztp:
            raise ZtpError(f"no switch of the lab in {directory} booted with ZTP on (`lab up --ztp`)")
        # every answer first: a kit the lab cannot evaluate stops the run before any switch moves
        answers = {name: dhcp_answer(dhcp4, info["mac"], VENDOR_CLASS.get(info["os"]), str(day0 / "kea-dhcp4.json"))
                   for name, info in ztp.items()}
    except KitError as exc:
        raise ZtpError(str(exc)) from None
    except (OSError, ValueError, KeyError) as exc:
        raise ZtpError(f"the lab in {directory} does not answer on {sock}: {exc}") from None

    def one(name: str) -> Result:
        try:
            return SwitchZtp(sock, name, ztp[name], answers[name], dhcp4, kit, day0, timeout).run()
        except (OSError, ValueError, KeyError) as exc:
            return Result(name, False, f"{name}: failed: the lab did not answer ({exc})")
        except Exception as exc:  # noqa: BLE001 -- one switch's simulator fault is its line, never the run's crash
            return Result(name, False, f"{name}: failed: lab ztp could not simulate this switch "
                                       f"({type(exc).__name__}: {str(exc)[:200]})")

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(ztp)))) as pool:
        futures = {name: pool.submit(one, name) for name in ztp}
        return [futures[name].result() for name in ztp]


def _bool(value: object, default: bool) -> bool:
    """sonic-ztp's getField(..., bool, default): a bool, or the strings true/false."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return default


class SwitchZtp:
    """One switch's ZTP run, in its own private directory."""

    def __init__(self, sock: Path, name: str, info: dict, answer, dhcp4: dict, kit: KitServer, day0: Path,
                 timeout: float):
        self.sock, self.name, self.info, self.answer = sock, name, info, answer
        self.dhcp4, self.kit, self.day0 = dhcp4, kit, day0
        self.os = info["os"]
        self.deadline = time.monotonic() + timeout
        self.timeout = timeout
        self.base: str | None = None
        self.dir: Path | None = None

    # --- the run ------------------------------------------------------------
    def run(self) -> Result:
        name, mac = self.name, self.info["mac"]
        if not self.info.get("ztp_waiting"):
            return Result(name, True, f"{name}: already provisioned ({self.info.get('address')}): ZTP does not "
                                      "run again after a success")
        if self.answer is None:
            return Result(name, False, f"{name}: no DHCP answer for {mac}: {self.day0 / 'kea-dhcp4.json'} has no "
                                       f"reservation for it; add {name} to the inventory and run fabricgen day0 again")
        self._call({"op": "lease", "address": self.answer.address, "gateway": self.answer.gateway,
                    "hostname": self.answer.hostname})
        self.dir = Path(tempfile.mkdtemp(prefix=f"fabricgen-ztp-{name[:40]}-"))
        try:
            ok, line = self._cumulus() if self.os == "cumulus" else self._sonic()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
        finished = self._call({"op": "finish", "ok": ok})
        if ok and finished.get("cut_off"):
            return Result(name, False, f"{name}: provisioned, but unreachable at {self.answer.ip}: "
                                       f"{finished['cut_off']}")
        return Result(name, ok, f"{name}: {line}")

    def _call(self, message: dict) -> dict:
        answer = request(self.sock, {**message, "device": self.name})
        if "error" in answer:
            raise ValueError(answer["error"])
        return answer

    def _log(self, message: str) -> None:
        self._call({"op": "log", "tag": "ztp" if self.os == "cumulus" else "sonic-ztp", "message": message})

    def _fetch(self, url: str) -> bytes | None:
        if self.base is None:
            self.base = self.kit.base_of(url)
        return None if self.base is None else self.kit.fetch(url, self.base)

    def _engine_fetch(self, url: str) -> tuple[bytes | None, str]:
        """sonic-ztp's own download of URL, now: plain curl in the default VRF (Downloader.py; sonic-ztp
        has no VRF support). Once eth0 is in VRF mgmt the kit server is out of reach: curl exit 7."""
        if url.startswith("file://"):
            return None, "file:// URLs of the switch's own files are not simulated"
        reach = self._call({"op": "reach", "vrf": "default"})
        if not reach.get("reach"):
            host = url.split("/")[2] if url.count("/") >= 2 else url
            why = (f"curl: (7) Failed to connect to {host}: Network is unreachable (eth0 is in VRF "
                   f"{reach.get('eth0_vrf')}; sonic-ztp downloads in the default VRF)")
            self._log(f"Error (7) encountered while downloading '{url}': {why}")
            return None, why
        data = self._fetch(url)
        return data, "" if data is not None else "404"

    # --- Cumulus Linux --------------------------------------------------------
    def _cumulus(self) -> tuple[bool, str]:
        option = option_name(self.dhcp4, 239) or "cumulus-provision-url"
        url = self.answer.options.get(option)
        if not url:
            return False, (f"failed: the DHCP answer for {self.info['mac']} has no option 239 ({option}): Cumulus "
                           f"ZTP has no script to run (vendor class {VENDOR_CLASS['cumulus']!r} matched no class "
                           "giving it)")
        self._log(f"ZTP DHCP: URL from option 239: {url}")
        script = self._fetch(url)
        if script is None:
            return False, f"failed: download of {url} failed: 404 (not a file of {self.day0 / 'http'})"
        if CUMULUS_MARKER not in script:
            # Cumulus ZTP page: the script must contain the CUMULUS-AUTOPROVISIONING flag to run
            return False, f"failed: {url} lacks the CUMULUS-AUTOPROVISIONING flag; Cumulus ZTP does not run it"
        rc, out, err, killed = self._script(script, "ztp-script")
        said = self._said()
        if killed:
            return False, f"failed: the ZTP script ran longer than {self.timeout:.0f}s and was stopped"
        if rc == 0:
            self._log(f"ZTP script {url} succeeded; ZTP is disabled")
            return True, f"provisioned at {self.answer.ip}"
        return False, self._failure(f"the ZTP script exited {rc}", said, err or out)

    # --- SONiC ------------------------------------------------------------------
    def _sonic(self) -> tuple[bool, str]:
        json_url = self.answer.options.get("boot-file-name")
        script_url = self.answer.options.get(option_name(self.dhcp4, 239) or "")
        if not json_url and not script_url:
            return False, (f"failed: the DHCP answer for {self.info['mac']} has neither option 67 (ZTP JSON) nor 239 "
                           "(provisioning script): sonic-ztp keeps waiting")
        if not json_url:
            # ztp.md 3.5: with option 239 only, the script's exit code is ZTP's result
            data, why = self._engine_fetch(script_url)
            if data is None:
                return False, f"failed: download of {script_url} failed: {why}"
            rc, out, err, killed = self._script(data, "provisioning-script")
            if rc == 0 and not killed:
                return True, f"provisioned at {self.answer.ip}"
            return False, self._failure(f"the provisioning script exited {rc}", self._said(), err or out)
        data, why = self._engine_fetch(json_url)
        if data is None:
            return False, f"failed: download of {json_url} failed: {why} (not a file of {self.day0 / 'http'})"
        try:
            doc = json.loads(data[:MAX_ZTP_JSON + 1]) if len(data) <= MAX_ZTP_JSON else None
            sections = doc.get("ztp") if isinstance(doc, dict) else None
            if not isinstance(sections, dict):
                raise ValueError("ztp section not found in JSON data")
        except (ValueError, UnicodeDecodeError) as exc:
            return False, f"failed: {json_url} is not a ZTP JSON ({str(exc)[:120]}); sonic-ztp stops"
        failed: list[str] = []
        for key in sorted(k for k, v in sections.items() if isinstance(v, dict)):
            section = sections[key]
            status = section.get("status", "BOOT")
            if status not in ("BOOT", "IN-PROGRESS", "SUSPEND"):
                continue            # DISABLED, or already done in an earlier session
            if time.monotonic() > self.deadline:
                failed.append(f"{key}: ZTP ran longer than {self.timeout:.0f}s")
                break
            ok, why = self._section(key, section)
            self._log(f"Processed Configuration section {key} with result {'SUCCESS' if ok else 'FAILED'}"
                      + ("" if ok else f" ({why})"))
            if not ok and not _bool(section.get("ignore-result"), False):
                failed.append(f"{key}: {why}")
            if not ok and _bool(section.get("halt-on-failure"), False):
                self._log(f"Halting ZTP as Configuration section {key} FAILED and halt-on-failure flag is set.")
                break
        if not failed:
            self._log("ZTP successfully completed")
            return True, f"provisioned at {self.answer.ip}"
        return False, self._failure(f"ZTP section {failed[0]}", self._said(), "")

    def _section(self, key: str, section: dict) -> tuple[bool, str]:
        plugin = section.get("plugin")
        name = None
        if isinstance(plugin, dict):
            if plugin.get("dynamic-url"):
                return False, "dynamic-url plugins are not simulated"
            if plugin.get("url"):
                return self._user_plugin(key, section, plugin)
            name = plugin.get("name")
        elif isinstance(plugin, str):
            name = plugin
        elif plugin is not None:
            return False, "invalid plugin data type"
        if name is None:
            # ZTPSections.plugin(): the section name without a leading "NN-"
            parts = re.split(r"^[0-9]+-", key, maxsplit=1)
            name = parts[1] if len(parts) > 1 else parts[0]
        if name == "configdb-json":
            return self._configdb_json(section)
        # sonic-ztp has no `provisioning-script` plugin file: a section naming a plugin that is not
        # in src/usr/lib/ztp/plugins/ fails as on the switch (the lab has configdb-json and plugin.url)
        return False, f"Unable to find or download requested plugin {name!r}"

    @staticmethod
    def _source(url_data: object) -> tuple[str | None, str | None]:
        """(source, destination) of a sonic-ztp url object (a string or {source, destination})."""
        if isinstance(url_data, str):
            return url_data, None
        if isinstance(url_data, dict) and isinstance(url_data.get("source"), str):
            dest = url_data.get("destination")
            return url_data["source"], dest if isinstance(dest, str) else None
        return None, None

    def _user_plugin(self, key: str, section: dict, plugin: dict) -> tuple[bool, str]:
        # ztp.md 3.2.1 and ZTPJson.pluginArgs: the plugin gets the section's input file as its argument
        source, _ = self._source(plugin.get("url"))
        # ZTPSections.plugin(): downloaded when this section runs (ztp-engine.py), unless an earlier
        # session of this ZTP run left it in the section's directory
        data, why = self._engine_fetch(source) if source else (None, "no url")
        if data is None:
            return False, f"Unable to find or download requested plugin {source} ({why})"
        args = []
        if not _bool(plugin.get("ignore-section-data"), False):
            input_file = self.dir / "sections" / key / "input.json"
            input_file.parent.mkdir(parents=True, exist_ok=True)
            input_file.write_text(json.dumps({key: section}, indent=4))
            args.append(str(input_file))
        if isinstance(plugin.get("args"), str):
            args += shlex.split(plugin["args"])
        rc, out, err, killed = self._script(data, f"plugin-{key}", args)
        return (rc == 0 and not killed), f"plugin exited {rc}" + (" (stopped: too long)" if killed else "")

    def _run_on_switch(self, argv: list[str], files: dict | None = None) -> tuple[int, str]:
        answer = self._call({"op": "run", "argv": argv, "files": files or {}})
        return int(answer.get("status", 1)), str(answer.get("output", ""))

    def _configdb_json(self, section: dict) -> tuple[bool, str]:
        """sonic-ztp src/usr/lib/ztp/plugins/configdb-json, step by step."""
        if section.get("dynamic-url") is not None:
            return False, "dynamic-url is not simulated"
        source, destination = self._source(section.get("url"))
        if source is None:
            return False, 'Either "url" or "dynamic_url" should be provided'
        clear = _bool(section.get("clear-config"), True)
        save = _bool(section.get("save-config"), False)
        overwrite = _bool(section.get("overwrite-device-metadata"), False)
        self._log(f"configdb-json: Downloading config_db.json file from '{source}'.")
        data, why = self._engine_fetch(source)
        if data is None:
            return False, f"Error encountered while downloading '{source}': {why}"
        try:
            doc = json.loads(data)
            if not isinstance(doc, dict):
                raise ValueError("not a JSON object")
            if not overwrite:
                # "Do not trust the switch specific configuration in the user provided config file"
                rc, out = self._run_on_switch(["sonic-cfggen", "-d", "--var-json", "DEVICE_METADATA"])
                running = (json.loads(out) if rc == 0 and out.strip() else {}).get("localhost") or {}
                new = (doc.get("DEVICE_METADATA") or {}).get("localhost") if isinstance(
                    doc.get("DEVICE_METADATA"), dict) else None
                if isinstance(new, dict):
                    for field in ("platform", "hwsku", "mac"):
                        if field == "hwsku" and new.get("hwsku") is not None and new["hwsku"] != running["hwsku"]:
                            hwsku_dir = f"/usr/share/sonic/device/{running['platform']}/{new['hwsku']}"
                            if self._run_on_switch(["test", "-d", hwsku_dir])[0] == 0:
                                continue
                        new[field] = running[field]
                elif clear:
                    doc.setdefault("DEVICE_METADATA", {})["localhost"] = running
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return False, f"Error[{str(exc)[:120]}] validating and sanitizing downloaded config_db.json file"
        staged = str(self.dir / "work" / "config_dl.json")
        text = json.dumps(doc, indent=4, sort_keys=True)
        # sonic-ztp's configdb-json reloads with -f (DEVICE_STATE.md): its switch has just booted, and
        # `config reload` without -f is refused until swss has run 120 s (lab/sonic.py)
        command = ["config", "reload", "-f", "-y", staged] if clear else ["config", "load", "-y", staged]
        self._log(f"configdb-json: {'Reloading' if clear else 'Applying'} config_db.json to Config DB.")
        rc, out = self._run_on_switch(command, {staged: text})
        if rc != 0:
            last = out.strip().splitlines()[-1:] or [""]
            return False, f"Command '{' '.join(command[:-1])} F' failed with exit code({rc}): {last[0][:160]}"
        if destination is None and clear:
            destination = "/etc/sonic/config_db.json"   # "Copying downloaded config_db.json to startup"
        if destination is not None:
            self._call({"op": "put", "path": destination, "text": text})
        if save:
            rc, out = self._run_on_switch(["config", "save", "-y"])
            if rc != 0:
                return False, f"Command 'config save -y' failed with exit code ({rc})"
        return True, "ok"

    # --- running a script -------------------------------------------------------
    def _prepare(self) -> dict[str, str]:
        """The run's directory (created once per switch): shims, tools, home, tmp; the script env."""
        base = self.dir
        bin_dir, tools, home, tmp, work = (base / d for d in ("bin", "tools", "home", "tmp", "work"))
        if not bin_dir.exists():
            for d in (bin_dir, tools, home, tmp, work):
                d.mkdir(mode=0o700)
            url_map = self.kit.url_map(self.base) if self.base else {}
            config = base / "client.json"
            config.write_text(json.dumps({"socket": str(self.sock), "device": self.name, "files": url_map,
                                          "log": str(base / "said.jsonl")}))
            client = Path(__file__).with_name("ztp_client.py")
            for tool in SHIMS[self.os]:
                shim = bin_dir / tool
                shim.write_text("#!/bin/sh\n# lab ZTP shim: this switch's " + tool + "\n"
                                f"exec {shlex.quote(sys.executable)} -I -S {shlex.quote(str(client))} "
                                f"{shlex.quote(str(config))} {shlex.quote(tool)} \"$@\"\n")
                shim.chmod(0o700)
            for tool in HOST_TOOLS + PYTHON_TOOLS[self.os]:
                found = shutil.which(tool, path=SYSTEM_PATH)
                if found and tool not in SHIMS[self.os]:
                    (tools / tool).symlink_to(found)
        return {"PATH": f"{bin_dir}:{tools}", "HOME": str(home), "TMPDIR": str(tmp), "LANG": "C.UTF-8",
                "LC_ALL": "C.UTF-8", "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash", "PWD": str(work)}

    def _script(self, data: bytes, stem: str, args: list[str] | None = None) -> tuple[int, str, str, bool]:
        """Run DATA as the NOS runs a downloaded script: (exit status, stdout, stderr, killed)."""
        env = self._prepare()
        interpreter = _interpreter(data)
        if isinstance(interpreter, str):
            return 126, "", interpreter, False
        path = self.dir / "work" / stem
        path.write_bytes(data)
        path.chmod(0o700)
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return 124, "", "", True
        # contained: only self.dir writable, no network, every process gone when it ends (ztp_sandbox.py)
        process = subprocess.Popen(ztp_sandbox.command([*interpreter, str(path), *(args or [])], self.dir),
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=env["PWD"],
                                   start_new_session=True)
        out, err = _Capped(process.stdout), _Capped(process.stderr)
        killed = False
        try:
            process.wait(timeout=remaining)
        except subprocess.TimeoutExpired:
            killed = True
            os.killpg(process.pid, signal.SIGKILL)    # the process group this run started, nothing else
            process.wait()
        out.join()
        err.join()
        return process.returncode, out.text(), err.text(), killed

    def _said(self) -> list[str]:
        """What the scripts logged with logger, in order."""
        path = self.dir / "said.jsonl"
        try:
            lines = path.read_text(errors="replace").splitlines()[:1000]
        except OSError:
            return []
        out = []
        for line in lines:
            try:
                out.append(str(json.loads(line).get("message", "")))
            except ValueError:
                continue
        return out

    @staticmethod
    def _failure(what: str, said: list[str], output: str) -> str:
        for message in said:
            if message.startswith("refusing:"):
                return "refused: " + message[len("refusing:"):].strip()
        last = said[-1] if said else (output.strip().splitlines()[-1] if output.strip() else "")
        return f"failed: {what}" + (f": {last[:300]}" if last else "")


class _Capped:
    """Drains a pipe in a thread, keeping its first OUTPUT_CAP bytes (a chatty script cannot fill memory)."""

    def __init__(self, pipe):
        self.pipe = pipe
        self.data = bytearray()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        while chunk := self.pipe.read(1 << 16):
            if len(self.data) < OUTPUT_CAP:
                self.data += chunk[: OUTPUT_CAP - len(self.data)]

    def join(self) -> None:
        self.thread.join(timeout=5)
        self.pipe.close()

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def _interpreter(data: bytes) -> list[str] | str:
    """The command that runs a script by its #! line (bash, sh or python3), or why it cannot run."""
    first = data.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if not first.startswith("#!"):
        return "the script has no #! line: exec format error"
    words = first[2:].split()
    if not words:
        return "the script's #! line names no interpreter"
    program = os.path.basename(words[0])
    if program == "env" and len(words) > 1:
        program = words[1]
    if program in ("bash", "sh"):
        found = shutil.which(program, path=SYSTEM_PATH)
        if found:
            return [found]
    if program in ("python3", "python"):
        return [shutil.which("python3", path=SYSTEM_PATH) or sys.executable]
    return f"interpreter {words[0]} is not one the lab runs (bash, sh, python3)"


__all__ = ["Result", "ZtpError", "lab_ztp"]
