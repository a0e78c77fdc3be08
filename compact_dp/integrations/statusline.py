"""``compact-dp statusline``: one line for Claude Code's status bar — does /compact pay now?

Claude Code runs the command after every assistant message with JSON on stdin: the
transcript's path, the model, the context's use, and (in recent versions) the prompt
cache's state.  The line says whether compacting now pays and how much, how full the
context is, and whether the cache is warm (with the time left) or cold.  It contains the
text ``/compact now`` exactly when ``compact-dp --json TRANSCRIPT`` decides ``compact``: the
decision is the same library call with the same defaults.  When it does not, it may say what
to wait for, and what compacting first would save before a pause past the cache's TTL.

It must never get in Claude Code's way: it always prints one line and exits 0, reads the
transcript incrementally (sessions.incremental), stops working after a time budget and
then says only what the JSON itself tells, and imports neither typer nor rich.
"""

from __future__ import annotations

import time

from ..core.wait import AUTO
from ..environment import Env
from ..views.words import dollars, duration
from ..views.words import tokens as tokens_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from types import FrameType

    from ..core.decision import Weighing
    from ..question import Question
    from ..sessions.session import Session

BUDGET = 1.5                         # seconds before giving up on the transcript
READING = 0.5                        # seconds of reading per call; the rest waits its turn
RESET, DIM, GREEN, YELLOW, CYAN, BOLD = "\033[0m", "\033[2m", "\033[32m", "\033[33m", \
    "\033[36m", "\033[1m"


class OutOfTime(Exception):
    """The budget ran out."""


def _number(x: object) -> float | None:
    """A finite, non-negative number from the JSON (anything else: unknown)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if 0 <= x < 1e15 else None


def _get(obj: object, *keys: str) -> object:
    for key in keys:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


def duration_text(seconds: float) -> str:
    return duration(seconds, short=True)


def money_text(x: float) -> str:
    return dollars(x, 2 if abs(x) >= 0.1 else 3)


class Painter:
    """ANSI colours where Claude Code renders them (its status bar does), never with
    NO_COLOR or TERM=dumb, or with --color never."""

    def __init__(self, on: bool):
        self.on = on

    def __call__(self, text: str, *codes: str) -> str:
        return f"{''.join(codes)}{text}{RESET}" if self.on and codes else text


COLOUR_MODES = ("auto", "always", "never")


def colour_of(args: list[str], env: Env) -> str:
    """--color MODE or --color=MODE; a mode that is not one of COLOUR_MODES is said on
    stderr and ``auto`` used — the line must print all the same."""
    mode = None
    for i, a in enumerate(args):
        if a == "--color":
            mode = args[i + 1] if i + 1 < len(args) else ""
        elif a.startswith("--color="):
            mode = a.split("=", 1)[1]
    if mode is None or mode in COLOUR_MODES:
        return mode or "auto"
    env.warn(f"statusline: --color {mode!r} is not one of {'|'.join(COLOUR_MODES)}; "
             "using auto")
    return "auto"


def colour_wanted(mode: str, environ: Mapping[str, str]) -> bool:
    if mode == "never":
        return False
    if mode == "always":
        return True
    return not environ.get("NO_COLOR") and environ.get("TERM") != "dumb"


def context_part(status: dict[str, object], session: Session | None, paint: Painter
                 ) -> str | None:
    """"ctx 142k/200k 71%" from the JSON's context_window, else from the transcript."""
    window = _number(_get(status, "context_window", "context_window_size"))
    usage = _get(status, "context_window", "current_usage")
    used = None
    if isinstance(usage, dict):
        parts = [_number(usage.get(k)) for k in ("input_tokens",
                                                 "cache_creation_input_tokens",
                                                 "cache_read_input_tokens")]
        if any(p is not None for p in parts):
            used = sum(p or 0 for p in parts)
    if used is None and session is not None and session.live_messages:
        # the context as the transcript shows it: V plus the live messages (right after a
        # compaction Claude Code sends no usage, and the last request is from before it)
        used = float((session.prefix or 0) + session.live_tokens)
    percent = _number(_get(status, "context_window", "used_percentage"))
    if percent is None and used is not None and window:
        percent = 100 * used / window
    if used is None and percent is None:
        return None
    text = "ctx " + (tokens_text(used) if used is not None else "?")
    if window:
        text += f"/{tokens_text(window)}"
    if percent is not None:
        text += f" {percent:.0f}%"
    colour = YELLOW if percent is not None and percent >= 70 else ""
    return paint(text, colour) if colour else text


