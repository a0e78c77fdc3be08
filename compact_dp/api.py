"""The Python API, in sqlite-utils' manner: each command is a typed library call.

    >>> import compact_dp
    >>> session = compact_dp.load("session.jsonl")
    >>> d = session.decide()
    >>> d.compact, d.keep, d.benefit, d.as_dict()["terms"]
    >>> compact_dp.replay(["sessions/"], policies=["dp", "never"]).as_dict()
    >>> compact_dp.prices(["claude-opus-4-6"]).as_dict()

``load`` reads any supported format (docs/formats.md) from a path, bytes, a binary file or
lines, into a read-only ``Session``.  ``Session.decide`` takes one set of keywords — the
parameters by name (``turns=5``, ``max_context=200000``: every name of docs/options.md,
with ``_`` for ``-``; or ``params``, by awk name) and how to ask (``model``, ``keep``,
``price``, ``cache_ttl``, ``p_write``, ``now``, ``horizon``, ``trigger``,
``context_tokens``, ``force_percent``) — and returns a ``Decision``.  ``replay`` and
``prices`` take their commands' options as keywords.  Each answer's ``as_dict()`` is what
the command's ``--json`` prints in the same environment: every call reads the process's
variables (the profile ``calibrate`` wrote among them) unless given ``environ=`` or
``profile=``.  The commands call these same functions (cli/replay.py, cli/prices.py)
and only show the answer.  docs/api.md has runnable examples.  Every failure is a
``CompactDpError``; bad values name the keyword.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import IO, Literal

from .asking import Answer, PolicyAsk, awk_names
from .core.models import Model
from .core.params import PARAMS, STATS
from .core.policy import DEFAULT_FORCE_PERCENT, PolicyResult
from .errors import BadValue
from .question import Options, Question, decide_session
from .sessions.read import read_session
from .sessions.session import Compaction, Request
from .sessions.session import Session as Recording

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .core.decision import Weighing
    from .core.quantities import Derived, Terms
    from .environment import Env
    from .pricing.table import Prices
    from .replaying.records import Doc

# The values a keyword may take, for type checkers and editors (tests/test_api.py holds
# each equal to the tuple the code checks at run time).
Source = str | os.PathLike[str] | bytes | bytearray | IO[bytes] | Iterable[str | bytes]
Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
Keep = Literal["auto", "best", "none"]                       # question.KEEP_MODES
Trigger = Literal["auto", "plan_clear", "plan_confirm"]      # core.policy.TRIGGERS
Horizon = Literal["auto", "seed", "profile"] | float         # core.horizon.HORIZONS
Tokens = Literal["auto", "usage", "bytes"]                   # sessions.recorder.TOKEN_MODES
By = Literal["session", "project", "day", "month"]           # replaying.compare.BY
Sort = Literal["date", "project", "requests", "cost", "saving"]   # replaying.compare.SORTS
Point = Literal["request", "turn"]                           # agents.POINTS

# the parameters as keywords: each option's name with _ for - (the table's, core.params)
PARAM_KEYWORDS = tuple(p.option.replace("-", "_") for p in PARAMS)


def _environ(environ: Mapping[str, str] | None,
             profile: str | os.PathLike[str] | None) -> Mapping[str, str]:
    """What a call reads: ``environ``, by default the process's own (as the command
    reads it: its DP_* values, COMPACT_DP_MODEL, the profile ``calibrate`` wrote); a
    ``profile`` (a file, or ``"none"`` for the built-in one) is COMPACT_DP_PROFILE."""
    if environ is None:
        from .environment import process_environ
        environ = process_environ()
    if profile is not None:
        environ = {**environ, "COMPACT_DP_PROFILE": os.fspath(profile)}
    return environ


def _params(flat: Mapping[str, object], params: Mapping[str, float | str] | None
            ) -> dict[str, object]:
    """The parameters given as keywords and in ``params`` (awk or option names), each
    once."""
    given = {k: v for k, v in flat.items() if k in PARAM_KEYWORDS and v is not None}
    taken = dict(zip(awk_names(given), given))          # awk name -> the keyword
    for key, value in (params or {}).items():
        (name,) = awk_names({key: value})
        if name in taken:
            raise BadValue(taken[name], "given both as a keyword and in params")
        given[key] = value
    return given


class Decision:
    """What compact-dp decided for a session, and why: ``compact`` (summarise now),
    ``keep`` (the messages to keep; 0 with none), ``benefit`` (the net $ of the best
    candidate), ``terms``, ``derived``, ``reason`` — and ``action``, ``forced`` when a
    trigger asked for the agent's whole policy."""

    __slots__ = ("_answer", "_question", "_session")

    def __init__(self, answer: Answer, question: Question, session: Recording):
        self._answer, self._question, self._session = answer, question, session

    @property
    def core(self) -> Weighing:
        """The cost model's own decision (before a trigger's policy)."""
        return self._answer.decision

    @property
    def policy(self) -> PolicyResult | None:
        """The agent's policy's result, when a trigger asked for it."""
        return self._answer.policy

    @property
    def compact(self) -> bool:
        if self.policy is not None:
            return self.policy.action == "compact"
        return self.core.compact

    @property
    def keep(self) -> int:
        return self.policy.keep if self.policy is not None else self.core.keep

    @property
    def benefit(self) -> float:
        return self.core.best_benefit

    @property
    def terms(self) -> Terms | None:
        return self.core.terms

    @property
    def derived(self) -> Derived | None:
        return self.core.derived

    @property
    def action(self) -> str:
        return "compact" if self.compact else "skip"

    @property
    def exit_status(self) -> int:
        """What the command would exit with: 0, or 1 when a trigger's policy says skip."""
        return self.policy.exit_status if self.policy is not None else 0

    @property
    def forced(self) -> bool:
        return self.policy.forced if self.policy is not None else False

    @property
    def reason(self) -> str:
        from .views.words import reason
        return reason(self.core, self.policy)

    def as_dict(self) -> dict[str, object]:
        """The ``--json`` object (docs/output.md)."""
        from .views.record import document, session_record, to_dict
        return document(to_dict(self.core, self.policy,
                                session_record(self._session, self._question)))

    def __repr__(self) -> str:
        return (f"Decision(compact={self.compact}, keep={self.keep}, "
                f"benefit={self.benefit!r})")


