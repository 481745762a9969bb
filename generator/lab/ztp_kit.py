"""What a lab switch gets from a day-0 kit (`fabricgen day0 -o DAY0DIR`): the DHCP answer the
kit's Kea config gives its MAC and vendor class, and the files behind the URLs in that answer.

DHCP (contract section 2; Kea ARM "The DHCPv4 Server", "Host Reservations in DHCPv4",
"Client Classification"):

- the client is known by its hardware address only (the kit sets `host-reservation-identifiers:
  [hw-address]`): a subnet's reservation with that hw-address gives the address (yiaddr) and the
  hostname; no reservation, no answer (the kit's subnet has no pool);
- client classes are evaluated from their `test`; the lab evaluates exactly the form
  `substring(option[60].hex,0,N) == 'text'` (the vendor class, option 60) and refuses any other
  expression, naming it, rather than guess what Kea would do with it;
- options: Kea 2.2's precedence (ARM "DHCPv4 Server Configuration", options precedence; the
  real kea-dhcp4 does so in tests/integration/test_dhcp_exchange.py): the reservation's
  option-data, then the subnet's, then the matching classes' (the first class listed first). Every configured option is delivered: the kit
  sets `always-send` on the ZTP options and the hostname, so the client's parameter request
  list does not matter for them; the lab does not model it.

HTTP: a URL names DAY0DIR/http/<relpath> when it is the kit's base URL + "/" + relpath
(contract section 1). The lab learns the base URL from the DHCP answer: the URL of the ZTP
script or ztp.json must end in "/" + a path listed in DAY0DIR/http/manifest.json, and what
comes before is the base. The lab serves the manifest's files (the kit lists every file of
http/ there) and the manifest; any other URL is a 404, and a link out of http/ is never followed.
Everything read from the kit is size-capped: it is input, not trusted code.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from generator.common.bounded_read import ReadRefused, read_bounded
from generator.common.errors import FabricgenError

KEA_FILE = "kea-dhcp4.json"
HTTP_DIR = "http"
HTTP_MANIFEST = "manifest.json"
MAX_KEA_BYTES = 16 << 20          # a 10k-reservation config is a few MB
MAX_HTTP_BYTES = 64 << 20         # a rendered config_db of a 64-port switch is well under 1 MB
# Option codes Kea knows by name (Kea ARM, "List of standard DHCPv4 options"), and the one the
# kit defines itself in option-def (239, cumulus-provision-url).
STANDARD_OPTIONS = {3: "routers", 6: "domain-name-servers", 12: "host-name", 42: "ntp-servers",
                    67: "boot-file-name"}
_TEST = re.compile(r"""\A\s*substring\(\s*option\[\s*60\s*\]\.hex\s*,\s*0\s*,\s*(\d+)\s*\)\s*==\s*'([^'\\]*)'\s*\Z""")
_MAC = re.compile(r"\A[0-9a-f]{2}([:-][0-9a-f]{2}){5}\Z")


class KitError(FabricgenError, ValueError):
    """The kit cannot be used: one line naming the file (and key) and what to do."""


class UnsupportedTest(KitError):
    """A client-class test the lab does not evaluate."""


@dataclass(frozen=True)
class DhcpAnswer:
    address: str                  # "192.168.0.14/24": yiaddr with the subnet's prefix length
    gateway: str | None           # first of option 3 (routers)
    hostname: str | None          # option 12, else the reservation's hostname
    options: dict[str, str] = field(default_factory=dict)   # option name -> data as Kea sends it
    classes: tuple[str, ...] = ()

    @property
    def ip(self) -> str:
        return str(ipaddress.ip_interface(self.address).ip)


def normal_mac(mac: str) -> str:
    return mac.strip().lower().replace("-", ":")


def read_capped(path: Path, limit: int, what: str) -> bytes:
    """A regular file's bytes, refused above LIMIT; never follows a FIFO or device."""
    try:
        return read_bounded(path, limit)
    except FileNotFoundError:
        raise KitError(f"{path}: no such file; give the directory `fabricgen day0 -o` wrote ({what})") from None
    except ReadRefused as exc:
        if exc.kind == "type":
            raise KitError(f"{path}: {what} is not a regular file") from None
        if exc.kind == "size":
            raise KitError(f"{path}: {what} is larger than {limit >> 20} MB; is this a day-0 kit?") from None
        raise KitError(f"{path}: cannot read {what}: {exc.message}") from None
    except OSError as exc:
        raise KitError(f"{path}: cannot read {what}: {exc.strerror}") from None


