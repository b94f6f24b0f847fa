"""mbarrier families: mbarrier_semantics (README R6-R12).

One thread ran an operation sequence on one mbarrier; the model replays it and
compares every recorded state word, wait answer and pending_count.
"""
from .. import _core
from ..machine import Machine
from .common import MBAR, Unsupported

# R9: only bits 32-63 of a returned state follow the barrier. Bits 0-31 held
# whatever the hardware left there (0, the instruction's count / tx operand, 1
# after .noComplete, the previous try_wait's cycle count): not compared.
STATE_BITS = 0xFFFFFFFF_00000000

# op -> fn(bar, arg, states): the PTX instruction the step ran (README schema).
OPS = {
    "init": lambda b, a, s: b.init(a) and None,     # init returns the barrier: no value
    "inval": lambda b, a, s: b.inval(),
    "arrive": lambda b, a, s: b.arrive(),
    "arrive_count": lambda b, a, s: b.arrive(a),
    "arrive_noComplete": lambda b, a, s: b.arrive_no_complete(a),
    "arrive_expect_tx": lambda b, a, s: b.arrive_expect_tx(a),
    "arrive_drop": lambda b, a, s: b.arrive_drop(),
    "arrive_drop_count": lambda b, a, s: b.arrive_drop(a),
    "arrive_drop_expect_tx": lambda b, a, s: b.arrive_drop_expect_tx(a),
    "arrive_drop_noComplete": lambda b, a, s: b.arrive_drop_no_complete(a),
    "expect_tx": lambda b, a, s: b.expect_tx(a),
    "complete_tx": lambda b, a, s: b.complete_tx(a),
    "test_wait_parity": lambda b, a, s: b.test_wait(a),
    "try_wait_parity": lambda b, a, s: b.try_wait(a),
    "test_wait_state": lambda b, a, s: b.test_wait_state(s[a]),
    "try_wait_state": lambda b, a, s: b.try_wait_state(s[a]),
    "pending_count": lambda b, a, s: b.pending_count(s[a]),
    # arrive.expect_tx with a count operand [tx, count]: ptxas rejects it (R12), and
    # Mbarrier.arrive_expect_tx takes no count, so the call raises TypeError.
    "arrive_expect_tx_count": lambda b, a, s: b.arrive_expect_tx(*a),
}
# Forms ptxas rejects: the model's API does not offer them either.
REJECTED = {"arrive_expect_tx_count"}


class Refused(Exception):
    """The model's API refused a form (as ptxas did)."""


def run_program(bar, program):
    """{step: value} of every step that returns one (arrive states, wait answers, counts)."""
    out = {}
    for st in program:
        try:
            v = OPS[st["op"]](bar, st["arg"], out)
        except TypeError as e:
            if st["op"] in REJECTED:
                raise Refused(f"step {st['step']} {st['op']}: {e}") from None
            raise
        if v is not None:
            out[st["step"]] = v
    return out


def compare(got, steps):
    """The first recorded value the model does not reproduce, or None."""
    for r in steps:
        k, op, v = r["step"], r["op"], got.get(r["step"])
        if "state_hex" in r and (v & STATE_BITS) != (int(r["state_hex"], 16) & STATE_BITS):
            return (f"step {k} {op}: state bits 32-63 model 0x{v >> 32:08x}, "
                    f"hardware 0x{int(r['state_hex'], 16) >> 32:08x}")
        if "wait_complete" in r and v != r["wait_complete"]:
            return f"step {k} {op}: waitComplete model {v}, hardware {r['wait_complete']}"
        if "count" in r and v != r["count"]:
            return f"step {k} {op}: pending_count model {v}, hardware {r['count']}"
        # "cycles" (try_wait, R10) is timing: not modelled, not compared.
    return None


def check_mbarrier_semantics(case):
    program = case["params"]["program"]
    unknown = sorted({st["op"] for st in program} - OPS.keys())
    if unknown:
        raise Unsupported(f"ops {unknown}")
    # Report mode: some programs wait on a state two phases back or leave an
    # over-credited phase open (R7), undefined by the ISA but recorded: the
    # hardware's answers are what is compared. Over-arrival still raises (R12).
    bar = Machine(ctas=1, smem_bytes=2 * MBAR, hazards="report").mbarrier(MBAR)
    error = case.get("error")
    try:
        got = run_program(bar, program)
    except Refused as e:
        # ptxas rejected the program (R12), so it never ran: the case passes when the
        # model refuses the same form (its API has no such operand), fails otherwise.
        return None if error == "ptxas_rejected" else f"model refused a form ptxas accepted: {e}"
    except _core.Hazard as e:
        # Undefined behaviour by the ISA; over-arrival faulted the hardware (R12).
        if error == "cudaErrorLaunchFailure":
            return None
        return f"model raised Hazard ({e}); hardware {error or 'completed'}"
    if error:
        return f"hardware {'rejected' if error == 'ptxas_rejected' else 'raised'} {error}; model ran it"
    return compare(got, case["steps"])


FAMILIES = {
    "mbarrier_semantics": check_mbarrier_semantics,
}