class Session:
    """A session read from a file or bytes (any format), ready to be asked.  What it holds
    is read-only: each property a copy of the normalised session's (docs/formats.md)."""

    __slots__ = ("_recording",)

    def __init__(self, recording: Recording):
        self._recording = recording

    @property
    def format(self) -> str:
        return self._recording.format

    @property
    def path(self) -> str | None:
        return self._recording.path

    @property
    def request_count(self) -> int:
        """The LLM requests recorded (bash-agent: one per line)."""
        return self._recording.request_count

    @property
    def compaction_count(self) -> int:
        return self._recording.compaction_count

    @property
    def user_turns(self) -> int:
        """Human turns in the whole file."""
        return self._recording.user_turns

    @property
    def live_start(self) -> int:
        """The message the live context starts at (after the last compaction)."""
        return self._recording.live_start

    @property
    def live_messages(self) -> int:
        return self._recording.live_messages

    @property
    def live_tokens(self) -> int:
        return self._recording.live_tokens

    @property
    def prefix(self) -> float | None:
        """V, the live context's fixed prefix (system prompt, tools), where recorded."""
        return self._recording.prefix

    @property
    def summary_tokens(self) -> int | None:
        """The last compaction's summary."""
        return self._recording.summary_tokens

    @property
    def input_tokens(self) -> int | None:
        """The recorded prompt tokens, summed (None without usage)."""
        return self._recording.input_tokens

    @property
    def output_tokens(self) -> int:
        return self._recording.output_tokens

    @property
    def has_usage(self) -> bool:
        return self._recording.has_usage

    @property
    def token_source(self) -> str:
        """How messages are sized: ``usage`` or ``bytes``."""
        return self._recording.token_source

    @property
    def llm(self) -> str | None:
        """The last request's model id (the next one's, likely)."""
        return self._recording.llm

    @property
    def llms(self) -> tuple[str, ...]:
        """The model ids, in the order of first use."""
        return tuple(self._recording.llms)

    @property
    def session_id(self) -> str | None:
        return self._recording.session_id

    @property
    def cwd(self) -> str | None:
        return self._recording.cwd

    @property
    def started(self) -> float | None:
        """Its first timestamp, in seconds since 1970."""
        return self._recording.started

    @property
    def window(self) -> int | None:
        """The context window the agent reported."""
        return self._recording.window

    @property
    def kinds(self) -> tuple[str, ...]:
        """Each message's kind: user, tool, assistant or context."""
        return tuple(self._recording.kinds)

    @property
    def tokens(self) -> tuple[int, ...]:
        """Each message's tokens."""
        return tuple(self._recording.tokens)

    @property
    def requests(self) -> tuple[Request, ...]:
        return tuple(self._recording.requests)

    @property
    def compactions(self) -> tuple[Compaction, ...]:
        return tuple(self._recording.compactions)

    @property
    def warnings(self) -> tuple[str, ...]:
        """What the reader said of the file (lines skipped, …)."""
        return tuple(self._recording.warnings)

    def decide(self, *, turns: float | None = None, requests: float | None = None,
               compactions: float | None = None, input_tokens: float | None = None,
               baseline_turns: float | None = None, fixed_turns: float | None = None,
               calls_per_turn: float | None = None, prefix_tokens: float | None = None,
               p_input: float | None = None, p_cache: float | None = None,
               p_out: float | None = None, summary_tokens: float | None = None,
               min_keep_ratio: float | None = None, retention: float | None = None,
               beta: float | None = None, max_context: float | None = None,
               quality_penalty: float | None = None, after_tokens: float | None = None,
               after_cached: float | None = None,
               params: Mapping[str, float | str] | None = None,
               model: str | Model | None = None, keep: Keep = "auto",
               price: str | None = None, cache_ttl: str | None = None,
               p_write: float | None = None, now: float | None = None,
               horizon: Horizon | None = None, trigger: Trigger | None = None,
               context_tokens: float | None = None,
               force_percent: float = DEFAULT_FORCE_PERCENT,
               environ: Mapping[str, str] | None = None,
               profile: str | os.PathLike[str] | None = None) -> Decision:
        """Decide for the live context (docs/api.md: every keyword).  The parameters by
        their option's name (``turns`` … ``after_cached``), or in ``params`` by awk or
        option name; ``environ``: the variables to read, by default the process's own,
        as the command reads them; ``environ={}`` reads none; ``profile``: a profile
        file (or ``"none"``: the built-in one) instead of the one the variables name."""
        given = _params(locals(), params)
        environ = _environ(environ, profile)
        policy = None
        if trigger is not None or context_tokens is not None:
            policy = PolicyAsk(trigger or "auto", float(context_tokens or 0), force_percent)
        answer, question = decide_session(self._recording, Options(
            given, model=model, keep=keep, price=price, cache_ttl=cache_ttl,
            p_write=p_write, now=now, horizon=horizon, policy=policy, environ=environ,
            project="auto"))
        return Decision(answer, question, self._recording)

    def __repr__(self) -> str:
        return (f"Session(format={self.format!r}, requests={self.request_count}, "
                f"messages={self.live_messages})")


