"""The native options as data, a small parser for them, and their help text.

The decision runs before every LLM call, so its command line must start as fast as the awk
form: typer (with click and pydantic) costs ~200 ms of start-up, the whole decision ~20 ms.
The decision's options are therefore parsed here, from one table that also builds the
typer options of the subcommands for people (``replay``, ``prices``, …), so an option is
written down once.  The grammar is click's: ``--name VALUE`` or ``--name=VALUE``, flags,
operands anywhere, ``--`` ends options, ``-`` is an operand.
"""

from __future__ import annotations

from ..core.params import PARAMS
from ..errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence


# every command, in the order the decision's help lists them: how it is called and what it
# does — the one list that dispatch (cli/main.py) and the help page both read
COMMANDS = {
    "replay": ("replay [FILE|DIR]...", "what each compaction policy would have cost"),
    "backtest": ("backtest [FILE|DIR]...", "the advice against what happened next"),
    "calibrate": ("calibrate [DIR]...", "fit the profile on your own sessions"),
    "prices": ("prices [MODEL]...", "the price table"),
    "statusline": ("statusline", "Claude Code's status line (JSON on stdin)"),
    "hook": ("hook NAME", "Claude Code's hooks (JSON on stdin)"),
    "install": ("install claude-code", "add the status line and hooks to its settings"),
    "uninstall": ("uninstall claude-code", "take them out again"),
    "hooks": ("hooks path", "where the bash-agent hooks are installed"),
    "help": ("help [COMMAND]", "a command's help page"),
}


def close_names(typo: str, names: Iterable[str]) -> list[str]:
    """The names a mistyped option or command may have meant, the one rule: those one
    edit away (a letter added, left out, changed, or two swapped; two edits where both
    the typo and the name have six letters or more), or that it begins (three letters at
    least) — compared without the leading dashes, so ``--bogus`` is not "close" to
    ``--jobs`` for its ``--``."""
    bare = typo.lstrip("-")
    found = []
    for name in names:
        other = name.lstrip("-")
        allowed = 2 if min(len(bare), len(other)) >= 6 else 1
        if edits(bare, other) <= allowed or len(bare) >= 3 and other.startswith(bare):
            found.append(name)
    return found


