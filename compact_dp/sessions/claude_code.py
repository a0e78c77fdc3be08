"""Claude Code session files (``~/.claude/projects/<dir>/<session>.jsonl``).

One JSON object per line, tagged by ``type``.  Only ``user`` and ``assistant`` lines of the
main chain are conversation; ``progress``, snapshots, queue operations and ``system`` lines
are not — except a ``system`` line of subtype ``compact_boundary``, which is a compaction.
The rules (docs/formats.md has them in words):

* one API response is several assistant lines (one per content block) sharing
  ``message.id`` and ``requestId``: one request, one message;
* ``model: "<synthetic>"`` lines are client-side errors, not requests;
* sidechains (``isSidechain``) and ``subagents/`` files are not the main context;
* a human turn is a user line with string or text-only content that is not ``isMeta``,
  not a compaction summary, not command markup and not an interruption notice;
* the first user message after a compaction boundary is its summary (newer versions may
  omit ``isCompactSummary``, so the boundary is what counts).

* a response key that repeats one of the ``RECENT`` responses before it, but not the one
  just before, is a copy: it is not counted again.  (Copies are found in a window, not in
  the whole file, so a reader's saved state stays small; across the files of a session,
  replay counts each request once.)

The reader keeps a few named fields and tells a ``recorder.Recorder`` what it reads, so it
can be saved after any complete line and resumed on the bytes appended later.
"""

from __future__ import annotations

from ..agents import AUTO, MANUAL
from .jsonsize import json_size
from .line_reader import LineReader
from .session import ASSISTANT, CONTEXT, TOOL, USER, count, key_of
from .timefmt import parse_time

FORMAT = "claude-code"
MARKUP = ("<command-name>", "<command-message>", "<command-args>", "<local-command-",
          "<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
          "<user-prompt-submit-hook>", "[Request interrupted by user")
NOT_CONVERSATION = frozenset({"progress", "file-history-snapshot", "queue-operation",
                              "summary", "custom-title", "ai-title", "last-prompt",
                              "attachment", "permission-mode", "pr-link", "mode",
                              "frame-link"})
CONVERSATION = frozenset({"user", "assistant", "system"})
KNOWN = CONVERSATION | NOT_CONVERSATION
RECENT = 1024                      # responses a copy is looked for among
INTERRUPTED = "[Request interrupted by user"
INTERRUPTED_TOOL = "[Request interrupted by user for tool use"


def _blocks(content: object) -> tuple[str | None, bool]:
    """The text of a string or text-only content (else None: tool results, images), and
    whether it holds a tool result — in one pass over the blocks."""
    if isinstance(content, str):
        return content, False
    if not isinstance(content, list) or not content:
        return None, False
    texts = True
    for b in content:
        kind = b.get("type") if isinstance(b, dict) else None
        if kind != "text":
            texts = False
            if kind == "tool_result":
                return None, True
    if texts:
        return "".join(str(b.get("text", "")) for b in content), False
    return None, False


def response_key(message_id: object, request_id: object) -> int:
    """A request's key as a 64-bit number, small to remember (two checksums: a collision
    needs both): its ``requestId`` where the line has one — one API request is one bill,
    and the streamed lines of one request may carry different ``message.id``s — else its
    ``message.id`` (the one place this rule is written)."""
    return key_of(request_id if isinstance(request_id, str) and request_id else message_id)