def cache_part(status: dict[str, object], question: Question | None, paint: Painter,
               now: float) -> str | None:
    """"cache warm 3m left" / "cache cold 4.2h": Claude Code's prompt_cache when it sends
    one, else the transcript's clock."""
    pc = _get(status, "prompt_cache")
    if isinstance(pc, dict):
        expires = _number(pc.get("expires_at"))
        if expires is not None and abs(expires - now) > 365 * 86400:
            expires = None                   # not a time this status line can mean
        warm = pc.get("warm")
        if expires is not None:
            left = expires - now
            if left > 0 and warm is not False:
                return paint(f"cache warm {duration_text(left)} left", GREEN)
            if left > 0:                     # cold before it expires: since when, unknown
                return paint("cache cold", CYAN)
            return paint(f"cache cold {duration_text(-left)}", CYAN)
        if isinstance(warm, bool):
            return paint("cache warm", GREEN) if warm else paint("cache cold", CYAN)
    cache = question.cache if question is not None else None
    if cache is None or cache.idle is None:
        return None
    if cache.cold:
        return paint(f"cache cold {duration_text(cache.idle - cache.ttl_seconds)}", CYAN)
    return paint(f"cache warm {duration_text(cache.seconds_left or 0)} left", GREEN)


def decision_part(decision: Weighing, paint: Painter) -> str:
    """Contains "/compact now" exactly when the decision is compact; a saving is said
    with the requests it is expected over, and how long compacting takes; "not yet" with
    what to wait for."""
    over = f" over ~{requests_text(decision.derived.R)} more requests" \
        if decision.derived is not None else ""
    o = decision.outlook
    if decision.compact:
        took = f" · ~{duration(o.compaction_seconds)} to compact" \
            if o is not None and o.compaction_seconds is not None else ""
        return paint(f"/compact now saves ~{money_text(decision.best_benefit)}{over}{took}",
                     BOLD, GREEN)
    benefit = decision.best_benefit
    if decision.terms is None or benefit != benefit or benefit < -1e17:
        return paint("no compaction to weigh yet", DIM)
    e, u, w = decision.ending, decision.uncertainty, decision.wait
    if e is not None and e.held:
        return paint("not yet: this may be the last turn, too short to pay back", DIM)
    if u is not None and u.held:
        return paint(f"not yet: ~{money_text(benefit)} is within the forecast's error", DIM)
    if w is not None and w.held:
        more = f"saves ~{money_text(w.expected_benefit)} more"
        n = requests_text(w.requests or 0.0)
        return paint(f"not yet: the agent's own compaction in ~{n} requests {more}"
                     if w.until == AUTO else f"not yet: a later turn end (~{n} requests on) "
                     f"{more}", DIM)
    return paint(f"not yet: compacting would lose {money_text(-benefit)}{over}"
                 if benefit < 0 else "not yet", DIM)


def pause_part(decision: Weighing, paint: Painter) -> str | None:
    """"away > 4m? /compact first saves ~$2.10": what compacting before a pause past the
    cache's TTL would save, when the advice is not to compact now (None: nothing)."""
    p = decision.pause
    if p is None or decision.compact:
        return None
    return paint(f"away > {duration_text(p.if_idle_seconds)}? /compact first saves "
                 f"~{money_text(p.saving)}", YELLOW)


