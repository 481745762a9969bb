"""NVUE revision/confirm semantics of the simulated device, driven without SSH."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import time

from generator.lab.faults import FaultSource, write_faults
from generator.lab.nvue import NvueDevice


class FakeIo:
    def __init__(self, answers=()):
        self.out: list[str] = []
        self.answers = list(answers)

    def write(self, text):
        self.out.append(text)

    async def ask(self, prompt):
        self.write(prompt)
        return self.answers.pop(0) if self.answers else None

    def text(self):
        return "".join(self.out)


def make_device(tmp_path, version="5.11"):
    return NvueDevice("leaf01", version, tmp_path / "root", FaultSource(tmp_path / "faults" / "leaf01.json"))


def with_factory(extra: dict, device) -> dict:
    """The device's factory config (it never starts empty) plus `extra`."""
    config = copy.deepcopy(device.factory)
    config.update(extra)
    return config


async def run(device, line, answers=()):
    io = FakeIo(answers)
    status = await device.run(line.split(), io)
    return status, io.text()


def test_apply_confirm_revert_and_confirm_yes(tmp_path):
    async def scenario():
        device = make_device(tmp_path)
        # the device's 1 s confirm timer runs in 0.1 s of wall time (the scaling itself:
        # test_time_scale_runs_the_confirm_timer_faster); the timer and the sleeps below share one
        # event loop, which runs them in deadline order however busy the machine is
        device.time_scale = 10.0
        await run(device, "nv set interface swp1 link mtu 9216")
        assert (await run(device, "nv config apply -y"))[0] == 0
        await run(device, "nv set interface swp1 link mtu 9000")
        status, out = await run(device, "nv config apply -y --confirm 1s")
        assert status == 0 and "confirm within 1s" in out
        status, out = await run(device, "nv config apply -y")
        assert status == 1 and "waiting for confirmation" in out
        await asyncio.sleep(0.13)
        assert device.applied["interface"]["swp1"]["link"]["mtu"] == "9216"
        await run(device, "nv set interface swp1 link mtu 9100")
        await run(device, "nv config apply -y --confirm 1s")
        assert (await run(device, "nv config apply --confirm-yes"))[0] == 0
        await asyncio.sleep(0.12)
        assert device.applied["interface"]["swp1"]["link"]["mtu"] == "9100"
        assert device.startup == device.applied

    asyncio.run(scenario())


def test_time_scale_runs_the_confirm_timer_faster(tmp_path):
    # `lab up --time-scale 30`: a 30 s confirm timer reverts after 1 s of wall time; the switch
    # still prints device seconds (--confirm-status: 30 s less the second that passed, scaled).
    async def scenario():
        device = make_device(tmp_path)
        device.time_scale = 30.0
        await run(device, "nv set interface swp1 link mtu 9216")
        await run(device, "nv config apply -y")
        await run(device, "nv set interface swp1 link mtu 9000")
        before = time.monotonic()
        status, out = await run(device, "nv config apply -y --confirm 30s")
        applied = time.monotonic()
        assert status == 0 and "confirm within 30s" in out
        await asyncio.sleep(0.5)
        asked = time.monotonic()
        _, out = await run(device, "nv config apply --confirm-status")
        answered = time.monotonic()
        # 30 device seconds less the wall time since the apply, times 30: about 15, and exactly
        # within what the clock allows on a busy machine (a window of 14 or 15 was not)
        left = int(re.fullmatch(r"Revision \d+ pending confirm: (\d+) seconds remaining\n", out).group(1))
        assert round(30 - (answered - before) * 30) <= left <= round(30 - (asked - applied) * 30), out
        assert 0 < left < 30
        await asyncio.sleep(0.8)
        assert device.confirm is None
        assert device.applied["interface"]["swp1"]["link"]["mtu"] == "9216"

    asyncio.run(scenario())


