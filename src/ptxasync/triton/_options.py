"""What a launch on the model runs with: the compilation target and the Machine's options
(``ptxasync.triton.configure``), each checked when set so that a bad value names itself
before any kernel is compiled."""
from __future__ import annotations

import dataclasses
import re

# Triton names a capability's target itself: sm_80, sm_86, sm_89 below 9.0, sm_90a, sm_100a,
# ... from 9.0 on (backends/nvidia/compiler.py, sm_arch_from_capability): "sm_90" cannot be asked
# for. The Machine has no target below sm_90: PTX for sm_80 runs on the sm_90a machine (a
# superset), its .target checked by ptx.Kernel as ptxas would.
_TARGET = re.compile(r"sm_(\d+)(a?)")

# what get_device_properties answers per capability: the GPU each names (shared memory per
# block with opt-in, SM count, clocks in kHz, bus width in bits, as cuDeviceGetAttribute gives)
_PROPERTIES = {
    80: dict(max_shared_mem=166912, multiprocessor_count=108, sm_clock_rate=1410000, mem_clock_rate=1215000,
             mem_bus_width=5120),                       # A100-SXM4
    86: dict(max_shared_mem=101376, multiprocessor_count=84, sm_clock_rate=1695000, mem_clock_rate=9751000,
             mem_bus_width=384),                        # RTX 3090
    89: dict(max_shared_mem=101376, multiprocessor_count=128, sm_clock_rate=2520000, mem_clock_rate=10501000,
             mem_bus_width=384),                        # RTX 4090
    90: dict(max_shared_mem=232448, multiprocessor_count=132, sm_clock_rate=1980000, mem_clock_rate=3201000,
             mem_bus_width=6144),                       # H200 (the recorded GPU)
    100: dict(max_shared_mem=232448, multiprocessor_count=148, sm_clock_rate=1965000, mem_clock_rate=3996000,
              mem_bus_width=8192),                      # B200
    103: dict(max_shared_mem=232448, multiprocessor_count=148, sm_clock_rate=1965000, mem_clock_rate=3996000,
              mem_bus_width=8192),
    120: dict(max_shared_mem=101376, multiprocessor_count=170, sm_clock_rate=2407000, mem_clock_rate=14001000,
              mem_bus_width=512),                       # RTX 5090
}

POLICIES = ("immediate", "in_order", "reverse", "random", "adversarial")
HAZARDS = ("raise", "warn", "report")
SAME_VALUE = ("race", "record", "accept")


def parse_target(name):
    """``"sm_90a"`` -> (capability 90, the Machine's target name); raises naming what Triton takes."""
    if not isinstance(name, str):
        raise TypeError(f"target must be a str such as 'sm_90a', not {type(name).__name__}")
    m = _TARGET.fullmatch(name)
    if not m:
        raise ValueError(f"target {name!r} is not of the form sm_NN (below sm_90) or sm_NNa (sm_90a on)")
    cap, suffix = int(m.group(1)), m.group(2)
    if cap not in _PROPERTIES:
        raise ValueError(f"target {name!r}: the driver knows {', '.join(target_names())}")
    want = "a" if cap >= 90 else ""
    if suffix != want:
        raise ValueError(f"target {name!r}: Triton compiles capability {cap // 10}.{cap % 10} as "
                         f"sm_{cap}{want} (its backend adds 'a' from sm_90 on); ask for that")
    return cap, (name if cap >= 90 else "sm_90a")


def target_names():
    return [f"sm_{c}{'a' if c >= 90 else ''}" for c in sorted(_PROPERTIES)]


def device_properties(cap):
    return dict(_PROPERTIES[cap], max_num_regs=65536, warpSize=32)


@dataclasses.dataclass
class Options:
    """The driver's settings (see ``ptxasync.triton.configure``)."""
    target: str = "sm_90a"
    race_checks: bool = True        # the memory model: data races, missing proxy fences
    checks: bool = False            # the Machine's memory checks (pending copies vs memory)
    hazards: str = "raise"          # a race or hazard raises at its PTX line; "warn" / "report": recorded
    same_value_stores: str = "record"   # unordered plain stores of equal bytes: Machine(same_value_stores=)
    policy: str = "random"          # the completion policy of asynchronous operations
    seed: int = 0                   # the completion policy's and the thread scheduler's seed
    max_burst: int = 8
    max_instructions: int | None = None
    max_pending: int | None = None

    def check(self):
        parse_target(self.target)
        for name in ("race_checks", "checks"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if self.hazards not in HAZARDS:
            raise ValueError(f"hazards must be one of {HAZARDS}, not {self.hazards!r}")
        if self.same_value_stores not in SAME_VALUE:
            raise ValueError(f"same_value_stores must be one of {SAME_VALUE}, not {self.same_value_stores!r}")
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {POLICIES}, not {self.policy!r}")
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 1 << 64:
            raise ValueError(f"seed must be an int in [0, 2^64), not {self.seed!r}")
        return self

    def machine_kwargs(self, ctas, smem_bytes):
        return dict(ctas=ctas, smem_bytes=smem_bytes, policy=self.policy, seed=self.seed,
                    target=parse_target(self.target)[1],
                    hazards="raise" if self.hazards == "raise" else "report", checks=self.checks,
                    race_checks=self.race_checks, same_value_stores=self.same_value_stores)

    def launch_kwargs(self):
        return dict(seed=self.seed, max_burst=self.max_burst, max_instructions=self.max_instructions,
                    max_pending=self.max_pending)
