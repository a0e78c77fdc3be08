"""What must never happen in a replay of real sessions (docs/replay.md, "The session's
setting"), counted over ``replay --json``'s sessions: ``make bench`` prints the counts on
the shared corpus, and a test asserts they are all zero there.

* **peak past the window** — the recorded context grew past the window the setting says
  the session had (the window learned is too small);
* **never off the bill** — nothing was compacted, yet ``never`` was forced or costs more
  than TOLERANCE of the bill away from ``recorded`` (a phantom compaction);
* **hindsight not the best** — another policy's objective is below hindsight's by more
  than TOLERANCE of the bill;
* **assumed without reason** — a session lists an assumption that names neither the model
  nor its prices, the window or the TTL it stands for.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .records import Doc

TOLERANCE = 0.005
CHECKS = ("peak past the window", "never off the bill", "hindsight not the best",
          "assumed without reason")
REASONS = ("model", "prices", "context window", "cache TTL", "cache writes")


def failures(session: Doc) -> list[str]:
    """The checks one replayed session fails (none where it has no recorded bill)."""
    runs = {p["policy"]: p for p in session.get("policies", ())}
    recorded = runs.get("recorded")
    if recorded is None or not session.get("recorded"):
        return []
    out = []
    setting = session["setting"]
    window = max([setting["context_window"], *(setting.get("windows") or {}).values()])
    if recorded["peak_context"] > window:
        out.append(CHECKS[0])
    bill = recorded["comparable_cost"]
    never = runs.get("never")
    if session["compactions"] == 0 and never is not None and (
            never["forced"] or abs(never["comparable_cost"] - bill) > TOLERANCE * bill):
        out.append(CHECKS[1])
    best = runs.get("hindsight")
    if best is not None and any(best["objective"] > r["objective"] + TOLERANCE * bill
                                for r in runs.values()):
        out.append(CHECKS[2])
    if any(not a.startswith(REASONS) for a in session.get("assumed", ())):
        out.append(CHECKS[3])
    return out


def counts(sessions: list[Doc]) -> dict[str, int]:
    """How many sessions fail each check."""
    found = {name: 0 for name in CHECKS}
    for s in sessions:
        for name in failures(s):
            found[name] += 1
    return found