def edits(a: str, b: str) -> int:
    """Letters added, left out, changed, or two neighbours swapped, to turn a into b
    (optimal string alignment distance)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def did_you_mean(typo: str, names: Iterable[str]) -> str:
    """`` (did you mean --json?)`` when one name is close (two or three: each named),
    else nothing: a guess among many helps nobody."""
    close = close_names(typo, names)
    if not close or len(close) > 3:
        return ""
    return f" (did you mean {' or '.join(close)}?)"


class Option:
    """One option: its flag, where its value goes, whether it takes one, and its help."""

    __slots__ = ("flag", "dest", "takes_value", "metavar", "help", "multiple", "short")

    def __init__(self, flag: str, dest: str, help: str, *, takes_value: bool = True,
                 metavar: str = "VALUE", multiple: bool = False, short: str | None = None):
        self.flag, self.dest, self.help = flag, dest, help
        self.takes_value, self.metavar, self.multiple = takes_value, metavar, multiple
        self.short = short


def param_options(skip: Iterable[str] = ()) -> list[Option]:
    """A --option per parameter of the table (values stay strings: validated later)."""
    out = []
    for p in PARAMS:
        if p.awk in skip:
            continue
        env = f"env {p.env}, " if p.env else ""
        out.append(Option(f"--{p.option}", p.awk, f"{p.meaning} ({env}default {p.default}; "
                          f"{p.rule()}; awk name {p.awk})", metavar="NUMBER"))
    return out


MODEL = Option("--model", "model", "decision model: v3.0.7, v2, v4.2, turn-keep or "
               "cache-clock (env COMPACT_DP_MODEL; default: cache-clock for claude-code and "
               "codex sessions, v3.0.7 otherwise)", metavar="NAME")
JSON = Option("--json", "json", "print one JSON object", takes_value=False)
EXPLAIN = Option("--explain", "explain", "show every term and the decision in words",
                 takes_value=False)
HELP = Option("--help", "help", "show this message and exit", takes_value=False, short="-h")
VERSION = Option("--version", "version", "print the version and exit", takes_value=False)
POLICY = [
    Option("--trigger", "trigger", "apply the forced-compaction policy (exit 0 = compact "
           "now, 1 = do not)", metavar="auto|plan_clear|plan_confirm"),
    Option("--context-tokens", "context_tokens", "context size of the last request "
           "(policy)", metavar="N"),
    Option("--force-percent", "force_percent", "force above P % of max context (default 90)",
           metavar="P"),
]
FORMAT = Option("--format", "format", "the file's format: auto (default: told from its first "
                "lines), bash-agent, claude-code, codex, openai", metavar="FORMAT")
TOKENS = Option("--tokens", "tokens", "message sizes: usage (from the recorded prompts; the "
                "default when the session records them) or bytes (from the content)",
                metavar="usage|bytes")
KEEP = Option("--keep", "keep", "auto (default: none for claude-code and codex sessions, whose "
              "agents keep no message when they compact; best otherwise), best (find the "
              "best number of messages to keep) or none (decide only whether to compact now)",
              metavar="auto|best|none")
CACHE = [
    Option("--price", "price", "price the decision as this model of the price table "
           "(default: the session's own model; compact-dp prices lists them)",
           metavar="MODEL"),
    Option("--p-write", "p_write", "cache write $/MTok (cache-clock; default: the price "
           "table's for the cache's TTL, else --p-input)", metavar="NUMBER"),
    Option("--cache-ttl", "cache_ttl", "the cache's lifetime: 5m, 1h, 30m or seconds "
           "(default: from the session's cache writes, else the provider's)", metavar="TTL"),
    Option("--now", "now", "the moment of the decision, for the cache's state: ISO 8601 or "
           "seconds since 1970 (default: now)", metavar="TIME"),
    Option("--auto-compact-tokens", "auto_compact_tokens", "where the agent compacts by "
           "itself: a context of N tokens, or off (default: learned from the session — its "
           "own automatic compactions, else its agent's documented point)", metavar="N|off"),
]
HORIZON = Option("--horizon", "horizon", "the requests still to come, R: seed (E × L, "
                 "bash-agent's rule), auto (forecast from the requests so far, fitted on real "
                 "sessions; the default for cache-clock on a session with usage) or a number",
                 metavar="seed|auto|N")
DECIDE_OPTIONS = [FORMAT, TOKENS, MODEL, KEEP, JSON, EXPLAIN, *POLICY, *param_options(),
                  *CACHE, HORIZON, HELP, VERSION]


class Parsed:
    """Parsed options by dest (str, bool or a list for repeatable ones) and the operands."""

    def __init__(self) -> None:
        self.values: dict[str, object] = {}
        self.operands: list[str] = []

    def get(self, dest: str, default: object = None) -> object:
        return self.values.get(dest, default)

    def text(self, dest: str) -> str | None:
        value = self.values.get(dest)
        return value if isinstance(value, str) else None

    def flag(self, dest: str) -> bool:
        return bool(self.values.get(dest))


def parse(argv: Sequence[str], options: Sequence[Option]) -> Parsed:
    """Options and operands, click's way; unknown options and missing values are errors."""
    by_flag = {o.flag: o for o in options}
    by_flag.update({o.short: o for o in options if o.short})
    parsed = Parsed()
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            parsed.operands.extend(argv[i:])
            break
        if not arg.startswith("-") or arg == "-":
            parsed.operands.append(arg)
            continue
        name, eq, inline = arg.partition("=")
        option = by_flag.get(name)
        if option is None:
            raise UsageError(f"no such option: {name}" +
                             did_you_mean(name, [f for f in by_flag if f.startswith("--")]))
        if not option.takes_value:
            if eq:
                raise UsageError(f"option {name} does not take a value")
            parsed.values[option.dest] = True
            continue
        if eq:
            value = inline
        elif i < len(argv):
            value = argv[i]
            i += 1
        else:
            raise UsageError(f"option {name} requires a value")
        not_empty(name, value)
        if option.multiple:
            listed = parsed.values.setdefault(option.dest, [])
            assert isinstance(listed, list)
            listed.append(value)
        else:
            parsed.values[option.dest] = value
    return parsed


def not_empty(flag: str, value: str) -> str:
    """An option's value is never empty: ``--format=`` or ``--price "$UNSET"`` is a
    mistake to name, not a way to ask for the default (leave the option out for that)."""
    if value == "":
        raise UsageError(f"option {flag} requires a value, got an empty one")
    return value


def value_options(options: Sequence[Option]) -> set[str]:
    """Flags that consume the next argument (to find the first operand)."""
    return {o.flag for o in options if o.takes_value}


def help_text(usage: str, description: str, options: Sequence[Option], width: int = 80,
              epilog: str = "", commands: dict[str, tuple[str, str]] | None = None) -> str:
    """A --help page: usage, what the command does, every option wrapped to ``width``."""
    import textwrap

    out = [f"Usage: {usage}", ""]
    out += textwrap.wrap(description, width) + [""]
    out.append("Options:")
    labels = []
    for o in options:
        label = (f"{o.short}, " if o.short else "") + o.flag
        if o.takes_value:
            label += f" {o.metavar}"
        labels.append(label)
    col = min(34, max(len(x) for x in labels) + 4)
    for label, o in zip(labels, options):
        body = textwrap.wrap(o.help, max(20, width - col - 2)) or [""]
        if len(label) + 4 > col:
            out.append(f"  {label}")
            out += [" " * col + line for line in body]
        else:
            out.append(f"  {label.ljust(col - 2)}{body[0]}")
            out += [" " * col + line for line in body[1:]]
    if commands:
        out += ["", "Commands:"]
        col = max(len(usage) for usage, _ in commands.values()) + 4
        for usage, words in commands.values():
            body = textwrap.wrap(words, max(20, width - col - 2)) or [""]
            out.append(f"  {usage.ljust(col - 2)}{body[0]}")
            out += [" " * col + line for line in body[1:]]
    if epilog:
        out += [""] + textwrap.wrap(epilog, width)
    return "\n".join(out) + "\n"
