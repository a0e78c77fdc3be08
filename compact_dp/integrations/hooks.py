"""Claude Code hooks: ``compact-dp hook user-prompt-submit`` and ``hook pre-compact``.

No hook can start a compaction.  Two can help:

* **UserPromptSubmit** adds a sentence to the model's context when compacting now pays, so
  the model can suggest ``/compact`` to the user; otherwise it prints nothing.
* **PreCompact** (opt-in) blocks an *automatic* compaction that does not pay yet — never a
  manual one, and never when the context is within a safety margin of the window, where
  not compacting would fail the next request.  (Claude Code honours the block from 2.1.105
  on; older versions ignore it.)

Both read the hook's JSON on stdin, never write the transcript, and never fail Claude
Code: any internal error is a line on stderr and exit 0.
"""

from __future__ import annotations

import time

from ..agents import HOLD_MARGIN
from ..environment import Env
from ..errors import CompactDpError, NotAHook, NotASession
from ..files import NotARegularFile
from ..views.words import dollars

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..core.decision import Weighing
    from ..sessions.session import Session

HOOKS = ("user-prompt-submit", "pre-compact")
READING = 5.0              # seconds of reading, well inside install's 10 s hook timeout;
                           # an unfinished read is saved and the hook says nothing

USAGE = f"""Usage: compact-dp hook user-prompt-submit
       compact-dp hook pre-compact [--margin PERCENT]

Claude Code hooks (JSON on stdin). user-prompt-submit adds a note to the
context when compacting now pays; pre-compact blocks an automatic compaction
that does not pay yet, unless the context is within PERCENT (default {HOLD_MARGIN:g}) of
the window.
"""


def _decide(hook: dict[str, object], environ: Mapping[str, str]
            ) -> tuple[Weighing | None, Session | None]:
    from .live import decide_transcript
    path = hook.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None, None
    try:
        reading, answered, _ = decide_transcript(path, environ, READING, time.time())
    except NotARegularFile:
        return None, None                     # a pipe is no transcript: nothing to say
    if answered is None:
        return None, None
    return answered.decision, reading.session


def user_prompt_submit(hook: dict[str, object], environ: Mapping[str, str]) -> str:
    """The hook's stdout: a JSON note for the model when compacting pays, else nothing."""
    decision, _ = _decide(hook, environ)
    if decision is None or not decision.compact:
        return ""
    import json
    R = decision.derived.R if decision.derived is not None else None
    over = f"the ~{R:,.0f} requests" if R is not None and 0 <= R < 1e15 else "the requests"
    note = (f"compact-dp: compacting this conversation now would pay — about "
            f"{dollars(decision.best_benefit, 2)} saved over {over} still expected — so if the "
            "user is moving to a new step, suggest they run /compact.")
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": note}}) + "\n"


def pre_compact(hook: dict[str, object], environ: Mapping[str, str],
                margin: float = HOLD_MARGIN) -> str:
    """A block decision for an automatic compaction that does not pay yet, else nothing."""
    if hook.get("trigger") != "auto":
        return ""
    decision, session = _decide(hook, environ)
    if decision is None or decision.compact or session is None:
        return ""
    used = session.last_request_tokens
    window = decision.derived.M if decision.derived is not None else None
    if used is None or not window or used >= window * (1 - margin / 100):
        return ""                            # too close to the end of the window
    import json

    from .statusline import Painter, decision_part
    # why not yet, in the status line's words (a loss, a wait, the forecast's error, a
    # likely last turn), without its colours
    said = decision_part(decision, Painter(False))
    why = said.removeprefix("not yet") if said.startswith("not yet") else f": {said}"
    reason = (f"compact-dp: an automatic compaction does not pay yet{why}; {used:,} of "
              f"{window:,.0f} tokens used")
    return json.dumps({"decision": "block", "reason": reason}) + "\n"


def margin_of(args: list[str], env: Env) -> float:
    """--margin PERCENT (or --margin=PERCENT), a number from 0 to 100; anything else is
    said on stderr and the default kept — a hook never fails."""
    text = None
    for i, a in enumerate(args):
        if a == "--margin" and i + 1 < len(args):
            text = args[i + 1]
        elif a.startswith("--margin="):
            text = a.split("=", 1)[1]
    if text is None:
        return HOLD_MARGIN
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 100:
        env.warn(f"hook: --margin {text!r} is not a percentage from 0 to 100; using "
                 f"{HOLD_MARGIN:g}")
        return HOLD_MARGIN
    return value


def run(argv: list[str], env: Env) -> int:
    """Dispatch a hook; on any internal error print to stderr and exit 0."""
    if "--help" in argv or "-h" in argv:     # never waits for stdin
        env.write(USAGE)
        return 0
    if not argv:
        raise NotAHook(f"hook needs a name: {' or '.join(HOOKS)}")
    name, rest = argv[0], argv[1:]
    if name not in HOOKS:
        raise NotAHook(f"unknown hook {name!r} (hooks: {', '.join(HOOKS)})")
    try:
        margin = margin_of(rest, env)
        from .stdinjson import read_json
        try:
            hook = read_json(env.stdin)
        except ValueError:
            hook = None
        if not isinstance(hook, dict):
            env.note(f"hook {name}: standard input holds no JSON object; nothing to do")
            return 0
        out = user_prompt_submit(hook, env.environ) if name == "user-prompt-submit" \
            else pre_compact(hook, env.environ, margin)
    except NotASession as e:                 # never fail Claude Code: say why, exit 0
        env.note(f"hook {name}: {e.path}: {e.what}, so the hook says nothing")
        return 0
    except CompactDpError as e:              # a file that cannot be read, or is no session
        env.note(f"hook {name}: {e.line().removeprefix('error: ')}, so the hook says "
                 "nothing")
        return 0
    except Exception as e:                   # a bug of ours: still never fail Claude Code
        env.note(f"hook {name}: internal error: {type(e).__name__}: {e}")
        return 0
    if out:
        env.write(out)
    return 0