def load(source: Source, format: str = "auto", tokens: Tokens = "auto") -> Session:
    """Read a path, raw bytes, a binary file object, or an iterable of lines (str or
    bytes, with or without their newline) as a session."""
    if isinstance(source, (str, os.PathLike)):
        return Session(read_session([os.fspath(source)], format, tokens))
    if isinstance(source, (bytes, bytearray)):
        stream: IO[bytes] = io.BytesIO(bytes(source))
    elif hasattr(source, "read"):
        probe = source.read(0)
        if isinstance(probe, str):
            raise BadValue("source", "a text-mode file: open it in binary mode ('rb')")
        stream = source  # type: ignore[assignment]  # anything with read() is a file here
    else:
        try:
            lines = [x.encode() if isinstance(x, str) else bytes(x)
                     for x in source]
        except TypeError:
            raise BadValue("source", f"{type(source).__name__} is not a path, bytes, a "
                           "binary file or lines") from None
        stream = io.BytesIO(b"".join(x if x.endswith(b"\n") else x + b"\n" for x in lines))
    return Session(read_session(["-"], format, tokens, stdin=stream))


def decide(source: Source, *, format: str = "auto", tokens: Tokens = "auto",
           turns: float | None = None, requests: float | None = None,
           compactions: float | None = None, input_tokens: float | None = None,
           baseline_turns: float | None = None, fixed_turns: float | None = None,
           calls_per_turn: float | None = None, prefix_tokens: float | None = None,
           p_input: float | None = None, p_cache: float | None = None,
           p_out: float | None = None, summary_tokens: float | None = None,
           min_keep_ratio: float | None = None, retention: float | None = None,
           beta: float | None = None, max_context: float | None = None,
           quality_penalty: float | None = None, after_tokens: float | None = None,
           after_cached: float | None = None,
           params: Mapping[str, float | str] | None = None,
           model: str | Model | None = None, keep: Keep = "auto",
           price: str | None = None, cache_ttl: str | None = None,
           p_write: float | None = None, now: float | None = None,
           horizon: Horizon | None = None, trigger: Trigger | None = None,
           context_tokens: float | None = None,
           force_percent: float = DEFAULT_FORCE_PERCENT,
           environ: Mapping[str, str] | None = None,
           profile: str | os.PathLike[str] | None = None) -> Decision:
    """``load(source, format, tokens).decide(...)``, with the keywords of
    ``Session.decide`` (written out again so type checkers and editors see them; a test
    holds the two lists equal)."""
    keywords = dict(locals())
    for name in ("source", "format", "tokens"):
        del keywords[name]
    return load(source, format, tokens).decide(**keywords)