def test_confirm_names_the_waiting_revision_and_bare_time_is_minutes(tmp_path):
    # commands.py "Confirm flow" V2-V4: `nv config apply <rev> --confirm-yes|--confirm-no`, the
    # waiting revision in state "confirm" in `nv config revision -o json`, `--confirm 2` = 2 minutes
    async def scenario():
        device = make_device(tmp_path)
        await run(device, "nv set interface swp1 link mtu 9000")
        status, out = await run(device, "nv config apply -y --confirm 2")
        assert status == 0 and "confirm within 120s" in out
        listing = json.loads((await run(device, "nv config revision -o json"))[1])
        waiting = [rev for rev, info in listing.items() if info["state"] == "confirm"]
        assert waiting == [str(device.confirm.rev_id)]
        status, out = await run(device, "nv config apply 99 --confirm-yes")
        assert status == 1 and out.startswith("Error: revision 99 is not waiting")
        assert device.confirm is not None
        assert (await run(device, f"nv config apply {waiting[0]} --confirm-no"))[0] == 0
        assert device.confirm is None and device.applied == device.factory
        listing = json.loads((await run(device, "nv config revision -o json"))[1])
        assert listing[waiting[0]]["state"] == "confirm_fail"

    asyncio.run(scenario())


def test_apply_prompts_without_y(tmp_path):
    async def scenario():
        device = make_device(tmp_path)
        await run(device, "nv set qos roce mode lossless")
        status, out = await run(device, "nv config apply", answers=["n"])
        assert status == 1 and "Are you sure? [y/N]" in out
        assert device.applied == device.factory
        status, _ = await run(device, "nv config apply", answers=["y"])
        assert status == 0 and device.applied == with_factory({"qos": {"roce": {"mode": "lossless"}}}, device)

    asyncio.run(scenario())


def test_apply_fault_keeps_pending(tmp_path):
    async def scenario():
        device = make_device(tmp_path)
        await run(device, "nv set qos roce mode lossless")
        write_faults(tmp_path, "leaf01", {"apply_error": "boom"})
        status, out = await run(device, "nv config apply -y")
        assert status == 1 and out.strip() == "Error: boom"
        assert device.applied == device.factory
        assert device.pending.config == with_factory({"qos": {"roce": {"mode": "lossless"}}}, device)

    asyncio.run(scenario())


def test_rollback_to_revision_and_history(tmp_path):
    async def scenario():
        device = make_device(tmp_path)
        await run(device, "nv set qos roce mode lossless")
        await run(device, "nv config apply -y -m first")
        await run(device, "nv set qos roce mode lossy")
        await run(device, "nv config apply -y")
        assert (await run(device, "nv config apply 1 -y"))[0] == 0
        assert device.applied == with_factory({"qos": {"roce": {"mode": "lossless"}}}, device)
        history = json.loads((await run(device, "nv config history -o json"))[1])
        assert [e["rev-id"] for e in history] == [3, 2, 1]  # a rollback is a new revision
        assert history[-1]["message"] == "first"

    asyncio.run(scenario())


def test_pre_59_needs_save(tmp_path):
    async def scenario():
        device = make_device(tmp_path, "5.8")
        await run(device, "nv set qos roce mode lossless")
        await run(device, "nv config apply -y")
        assert device.startup == device.factory  # the factory file until `nv config save`
        await run(device, "nv config save")
        assert device.startup == device.applied

    asyncio.run(scenario())


def test_nv_set_string_leaves_documented_with_a_placeholder(tmp_path):
    """`system hostname <idn-hostname>` and `interface <id> description <text>` are string leaves
    in NVUE's object model: `nv set` sets the string (the trie alone would read a key)."""
    import asyncio

    device = make_device(tmp_path)
    for command in ("nv set system hostname leaf7", "nv set interface swp1 description uplink",
                    "nv set interface swp1 ip address 10.0.0.1/31"):
        io = FakeIo()
        assert asyncio.run(device.run(command.split(), io)) == 0, io.text()
    pending = device._pending().config
    assert pending["system"]["hostname"] == "leaf7"
    assert pending["interface"]["swp1"]["description"] == "uplink"
    assert pending["interface"]["swp1"]["ip"]["address"] == {"10.0.0.1/31": {}}, "keys stay keys"
    io = FakeIo()
    assert asyncio.run(device.run("nv set system hostname -bad-".split(), io)) == 1
    assert "is not a string matching" in io.text()