def requests_text(R: float) -> str:
    """A forecast of requests, as rough as it is: "40", "1.2k"."""
    if not 0 <= R < 1e15:
        return "?"
    return f"{R:,.0f}" if R < 1000 else tokens_text(R)


def status_line(status: dict[str, object], environ: Mapping[str, str], now: float,
                colour: bool) -> str:
    """The line for one statusLine JSON object (never raises); the reader's saved state
    is in ``environ``'s COMPACT_DP_CACHE, else the user cache directory."""
    paint = Painter(colour)
    path = status.get("transcript_path") if isinstance(status, dict) else None
    session = decision = question = None
    problem = None
    if isinstance(path, str) and path:
        try:
            from .live import decide_transcript
            window = _number(_get(status, "context_window", "context_window_size"))
            reading, answered, question = decide_transcript(path, environ, READING, now,
                                                            window if window else None)
            session = reading.session
            if answered is None:
                share = reading.done / reading.size if reading.size else 0.0
                problem = f"reading the transcript, {share:.0%}" + (
                    "" if reading.kept else " (its progress cannot be saved in a cache "
                    "folder, so every call starts over)")
            else:
                decision = answered.decision
        except OutOfTime:
            problem = "transcript too slow to read"
        except Exception as e:            # never break the status bar
            problem = _short(e)
    else:
        problem = "no transcript yet"
    parts = []
    if decision is not None:
        parts.append(decision_part(decision, paint))
        pause = pause_part(decision, paint)
        if pause:
            parts.append(pause)
    ctx = context_part(status if isinstance(status, dict) else {}, session, paint)
    if ctx:
        parts.append(ctx)
    cache = cache_part(status if isinstance(status, dict) else {}, question, paint, now)
    if cache:
        parts.append(cache)
    if problem:
        parts.append(paint(f"compact-dp: {problem}", DIM))
    return " · ".join(parts) or "compact-dp"


def _short(e: Exception) -> str:
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    return text if len(text) <= 60 else text[:57] + "…"


def run(argv: list[str], env: Env) -> int:
    """Read the JSON on stdin, print one line, exit 0 — whatever happens."""
    args = list(argv)
    if "--help" in args or "-h" in args:
        env.write("Usage: compact-dp statusline [--color auto|always|never]\n\n"
                  "Reads Claude Code's statusLine JSON on stdin and prints one line: whether\n"
                  "/compact pays now, the context's use and the cache's state.\n")
        return 0
    colour_mode = colour_of(args, env)
    line = "compact-dp"
    try:
        line = _with_budget(lambda: status_line(
            _status_json(env), env.environ, time.time(),
            colour_wanted(colour_mode, env.environ)))
    except Exception as e:                # the last line of defence: still one line
        env.note(f"statusline: {_short(e)}")
    env.write(line.replace("\n", " ") + "\n")
    return 0


def _status_json(env: Env) -> dict[str, object]:
    """The statusLine object on stdin; {} for anything else (nothing, not JSON, cut
    short): the line then says what it can without it."""
    from .stdinjson import read_json
    try:
        status = read_json(env.stdin)
    except ValueError:
        return {}
    return status if isinstance(status, dict) else {}


def _with_budget(work: Callable[[], str]) -> str:
    """Run ``work`` with an alarm after BUDGET seconds (where signals allow).  The C
    module ``_signal`` does what ``signal`` does, without the enum import (~5 ms)."""
    try:
        import _signal as signal  # type: ignore[import-not-found]  # typeshed has no stub
    except ImportError:
        import signal

    def expired(signum: int, frame: FrameType | None) -> None:
        raise OutOfTime()
    try:
        old = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, BUDGET)
    except (ValueError, AttributeError, OSError):   # not the main thread, or no SIGALRM
        return work()
    try:
        return work()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
