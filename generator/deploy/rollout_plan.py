"""The switch rollout's plan, pure: from the fabric plan, the selected switches and what backup +
diff found on each (their status, and on --day0 the traffic evidence read), decide the waves in
rollout order (waves.py: the canary a switch that really changes, then rail-safe waves), which
switches change, which failed or were refused, and on --day0 which switches refuse the whole run.
No I/O and no session: rollout.py reads the switches and pushes, rollout_report.py words it, and
every refusal here is decided before anything is pushed.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.deploy.report import FAILED, WOULD_CHANGE, DeviceResult
from generator.deploy.waves import Wave, WaveDevice, plan_waves


@dataclass(frozen=True)
class RolloutPlan:
    waves: list[Wave]
    changed: list[str]        # in the selection's order: what the waves will push
    failed: list[str]         # failed or refused in backup + diff: nothing is pushed at all

    def unchanged(self, selected: int) -> int:
        return selected - len(self.changed) - len(self.failed)


def day0_refusals(names: list[str], traffic: dict[str, list[str]],
                  results: dict[str, DeviceResult]) -> list[tuple[str, list[str]]]:
    """--day0: every switch that shows traffic evidence, or could not be read (no evidence read is
    not proof of none: safety is never inferred), with what was found; any refuses the run."""
    return [(n, traffic.get(n) or [f"not read ({results[n].message or 'no answer'})"])
            for n in names if traffic.get(n) != []]


def plan_rollout(plan, names: list[str], results: dict[str, DeviceResult], concurrency: int, *,
                 day0: bool = False) -> RolloutPlan:
    by_name = {sw.name: sw for sw in plan.switches}
    changed = [n for n in names if results[n].status == WOULD_CHANGE]
    waves = plan_waves([WaveDevice(n, by_name[n].role, by_name[n].rail, by_name[n].unit, by_name[n].group)
                        for n in names], concurrency, prefer_canary=changed, carries_traffic=not day0)
    return RolloutPlan(waves=waves, changed=changed, failed=[n for n in names if results[n].status == FAILED])
