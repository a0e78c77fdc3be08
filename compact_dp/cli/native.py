"""The native decision: ``compact-dp [OPTIONS] FILE...``.

Named options for every parameter, defaults from the env vars, strict validation
(docs/options.md).  Parsed by ``options.parse``, not typer, so the answer an agent waits
for starts about as fast as the awk form.
"""

from __future__ import annotations

from ..asking import PolicyAsk, model_named
from ..core.awkvalue import looks_numeric
from ..core.params import BY_AWK, strict_number
from ..core.policy import DEFAULT_FORCE_PERCENT, TRIGGERS
from ..environment import Env
from ..errors import UsageError
from ..question import Options, decide_session
from ..sessions.read import read_session
from ..version import __version__, build, doc_lines
from ..views.emit import EXPLAIN, JSON, PLAIN, emit
from .options import COMMANDS, DECIDE_OPTIONS, Parsed, help_text, parse

USAGE = "compact-dp [OPTIONS] [FILE]...  |  compact-dp COMMAND ..."
DESCRIPTION = ("Decide whether (and where) to compact a coding agent's conversation and "
               "print the messages to keep (0 = do not compact). FILE is a bash-agent, "
               "Claude Code, Codex or OpenAI chat session (the formats page below); "
               "bash-agent files are read as one stream; - or none reads standard input. What the "
               "session records (turns, requests, compactions, input tokens, the fixed "
               "prefix) fills the options not given. Any -v or -f argument selects the "
               "awk-compatible form instead (compact-dp -v t=5 ... -f compact_dp.awk FILE).")
EPILOG = ("compact-dp help COMMAND (or COMMAND --help) shows a command's page. Exit "
          "status: 0 answered (with a policy: compact now), 1 a policy says do not compact, "
          "2 error.")


def decide_help(width: int = 80) -> str:
    return help_text(USAGE, DESCRIPTION, DECIDE_OPTIONS, width, EPILOG, COMMANDS) + \
        docs_line()


def docs_line() -> str:
    """Where the documentation is: a pipx install has no source tree to point to.  On
    lines of their own, so no wrapping cuts an address."""
    return "\n" + doc_lines(("options.md", "formats.md")) + "\n"


def run(argv: list[str], env: Env) -> int:
    """Parse, decide, print; errors are CompactDpError for the one boundary in main."""
    args = parse(argv, DECIDE_OPTIONS)
    if args.flag("help"):
        return env.write(decide_help(env.width))
    if args.flag("version"):
        return env.write(f"compact-dp {__version__} ({build()})\n")
    if args.flag("json") and args.flag("explain"):
        raise UsageError("--json and --explain cannot be combined")
    given = {p: v for p, v in args.values.items() if isinstance(v, str)}
    policy = policy_of(args)
    model_named(args.text("model"), env.environ)          # a bad model fails before reading
    auto, off = auto_compact_of(args.text("auto_compact_tokens"))
    if not args.operands and env.stdin_isatty:
        raise UsageError("no conversation file given (use - to read standard input)")
    session = read_session(args.operands, args.text("format") or "auto",
                           args.text("tokens") or "auto", env.stdin)
    for warning in session.warnings:
        env.warn(warning)
    result, question = decide_session(session, Options(
        _params_only(given), model=args.text("model"), environ=env.environ, policy=policy,
        keep=args.text("keep") or "auto", price=args.text("price"),
        cache_ttl=args.text("cache_ttl"), p_write=p_write_of(args), now=now_of(args),
        horizon=args.text("horizon"), auto_compact_tokens=auto, auto_off=off,
        project="auto"))
    for warning in question.warnings:
        env.warn(warning)
    output = JSON if args.flag("json") else EXPLAIN if args.flag("explain") else PLAIN
    status = emit(result.decision, env, output, result.policy, session=session,
                  question=question)
    return status or (result.policy.exit_status if result.policy else 0)


def non_negative(text: str, where: str) -> float:
    x = strict_number(text, where)
    if x < 0:
        raise UsageError(f"{where}: {text!r} is out of range (must be a number ≥ 0)")
    return x


def auto_compact_of(text: str | None) -> tuple[float | None, bool]:
    """--auto-compact-tokens: N tokens (> 0) or off: (N or None, off)."""
    if text is None:
        return None, False
    if text.strip().lower() == "off":
        return None, True
    x = strict_number(text, "--auto-compact-tokens")
    if not x > 0:
        raise UsageError(f"--auto-compact-tokens: {text!r} is not a number of tokens > 0 "
                         "or off")
    return x, False


def p_write_of(args: Parsed) -> float | None:
    text = args.text("p_write")
    return None if text is None else non_negative(text, "--p-write")


LAST_MOMENT = 253402300799.0        # 9999-12-31T23:59:59Z, the last an ISO date can say


def now_of(args: Parsed) -> float | None:
    """--now: ISO 8601 or seconds since the epoch, from 1970 to the year 9999 (a cache
    clock before its epoch or past any date is a typo, not a moment)."""
    text = args.text("now")
    if text is None:
        return None
    from ..sessions.timefmt import parse_time
    if looks_numeric(text):
        when: float | None = strict_number(text, "--now")
    else:
        when = parse_time(text.replace("+00:00", "Z"))
    if when is None or not 0 <= when <= LAST_MOMENT:
        raise UsageError(f"--now: {text!r} is not a time from 1970 to 9999 (ISO 8601, e.g. "
                         "2026-02-12T20:30:00Z, or seconds since 1970)")
    return when


def _params_only(given: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in given.items() if k in BY_AWK}


def policy_of(args: Parsed) -> PolicyAsk | None:
    """The policy's inputs when --trigger or --context-tokens asks for one, else None."""
    trigger, tokens, percent = (args.text("trigger"), args.text("context_tokens"),
                                args.text("force_percent"))
    if trigger is None and tokens is None:
        if percent is not None:
            raise UsageError("--force-percent needs --trigger or --context-tokens")
        return None
    trigger = trigger or "auto"
    if trigger not in TRIGGERS:
        raise UsageError(f"--trigger: {trigger!r} is not one of {', '.join(TRIGGERS)}")
    context = non_negative(tokens, "--context-tokens") if tokens else 0.0
    force = DEFAULT_FORCE_PERCENT
    if percent is not None:
        p = strict_number(percent, "--force-percent")
        if p != int(p) or not 0 <= p <= 100:
            raise UsageError(f"--force-percent: {percent!r} is not a whole number of percent "
                             "between 0 and 100")
        force = int(p)
    return PolicyAsk(trigger, context, force)