class Replay:
    """What ``compact-dp replay`` answers: per session, what each compaction policy
    would have cost (``sessions``), the files ``skipped`` with why, and with several the
    ``total``; ``as_dict()`` is what ``--json`` prints (docs/replay.md)."""

    __slots__ = ("_results", "_by", "_sort", "_files")

    def __init__(self, results: list[Doc], by: str | None, sort: str, files: int):
        self._results, self._by, self._sort, self._files = results, by, sort, files

    @property
    def sessions(self) -> list[Doc]:
        """Each session replayed, as ``as_dict()["sessions"]`` holds it."""
        out: list[Doc] = self.as_dict()["sessions"]
        return out

    @property
    def skipped(self) -> list[Doc]:
        """Each file left out, with why (``session``, ``error``)."""
        out: list[Doc] = self.as_dict()["skipped"]
        return out

    def as_dict(self) -> Doc:
        from .replaying.view import json_doc
        from .views.record import document
        return document(json_doc(self._results, self._by or "session", self._sort))

    def render(self, env: Env, detail: bool = False) -> str:
        """The command's tables and pictures, for ``env``'s width and terminal."""
        from .replaying.view import render_text
        return render_text(self._results, env, many=self._files > 1 or self._by is not None,
                           by=self._by, sort=self._sort, detail=detail)

    def __repr__(self) -> str:
        good = sum(1 for r in self._results if "policies" in r)
        return f"Replay(sessions={good}, skipped={len(self._results) - good})"