def load_kea(day0: Path) -> dict:
    """The Dhcp4 object of DAY0DIR/kea-dhcp4.json."""
    path = Path(day0) / KEA_FILE
    raw = read_capped(path, MAX_KEA_BYTES, "the Kea config")
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise KitError(f"{path}: not JSON ({str(exc).splitlines()[0][:120]}); run `fabricgen day0` again") from None
    dhcp4 = doc.get("Dhcp4") if isinstance(doc, dict) else None
    if not isinstance(dhcp4, dict):
        raise KitError(f"{path}: no Dhcp4 object; this is not a Kea DHCPv4 server config")
    return dhcp4


# --- the DHCP answer ------------------------------------------------------------------------
def class_matches(test: str, vendor_class: str | None) -> bool:
    """Kea's `substring(option[60].hex,0,N) == 'text'`: the first N bytes of option 60 (all of it
    when shorter; empty when the client sent none) compared with the literal."""
    match = _TEST.match(test)
    if match is None:
        raise UnsupportedTest(test)
    length, text = int(match.group(1)), match.group(2)
    sent = (vendor_class or "").encode()
    return sent[:length] == text.encode()


def _option_names(dhcp4: dict) -> dict[int, str]:
    names = dict(STANDARD_OPTIONS)
    for definition in dhcp4.get("option-def") or []:
        if isinstance(definition, dict) and isinstance(definition.get("code"), int) and definition.get("name"):
            if (definition.get("space") or "dhcp4") == "dhcp4":
                names[definition["code"]] = str(definition["name"])
    return names


def option_name(dhcp4: dict, code: int) -> str | None:
    """The name option CODE carries in this config (option-def or Kea's standard names)."""
    return _option_names(dhcp4).get(code)


