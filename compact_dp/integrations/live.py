"""What the status line and the hooks ask after every message: read a live transcript on
from where the last call stopped, for a while, and decide (question.decide_session)."""

from __future__ import annotations

import os
import time

from ..asking import Answer
from ..files import NotARegularFile, regular_or_absent
from ..question import Options, Question, decide_session
from ..sessions.incremental import STATE_ERRORS, Reading, cache_dir, read_incremental

PROJECT_READING = 0.3       # seconds a call may spend reading the project's other sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


def decide_transcript(path: str, env: Mapping[str, str], seconds: float, now: float,
                      window: float | None = None
                      ) -> tuple[Reading, Answer | None, Question | None]:
    """Read for at most ``seconds`` (the state in ``cache_dir(env)``), then decide as
    ``compact-dp --json TRANSCRIPT`` would at ``now`` — or, when the reading is not done
    yet, say so (no answer).  The forecast learns from the project's other sessions, read
    for at most PROJECT_READING seconds a call (the rest on the next).  ``window``: the
    context window the agent itself reported (the status line's ``context_window_size``),
    the session's setting's first source.  A transcript that is there and is no regular
    file is refused at once (NotARegularFile): a named pipe would be waited on past any
    deadline, and Claude Code waits on its hooks."""
    path, folder = os.path.expanduser(path), cache_dir(env)
    if not regular_or_absent(path):
        raise NotARegularFile(path)
    deadline = time.monotonic() + seconds
    reading = read_incremental(path, folder, deadline=deadline)
    if reading.session is None:
        return reading, None, None
    options = Options(environ=env, now=now, live_window=window, project="auto",
                      project_deadline=time.monotonic() + PROJECT_READING)
    try:
        answered, question = decide_session(reading.session, options)
    except STATE_ERRORS:
        if not reading.resumed or reading.afresh:
            raise               # not the state's doing: said, not read again on every call
        # a saved state of another shape (hand-edited) gave a session nothing can decide
        # on: one fresh read replaces it, instead of the same error on every call
        reading = read_incremental(path, folder, deadline=deadline, afresh=True)
        if reading.session is None:
            return reading, None, None
        answered, question = decide_session(reading.session, options)
    return reading, answered, question