def usage_numbers(usage: dict[str, object]) -> list[int]:
    """[uncached, 5-minute writes, 1-hour writes, reads, output] of a usage object
    (writes without a split count as 5-minute writes)."""
    written = count(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    w1h = min(count(split.get("ephemeral_1h_input_tokens")), written) \
        if isinstance(split, dict) else 0
    return [count(usage.get("input_tokens")), written - w1h, w1h,
            count(usage.get("cache_read_input_tokens")), count(usage.get("output_tokens"))]


def compaction_mark(meta: object) -> list[object] | None:
    """What a ``compact_boundary`` line's ``compactMetadata`` says of its compaction:
    [trigger (``auto``/``manual``), the context's tokens before it (``preTokens``), the
    seconds it took (``durationMs``), the messages it kept (``preservedMessages``, else 1
    per end of a ``preservedSegment``; 0: none)] (session.Mark)."""
    if not isinstance(meta, dict):
        return None
    trigger = meta.get("trigger")
    pre = count(meta.get("preTokens"))
    ms = count(meta.get("durationMs"))
    kept = 0
    preserved = meta.get("preservedMessages")
    segment = meta.get("preservedSegment")
    uuids = preserved.get("allUuids") or preserved.get("uuids") \
        if isinstance(preserved, dict) else None
    if isinstance(uuids, list):
        kept = len(uuids)
    elif isinstance(segment, dict):
        kept = len({segment.get("headUuid"), segment.get("tailUuid")} - {None})
    return [trigger if trigger in (AUTO, MANUAL) else None, pre or None,
            ms / 1000 if ms else None, kept]


class ClaudeCodeReader(LineReader):
    """Feeds parsed lines into the recorder."""

    format = FORMAT
    FIELDS = LineReader.FIELDS + ("sidechains", "after_boundary", "last_key",
                                  "last_message", "recent", "before", "waiting")

    def __init__(self, tokens: str = "auto", keep: bool = True,
                 sidechains: bool = False) -> None:
        super().__init__(tokens, keep)
        self.sidechains = sidechains            # read sub-agents' lines too (their files)
        self.after_boundary = False             # the next text user line is the summary
        self.last_key: int | None = None        # the newest response and its message
        self.last_message = -1
        self.before: float | None = None        # the time of the last non-response line
        self.waiting: float | None = None       # when the prompt no response answered yet
                                                # was sent
        self.recent: list[int] = []             # the last RECENT responses, oldest first
        self.known: set[int] = set()            # the same, to look up
        self.skipped.update(sidechain=0, synthetic=0, duplicate=0)

    def resumed(self) -> None:
        self.known = set(self.recent)

    def feed(self, obj: object) -> None:
        """One parsed line."""
        self.seen_lines += 1
        if not isinstance(obj, dict):
            return
        get = obj.get
        kind = get("type")
        if not isinstance(kind, str):
            return
        if kind in KNOWN:
            self.recognised += 1
        time = parse_time(get("timestamp"))
        sidechain = get("isSidechain") is True
        if kind != "assistant" and time is not None and not sidechain:
            self.before = time                  # the last line a next request follows
        if kind not in CONVERSATION:
            return
        self.where(get("sessionId"), get("cwd"), time)
        version = get("version")
        if type(version) is str and version:
            self.version = version
        side = sidechain and not self.sidechains
        if kind == "system":
            if get("subtype") == "compact_boundary" and not side:
                self.rec.compaction(time, compaction_mark(get("compactMetadata")),
                                    self.gap() if time is not None else None)
                self.after_boundary = True
            elif get("subtype") == "api_error" and not side:
                self._unanswered()
            return
        if side:
            self.skipped["sidechain"] += 1
            return
        message = get("message")
        if not isinstance(message, dict):
            self.skip_malformed()
            return
        if kind == "assistant":
            self.waiting = None
            self._assistant(obj, message, time)
        else:
            self._user(obj, message, time)

    def _unanswered(self) -> None:
        """A prompt that got no response line — interrupted, or failed (``api_error``) —
        still touched the cache, when it was sent: once per prompt."""
        if self.waiting is not None:
            self.rec.touch(self.waiting)
            self.waiting = None

    def _user(self, obj: dict[str, object], message: dict[str, object], time: float | None) -> None:
        content = message.get("content")
        text, tool = _blocks(content)
        if text is not None and text.startswith(INTERRUPTED) and \
                not text.startswith(INTERRUPTED_TOOL):
            self._unanswered()
        elif time is not None:
            self.waiting = time                 # a prompt: a request is sent now
        if text is None:
            kind = TOOL if tool else CONTEXT
        elif self.after_boundary or obj.get("isCompactSummary") or obj.get("isMeta") or \
                text.lstrip().startswith(MARKUP):
            kind = CONTEXT
        else:
            kind = USER
        if text is not None:
            self.after_boundary = False
        self.rec.message(kind, self.measure(content))

    def measure(self, content: object) -> int:
        """The bytes of a message's content."""
        return json_size(content)

    _ids: tuple[str, str | None] | tuple[()] = ()    # the last text ids keyed, and their key
    _ids_key = 0

    def _key(self, message_id: object, request_id: object) -> int:
        """``response_key``, once for the lines of a response (they repeat its ids)."""
        if type(message_id) is not str or request_id is not None and \
                type(request_id) is not str:
            return response_key(message_id, request_id)
        if (message_id, request_id) != self._ids:
            self._ids, self._ids_key = (message_id, request_id), \
                response_key(message_id, request_id)
        return self._ids_key

    def _assistant(self, obj: dict[str, object], message: dict[str, object],
                   time: float | None) -> None:
        size = self.measure(message.get("content"))
        if message.get("model") == "<synthetic>":
            self.skipped["synthetic"] += 1
            self.rec.message(ASSISTANT, size)
            return
        usage = message.get("usage")
        numbers = usage_numbers(usage) if isinstance(usage, dict) else None
        key = self._key(message.get("id") or obj.get("uuid"), obj.get("requestId"))
        if key == self.last_key:              # another content block of the same response
            self.rec.grow(self.last_message, size)
            self.rec.done(time)
            if numbers is not None:
                self.rec.usage(numbers)
            return
        if key in self.known:                 # a copy of an earlier response
            self.skipped["duplicate"] += 1
            return
        self.known.add(key)
        self.recent.append(key)
        if len(self.recent) > RECENT:
            self.known.discard(self.recent.pop(0))
        self.after_boundary = False
        index = self.rec.message(ASSISTANT, size)
        self.last_key, self.last_message = key, index
        model = message.get("model")
        self.rec.request(index, time, model if isinstance(model, str) else None, numbers,
                         key, sent=self.before if self.before is not None else time)