def _options(entries: object, names: dict[int, str], where: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if entries is None:
        return out
    if not isinstance(entries, list):
        raise KitError(f"{where}: option-data must be a list")
    for entry in entries:
        if not isinstance(entry, dict):
            raise KitError(f"{where}: an option-data entry is not an object")
        if (entry.get("space") or "dhcp4") != "dhcp4":
            continue
        name = entry.get("name")
        if name is None and isinstance(entry.get("code"), int):
            name = names.get(entry["code"], f"option-{entry['code']}")
        if not name:
            raise KitError(f"{where}: an option-data entry has neither name nor code")
        data = str(entry.get("data", ""))
        if entry.get("csv-format") is False:
            # data given as hex bytes (Kea ARM "DHCPv4 Option Configuration": csv-format false)
            try:
                data = bytes.fromhex(data.replace(":", "").replace(" ", "")).decode("utf-8", "replace")
            except ValueError:
                raise KitError(f"{where}: option {name}: csv-format false but data is not hex") from None
        out[str(name)] = data
    return out


def dhcp_answer(dhcp4: dict, mac: str, vendor_class: str | None, source: str = KEA_FILE) -> DhcpAnswer | None:
    """What the kit's Kea gives a client with this MAC and option 60; None: no reservation, no answer.

    Raises UnsupportedTest (a KitError) for a class test the lab does not evaluate."""
    mac = normal_mac(mac)
    names = _option_names(dhcp4)
    subnets = dhcp4.get("subnet4") or []
    if not isinstance(subnets, list):
        raise KitError(f"{source}: Dhcp4.subnet4 must be a list")
    for index, subnet in enumerate(subnets):
        if not isinstance(subnet, dict):
            continue
        where = f"{source}: Dhcp4.subnet4[{index}]"
        for reservation in subnet.get("reservations") or []:
            if not isinstance(reservation, dict):
                continue
            hw = reservation.get("hw-address")
            if not isinstance(hw, str) or not _MAC.match(normal_mac(hw)) or normal_mac(hw) != mac:
                continue
            try:
                network = ipaddress.IPv4Network(str(subnet.get("subnet")))
                address = ipaddress.IPv4Address(str(reservation.get("ip-address")))
            except ValueError:
                raise KitError(f"{where}: reservation of {mac} has no usable subnet/ip-address") from None
            if address not in network:
                # Kea refuses such a config (kea-dhcp4 -t); never lease an address off the subnet
                raise KitError(f"{where}: reservation of {mac}: {address} is outside {network}")
            subnet_options = _options(subnet.get("option-data"), names, where)
            options: dict[str, str] = {}
            classes = []
            reserved_classes = set(reservation.get("client-classes") or [])
            for cindex, cls in enumerate(dhcp4.get("client-classes") or []):
                if not isinstance(cls, dict):
                    continue
                test = cls.get("test")
                if test is None:
                    member = cls.get("name") in reserved_classes
                else:
                    try:
                        member = class_matches(str(test), vendor_class)
                    except UnsupportedTest:
                        raise UnsupportedTest(
                            f"{source}: Dhcp4.client-classes[{cindex}] ({cls.get('name')}): the lab evaluates "
                            f"only substring(option[60].hex,0,N) == 'text', not {str(test)[:120]!r}") from None
                if member:
                    classes.append(str(cls.get("name")))
                    for key, value in _options(cls.get("option-data"), names, f"{source}: class {cls.get('name')}").items():
                        options.setdefault(key, value)
            options.update(subnet_options)
            options.update(_options(reservation.get("option-data"), names, f"{where}: reservation of {mac}"))
            routers = options.get("routers", "")
            gateway = routers.split(",")[0].strip() or None
            hostname = options.get("host-name") or reservation.get("hostname") or None
            return DhcpAnswer(f"{address}/{network.prefixlen}", gateway, hostname and str(hostname),
                              options, tuple(classes))
    return None


# --- the kit's web server -------------------------------------------------------------------
class KitServer:
    """DAY0DIR/http served at the kit's base URL (learnt from the first URL a switch is handed)."""

    def __init__(self, day0: Path):
        self.day0 = Path(day0).resolve()
        self.http = self.day0 / HTTP_DIR
        path = self.http / HTTP_MANIFEST
        raw = read_capped(path, MAX_KEA_BYTES, "the kit's http manifest")
        try:
            manifest = json.loads(raw)
        except (UnicodeDecodeError, ValueError):
            raise KitError(f"{path}: not JSON; run `fabricgen day0` again") from None
        files = manifest.get("files") if isinstance(manifest, dict) else None
        if not isinstance(files, dict):
            raise KitError(f"{path}: needs {{\"files\": {{relpath: sha256}}}} (contract section 1)")
        self.files = {str(k): str(v) for k, v in files.items()}

    def base_of(self, url: str) -> str | None:
        """The base URL under which URL names a manifest file (the longest such file wins)."""
        for rel in sorted(self.files, key=len, reverse=True):
            if url.endswith("/" + rel):
                return url[: -len(rel) - 1]
        return None

    def path_of(self, url: str, base: str) -> Path | None:
        """DAY0DIR/http/<relpath> for URL under BASE, or None (a 404)."""
        # as the switch's HTTP client: it sends the path alone (a fragment never leaves the client,
        # RFC 3986 §3.5; a query is not part of the path a static server maps to a file). A base
        # ending in "?" or "#" puts every appended path into the query or fragment: a 404 on the
        # switch, so here too.
        got, root = _request(url), _request(base)
        if got is None or root is None or got[0] != root[0]:
            return None
        prefix = root[1].rstrip("/") + "/"
        if not got[1].startswith(prefix):
            return None
        rel = got[1][len(prefix):]
        if not rel or rel.startswith("/") or "\\" in rel or "\0" in rel:
            return None
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts):
            return None
        path = self.http.joinpath(*parts)
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return None
        if self.http.resolve() not in real.parents or not real.is_file():
            return None           # a link out of http/ is not served
        return real

    def url_map(self, base: str) -> dict[str, str]:
        """URL -> file of every file the kit serves (the manifest's, and the manifest itself)."""
        out = {}
        for rel in [*sorted(self.files), HTTP_MANIFEST]:
            url = base.rstrip("/") + "/" + rel
            path = self.path_of(url, base)
            if path is not None:
                out[url] = str(path)
        return out

    def fetch(self, url: str, base: str) -> bytes | None:
        path = self.path_of(url, base)
        if path is None:
            return None
        return read_capped(path, MAX_HTTP_BYTES, "a kit file")


def _request(url: str) -> tuple[str, str] | None:
    """(scheme://host:port, path) that a client fetching URL connects to and asks for; None when
    no client can fetch it (a port out of range, no host)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or (port is not None and not 1 <= port <= 65535):
        return None
    return f"{parts.scheme}://{parts.hostname}:{port or (443 if parts.scheme == 'https' else 80)}", parts.path


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


__all__ = ["DhcpAnswer", "KitError", "KitServer", "UnsupportedTest", "class_matches", "dhcp_answer", "load_kea",
           "normal_mac", "option_name", "read_capped"]
