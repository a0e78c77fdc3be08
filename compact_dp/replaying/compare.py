"""Policies against what was recorded, and many sessions added up in rows
(docs/replay.md, docs/history.md).

Every comparison is on comparable costs (every request's input and the summaries' output,
replayed: the replies are the same under every policy) against the ``recorded`` policy's,
and only for sessions with a recorded bill, since without one the recorded policy is a
guess.  ``hindsight_share`` puts a policy's saving over the best schedule's (``hindsight``):
1 is as good as hindsight, 0 no better than what happened.  Like with like
(``like_with_like``): ``objective_share`` puts a policy's saving in the objective (its
comparable cost plus ④ of each compaction, what hindsight minimises) over hindsight's, and
``dollar_share`` its saving in dollars over that of the cheapest schedule in dollars
(``hindsight:free``, where it ran).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .records import Doc

BEST = "hindsight"
FREE = "hindsight:free"    # the cheapest schedule in dollars, ④ not counted
EPSILON = 1e-9          # dollars: a best saving this small is none (the share would be noise)
BY = ("session", "project", "day", "month")
SORTS = ("date", "project", "requests", "cost", "saving")


def simulation_error(summary: Doc, recorded: Doc) -> float:
    """The recorded policy's input cost against the bill (like with like: a summary request
    the recording does not show is left out)."""
    bill = recorded["input_cost"]
    simulated = summary["input_cost"] - summary["unrecorded_cost"]
    return (simulated - bill) / bill if bill else 0.0


def shares(savings: dict[str, float]) -> dict[str, float | None]:
    """Each saving over hindsight's; None without hindsight or when it saves nothing (a
    share of no saving, or of a loss, means nothing)."""
    best = savings.get(BEST)
    return {p: s / best if best is not None and best > EPSILON else None
            for p, s in savings.items()}


def like_with_like(summaries: list[Doc]) -> None:
    """Each policy, in place: ``objective_saving`` (the recorded policy's objective less
    its own), ``objective_share`` (that over hindsight's) and ``dollar_share`` (its dollar
    saving over hindsight:free's; None where that did not run).  Nothing without a
    recorded policy."""
    by = {s["policy"]: s for s in summaries}
    base = by.get("recorded")
    if base is None:
        return
    objective = {name: base["objective"] - s["objective"] for name, s in by.items()}
    dollars = {name: base["comparable_cost"] - s["comparable_cost"] for name, s in by.items()}
    by_objective = shares(objective)
    free = dollars.get(FREE)
    for name, s in by.items():
        s["objective_saving"] = objective[name]
        s["objective_share"] = by_objective[name]
        s["dollar_share"] = dollars[name] / free if free is not None and free > EPSILON \
            else None


def annotate(summaries: list[Doc], bill: Doc | None) -> None:
    """One session's policies, in place: the recorded policy's ``simulation_error``, the
    others' ``saving``, and every one's ``hindsight_share`` (None with nothing to compare)."""
    base = next((s for s in summaries if s["policy"] == "recorded"), None)
    savings: dict[str, float] = {}
    if bill is not None and base is not None:
        savings = {s["policy"]: base["comparable_cost"] - s["comparable_cost"]
                   for s in summaries}
    share = shares(savings)
    for s in summaries:
        if s["policy"] == "recorded" and bill is not None:
            s["simulation_error"] = simulation_error(s, bill)
        elif s["policy"] in savings:
            s["saving"] = savings[s["policy"]]
        s["hindsight_share"] = share.get(s["policy"])
    if bill is not None:
        like_with_like(summaries)


# --- rows ---------------------------------------------------------------------------------

def compared_policies(results: Iterable[Doc]) -> list[str]:
    """The policies with a saving in any of the sessions, in the order they ran."""
    names: list[str] = []
    for res in results:
        for s in res["policies"]:
            if "saving" in s and s["policy"] not in names:
                names.append(s["policy"])
    return names


def row(members: list[Doc]) -> Doc:
    """Sessions added up: how many, their dates, requests, recorded compactions and bill
    (sub-agents included), and per policy the savings and the share of hindsight's
    (``compared_cost``: the recorded policy's cost over the sessions a saving is of)."""
    dates = sorted(m["date"] for m in members if m.get("date"))
    bills = [m["recorded"]["total_cost"] for m in members if m.get("recorded")]
    policies = []
    for name in compared_policies(members):
        saving = compared = mine = best = 0.0
        objective = best_objective = dollars = cheapest = 0.0
        by_objective = by_dollars = False
        for m in members:
            by = {s["policy"]: s for s in m["policies"]}
            if "saving" not in by.get(name, {}):
                continue
            saving += by[name]["saving"]
            compared += by["recorded"]["comparable_cost"]
            if "saving" in by.get(BEST, {}):
                mine += by[name]["saving"]
                best += by[BEST]["saving"]
            if "objective_saving" in by[name] and "objective_saving" in by.get(BEST, {}):
                objective += by[name]["objective_saving"]
                best_objective += by[BEST]["objective_saving"]
                by_objective = True
            if "saving" in by.get(FREE, {}):
                dollars += by[name]["saving"]
                cheapest += by[FREE]["saving"]
                by_dollars = True
        policies.append({
            "policy": name, "saving": saving,
            "hindsight_share": shares({name: mine, BEST: best})[name],
            "objective_share": shares({name: objective, BEST: best_objective})[name]
            if by_objective else None,
            "dollar_share": dollars / cheapest if by_dollars and cheapest > EPSILON else None,
            "compared_cost": compared})
    return {"sessions": len(members), "first": dates[0] if dates else None,
            "last": dates[-1] if dates else None,
            "requests": sum(m["requests"] for m in members),
            "compactions": sum(m["compactions"] for m in members),
            "recorded_cost": sum(bills) if bills else None, "policies": policies}


def key_of(res: Doc, by: str) -> str | None:
    date = res.get("date")
    key: str | None = {"session": res["session"], "project": res["project"], "day": date,
                       "month": date[:7] if date else None}[by]
    return key


def groups(results: list[Doc], by: str, sort: str = "date") -> list[Doc]:
    """One row per session, project, day or month (a day or month None for sessions
    without a date), sorted by ``sort``."""
    members: dict[str | None, list[Doc]] = {}
    for res in results:
        members.setdefault(key_of(res, by), []).append(res)
    out = []
    for key, group in members.items():
        r = {"key": key, **row(group), "paths": [m["session"] for m in group]}
        if by == "session":
            r["project"], r["session_id"] = group[0]["project"], group[0]["session_id"]
        elif by == "project":
            r["project"] = key
        out.append(r)
    return sorted(out, key=sort_key(sort))


def saving_of(r: Doc) -> float | None:
    """The first compared policy's saving (dp's by default)."""
    return r["policies"][0]["saving"] if r["policies"] else None


def sort_key(sort: str) -> Callable[[Doc], tuple[str | float, ...]]:
    """date and project: in order (oldest first, A to Z); requests, cost and saving: the
    largest first; rows without the value last."""
    def value(r: Doc) -> str | float | None:
        v: str | float | None = {
            "date": r["first"], "project": (r.get("project") or r["key"] or "").lower(),
            "requests": r["requests"], "cost": r["recorded_cost"],
            "saving": saving_of(r)}[sort]
        return v

    def key(r: Doc) -> tuple[str | float, ...]:
        v = value(r)
        if v is None:
            return (1, 0, r["key"] or "")
        # a date or a project is text, in order; the rest are numbers, the largest first
        return (0, v if isinstance(v, str) else -v, r["first"] or "", r["key"] or "")
    return key