def replay(paths: Paths = (), *, policies: Sequence[str] | None = None,
           by: By | None = None, sort: Sort = "date", since: str | None = None,
           until: str | None = None, project: str | None = None, format: str = "auto",
           tokens: Tokens = "auto", model: str | Model | None = None, keep: Keep = "auto",
           compact_at: Point | None = None, keep_tokens: int = 20000,
           price: str | None = None, cache_ttl: str | None = None,
           auto_compact_tokens: float | Literal["off"] | None = None,
           params: Mapping[str, float | str] | None = None, jobs: int | None = None,
           detail: bool = True, environ: Mapping[str, str] | None = None,
           profile: str | os.PathLike[str] | None = None, env: Env | None = None,
           progress: Callable[[int, int], None] | None = None) -> Replay:
    """Replay recorded sessions — files, or folders searched for them; none: the user's
    own history — under each policy (``compact-dp replay``: the same keywords as its
    options).  ``detail=False`` keeps only each policy's totals when several files are
    replayed (as the command's table of many does; ``as_dict()`` then has no series);
    ``jobs``: processes (default: the cores); ``environ``, ``profile``: as for
    ``decide``; ``env``: the command line's streams (``environment.Env``), where the notes
    the command says go and what ``-`` reads (by default none: skipped files are in
    ``skipped``); ``progress(done, total)`` after each file."""
    from .agents import POINTS
    from .asking import model_named
    from .core.params import native_values, whole_number
    from .environment import Env
    from .errors import UsageError
    from .history import Selection, parse_day, session_files
    from .replaying.batch import (
        DEFAULT_POLICIES,
        FileJob,
        cores,
        counted_once,
        run_batch,
        run_shown,
        say_skipped,
        standard_input,
    )
    from .replaying.compare import BY, SORTS
    from .replaying.run import policy_for
    from .sessions.recorder import TOKEN_MODES

    if env is None:
        env = Env(environ=_environ(environ, profile))
    elif environ is not None or profile is not None:     # the caller's Env stays as it was
        import copy
        env = copy.copy(env)
        env.environ = _environ(env.environ if environ is None else environ, profile)
    _one_of("by", by, BY, none=True)
    _one_of("sort", sort, SORTS)
    if sort == "project" and by in ("day", "month"):
        raise BadValue("sort project", f"rows by {by} have no project (sort them by "
                       f"{', '.join(s for s in SORTS if s != 'project')}, or use --by "
                       "project)")
    since, until = (parse_day(day, where) if day is not None else None
                    for day, where in ((since, "since"), (until, "until")))
    select = Selection(since, until, project) if since or until or project else None
    if model is not None:
        model = model_named(model)
        if model.turn_keep:
            raise UsageError("replay's dp policy needs a cost model, not turn-keep")
    _one_of("keep", keep, ("auto", "best", "none"))
    _one_of("compact_at", compact_at, POINTS, none=True)
    keep_tokens = whole_number(keep_tokens, "keep_tokens", 0)
    jobs = cores() if jobs is None else whole_number(jobs, "jobs", 1)
    if tokens not in TOKEN_MODES:
        raise BadValue("tokens", f"{tokens!r} is not one of usage, bytes (or auto)")
    if cache_ttl is not None:                    # as the decision checks it, before reading
        from .pricing.table import parse_ttl
        try:
            parse_ttl(cache_ttl)
        except ValueError as e:
            raise BadValue("cache_ttl", str(e)) from None
    auto = _auto_compact(auto_compact_tokens)
    given = awk_names(params)
    for key in params or {}:
        if awk_names({key: 0}).keys() & set(STATS):
            raise BadValue(key, "no such parameter of replay (the session records it)")
    native_values(given, env.environ)           # bad values fail before any reading
    chosen = list(policies or DEFAULT_POLICIES)
    for p in chosen:
        policy_for(p)
    named = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else \
        [os.fspath(p) for p in paths]
    files = session_files(env, named)
    options = FileJob(chosen, given, model, keep, keep_tokens, format, tokens, price,
                      cache_ttl, dict(env.environ), chosen=bool(policies),
                      detail=detail or len(files) == 1, select=select, points=compact_at,
                      auto=auto)
    stdin = standard_input(named, env)
    shown = None if progress is None else (lambda n: progress(n, len(files)))
    results = run_shown(files, options, jobs, env, len(files) > 1, stdin, shown)
    results = [r for r in results if not r.get("left_out")]
    explicit = [r for r in results if "error" in r and
                (not r.get("skippable") or r["session"] in named)]
    if explicit:
        raise UsageError(explicit[0]["error"])
    results = counted_once(results, lambda again, extras: run_batch(
        again, options, jobs, stdin=stdin, extras=extras))
    say_skipped(env, results, named)
    for r in results:
        for warning in r.get("warnings", ()):
            env.warn(f"{r['session']}: {warning}")
    return Replay(results, by, sort, len(files))


def _one_of(name: str, value: str | None, choices: tuple[str, ...],
            none: bool = False) -> None:
    """A keyword's value is one of ``choices`` (or None, where ``none``)."""
    if not (value is None and none) and value not in choices:
        raise BadValue(name, f"{value!r} is not one of {', '.join(choices)}")


def _auto_compact(tokens: float | str | None) -> tuple[float | None, bool]:
    """``auto_compact_tokens``: N tokens (> 0) or ``off``, as (N or None, off)."""
    if tokens is None:
        return None, False
    if tokens == "off":
        return None, True
    if isinstance(tokens, bool) or not isinstance(tokens, (int, float)) or not tokens > 0:
        raise BadValue("auto_compact_tokens", f"{tokens!r} is not a number of tokens > 0 "
                       "or off")
    return float(tokens), False


class PriceTable:
    """What ``compact-dp prices`` answers: the dated price table, or the models asked
    for; ``as_dict()`` is what ``--json`` prints (docs/pricing.md)."""

    __slots__ = ("_models",)

    def __init__(self, models: list[Prices]):
        self._models = models

    @property
    def models(self) -> tuple[Prices, ...]:
        """Each model's entry: ``llm``, ``input``, ``cache_read``, ``cache_write``,
        ``output``, ``context_window``, ``date``, … ($ per million tokens)."""
        return tuple(self._models)

    def as_dict(self) -> dict[str, object]:
        from .pricing.table import table_doc
        from .views.record import document
        return document(table_doc(self._models))

    def __repr__(self) -> str:
        return f"PriceTable(models={len(self._models)})"


def prices(models: Iterable[str] = ()) -> PriceTable:
    """The price table (``compact-dp prices``), or only the models named, matched as the
    decision matches a session's model id."""
    from .pricing.table import chosen_entries
    return PriceTable(chosen_entries([models] if isinstance(models, str) else list(models)))
