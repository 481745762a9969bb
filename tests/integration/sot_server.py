"""The live Nautobot the sot tests use: until the sot-service fixture lands, a running dev instance
named by /tmp/sot-dev-nautobot.env (URL=..., TOKEN_FILE=...)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

DEV_ENV = Path("/tmp/sot-dev-nautobot.env")


@dataclass(frozen=True)
class Server:
    url: str
    token: str


@pytest.fixture(scope="session")
def nautobot_server() -> Server:
    if not DEV_ENV.exists():
        pytest.skip(f"no live Nautobot ({DEV_ENV} missing)")
    values = dict(line.split("=", 1) for line in DEV_ENV.read_text().split("\n") if "=" in line)
    url = values.get("URL") or values.get("NAUTOBOT_URL")
    token_file = values.get("TOKEN_FILE") or values.get("NAUTOBOT_TOKEN_FILE")
    return Server(url.strip(), Path(token_file.strip()).read_text().strip())
