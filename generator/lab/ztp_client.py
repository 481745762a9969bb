"""A switch tool inside a lab ZTP run: the shims in the script's PATH exec this file.

    python3 -I -S ztp_client.py CONFIG TOOL [ARGS...]

CONFIG (written by ztp.py, in the run's private directory) names the lab's control socket, the
switch, the kit's URL -> file map and the run's log. Standard library only, run isolated (-I -S):
it is what a `nv`, `curl`, `logger`... on the switch does, nothing more.

- curl: the kit's web server, reached only from the VRF eth0 is enslaved to (the channel's
  "reach"): from any other VRF curl exits 7 "Failed to connect" as it does on the switch. `-f`
  makes a 404 exit 22 with "curl: (22) The requested URL returned error: 404" under -S, as
  curl(1) documents; without -f the error page is the output.
- ip vrf exec VRF CMD...: CMD in that VRF (iproute2 ip-vrf(8)); curl then connects from VRF.
- logger: one syslog line on the switch (the channel's "log"), and one JSON line in the run's
  log, which `lab ztp` reads to report what the script said.
- every other tool: the channel's "run" on the switch; a file argument of `nv config
  replace|patch FILE` and `config load|reload FILE` is put on the switch at the same path first.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys

MAX_FILE_BYTES = 64 << 20
MAX_ANSWER_BYTES = 80 << 20
MAX_STDIN_BYTES = 64 << 10


def _call(config: dict, message: dict) -> dict:
    message = {**message, "device": config["device"]}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(120)
        sock.connect(config["socket"])
        sock.sendall(json.dumps(message).encode() + b"\n")
        chunks, size = [], 0
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise OSError("answer too large")
            if chunk.endswith(b"\n"):
                break
    answer = json.loads(b"".join(chunks) or b"{}")
    if "error" in answer:
        raise OSError(answer["error"])
    return answer


def _read_bytes(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None            # the switch answers "No such file" itself
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        data = fh.read(MAX_FILE_BYTES + 1)
    return data if len(data) <= MAX_FILE_BYTES else None


def _read_file(path: str) -> str | None:
    data = _read_bytes(path)
    return None if data is None else data.decode("utf-8", "replace")


def _file_argument(argv: list[str]) -> int | None:
    """Index of the argument naming a file the switch command reads."""
    positional = [i for i, a in enumerate(argv) if i > 0 and not a.startswith("-")]
    if argv[0] == "nv" and argv[1:3] in (["config", "replace"], ["config", "patch"]) and len(positional) == 3:
        return positional[2]
    if argv[0] == "config" and argv[1:2] in (["load"], ["reload"]) and len(positional) == 2:
        return positional[1]
    return None


def run_tool(config: dict, argv: list[str]) -> int:
    files = {}
    index = _file_argument(argv)
    if index is not None:
        path = os.path.abspath(argv[index])
        text = _read_file(path)
        argv = [*argv[:index], path, *argv[index + 1:]]
        if text is not None:
            files[path] = text
    answer = _call(config, {"op": "run", "argv": argv, "files": files})
    sys.stdout.write(answer.get("output", ""))
    return int(answer.get("status", 1))


def logger(config: dict, args: list[str]) -> int:
    tag, words, i = os.environ.get("USER", "root"), [], 0
    while i < len(args):
        arg = args[i]
        if arg in ("-t", "--tag", "-p", "--priority") and i + 1 < len(args):
            if arg in ("-t", "--tag"):
                tag = args[i + 1]
            i += 2
            continue
        if arg.startswith("--tag="):
            tag = arg.split("=", 1)[1]
        elif arg in ("-i", "--id", "-s", "--stderr"):
            pass
        elif arg == "--":
            words.extend(args[i + 1:])
            break
        else:
            words.append(arg)
        i += 1
    message = " ".join(words) if words else sys.stdin.read(MAX_STDIN_BYTES).rstrip("\n")
    with open(config["log"], "a") as fh:
        fh.write(json.dumps({"tag": tag, "message": message[:4096]}) + "\n")
    _call(config, {"op": "log", "tag": tag, "message": message})
    return 0


_CURL_FLAGS = set("fsSLkv")      # fail, silent, show-error, location, insecure, verbose (no output)


def curl(config: dict, args: list[str], vrf: str = "default") -> int:
    fail = show_error = silent = False
    output = url = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-o", "--output", "--retry", "--retry-delay", "--retry-max-time", "--max-time", "-m",
                   "--connect-timeout") and i + 1 < len(args):
            if arg in ("-o", "--output"):
                output = args[i + 1]
            i += 2
            continue
        if arg in ("--fail", "--silent", "--show-error", "--location", "--insecure", "--retry-connrefused"):
            fail |= arg == "--fail"
            silent |= arg == "--silent"
            show_error |= arg == "--show-error"
        elif arg.startswith("-") and not arg.startswith("--") and len(arg) > 1 and set(arg[1:]) <= _CURL_FLAGS:
            fail |= "f" in arg
            silent |= "s" in arg
            show_error |= "S" in arg
        elif arg.startswith("-"):
            sys.stderr.write(f"curl: option {arg}: is unknown\ncurl: try 'curl --help' for more information\n")
            return 2
        elif url is None:
            url = arg
        else:
            sys.stderr.write("curl: the lab's curl takes one URL\n")
            return 2
        i += 1
    if url is None:
        sys.stderr.write("curl: no URL specified\n")
        return 2
    reach = _call(config, {"op": "reach", "vrf": vrf})
    if not reach.get("reach"):
        # eth0 is in another VRF: this VRF has no route to the management network (curl exit 7)
        if show_error or not silent:
            host = url.split("/")[2] if url.count("/") >= 2 else url
            sys.stderr.write(f"curl: (7) Failed to connect to {host} after 0 ms: Couldn't connect to server\n")
        return 7
    path = config["files"].get(url)
    data = None if path is None else _read_bytes(path)
    if data is None:
        if fail:
            if show_error or not silent:
                sys.stderr.write("curl: (22) The requested URL returned error: 404\n")
            return 22
        data = b"<html><head><title>404 Not Found</title></head><body>Not Found</body></html>\n"
    if output is None or output == "-":
        sys.stdout.buffer.write(data)
    else:
        try:
            with open(output, "wb") as fh:
                fh.write(data)
        except OSError as exc:
            sys.stderr.write(f"curl: (23) Failure writing output to destination: {exc.strerror}\n")
            return 23
    return 0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        sys.stderr.write("usage: ztp_client.py CONFIG TOOL [ARGS...]\n")
        return 2
    with open(argv[0]) as fh:
        config = json.load(fh)
    tool, args = argv[1], argv[2:]
    try:
        if tool == "curl":
            return curl(config, args)
        if tool == "logger":
            return logger(config, args)
        if tool == "ip" and args[:2] == ["vrf", "exec"] and len(args) >= 4:
            if args[3] == "curl":
                return curl(config, args[4:], vrf=args[2])
            return run_tool(config, args[3:])
        return run_tool(config, [tool, *args])
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"{tool}: the switch did not answer ({exc})\n")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
