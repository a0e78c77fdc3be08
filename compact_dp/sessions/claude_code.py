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

The reader keeps its state in plain lists so it can be saved after any complete line and
resumed on the bytes appended later (``state()``/``from_state()``).
"""

from __future__ import annotations

from .jsonsize import json_size
from .reader import LineReader
from .model import (ASSISTANT, CONTEXT, MAX_COUNT, TOOL, USER, Compaction, Request, Session,
                    Usage, count, skipped_warnings)
from .timefmt import parse_time

FORMAT = "claude-code"
MARKUP = ("<command-name>", "<command-message>", "<command-args>", "<local-command-",
          "<task-notification>", "<bash-input>", "<bash-stdout>", "<bash-stderr>",
          "<user-prompt-submit-hook>", "[Request interrupted by user")
NOT_CONVERSATION = frozenset({"progress", "file-history-snapshot", "queue-operation",
                              "summary", "custom-title", "ai-title", "last-prompt",
                              "attachment", "permission-mode", "pr-link"})


def _human_text(content) -> str | None:
    """The text of a string or text-only content, else None (tool results, images)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and all(
            isinstance(b, dict) and b.get("type") == "text" for b in content):
        return "".join(str(b.get("text", "")) for b in content)
    return None


class ClaudeCodeReader(LineReader):
    """Feeds parsed lines into the normalised session."""

    format = FORMAT

    def __init__(self, sidechains: bool = False) -> None:
        super().__init__()
        self.sidechains = sidechains            # read sub-agents' lines too (their files)
        # per request: [seen, time, model, input, write_5m, write_1h, read, output, segment]
        self.requests: list[list] = []
        self.by_key: dict[str, list[int]] = {}      # response key -> [request, message]
        self.compactions: list[list] = []           # [at, time, trigger, pre_tokens]
        self.turns = 0
        self.after_boundary = False
        self.skipped.update(sidechain=0, synthetic=0)

    def feed(self, obj: object) -> None:
        """One parsed line."""
        self.seen_lines += 1
        if not isinstance(obj, dict):
            return
        kind = obj.get("type")
        if not isinstance(kind, str):
            return
        if kind in ("user", "assistant", "system") or kind in NOT_CONVERSATION:
            self.recognised += 1
        side = obj.get("isSidechain") is True and not self.sidechains
        if kind == "system":
            if obj.get("subtype") == "compact_boundary" and not side:
                meta = obj.get("compactMetadata")
                meta = meta if isinstance(meta, dict) else {}
                trigger = meta.get("trigger")
                pre = meta.get("preTokens")
                self.compactions.append([len(self.kinds), parse_time(obj.get("timestamp")),
                                         trigger if isinstance(trigger, str) else None,
                                         pre if isinstance(pre, int) and 0 <= pre < MAX_COUNT else None])
                self.after_boundary = True
            return
        if kind not in ("user", "assistant"):
            return
        if side:
            self.skipped["sidechain"] += 1
            return
        message = obj.get("message")
        if not isinstance(message, dict):
            self.skip_malformed()
            return
        if kind == "assistant":
            self._assistant(obj, message)
        else:
            self._user(obj, message)

    def _user(self, obj: dict, message: dict) -> None:
        content = message.get("content")
        size = json_size(content)
        text = _human_text(content)
        if text is None:
            kind = TOOL if isinstance(content, list) and any(
                isinstance(b, dict) and b.get("type") == "tool_result" for b in content) \
                else CONTEXT
        elif self.after_boundary or obj.get("isCompactSummary") or obj.get("isMeta") or \
                text.lstrip().startswith(MARKUP):
            kind = CONTEXT
        else:
            kind = USER
            self.turns += 1
        if text is not None:
            self.after_boundary = False
        self.kinds.append(kind)
        self.nbytes.append(size)

    def _assistant(self, obj: dict, message: dict) -> None:
        size = json_size(message.get("content"))
        model = message.get("model")
        if model == "<synthetic>":
            self.skipped["synthetic"] += 1
            self.kinds.append(ASSISTANT)
            self.nbytes.append(size)
            return
        key = repr((message.get("id") or obj.get("uuid"), obj.get("requestId")))
        known = self.by_key.get(key)
        usage = message.get("usage") if isinstance(message.get("usage"), dict) else None
        if known is not None:                 # another content block of the same response
            request, index = known
            self.nbytes[index] += size
            row = self.requests[request]
            if usage is not None:
                if row[3] is None:            # the first block had no usage: this one does
                    row[3:8] = _usage_numbers(usage)
                elif count(usage.get("output_tokens")) > row[7]:
                    row[7] = count(usage.get("output_tokens"))
            return
        self.after_boundary = False
        index = len(self.kinds)
        self.kinds.append(ASSISTANT)
        self.nbytes.append(size)
        self.by_key[key] = [len(self.requests), index]
        row = [index, parse_time(obj.get("timestamp")),
               model if isinstance(model, str) else None, None, 0, 0, 0, 0,
               len(self.compactions)]
        if usage is not None:
            row[3:8] = _usage_numbers(usage)
        self.requests.append(row)

    def session(self, path: str | None = None) -> Session:
        requests = [Request(r[0], r[1], r[2], None if r[3] is None else
                            Usage(r[3], r[4], r[5], r[6], r[7]), r[8])
                    for r in self.requests]
        compactions = [Compaction(*c) for c in self.compactions]
        s = Session(FORMAT, list(self.kinds), list(self.nbytes), requests, compactions,
                    turns=self.turns, path=path)
        s.warnings += skipped_warnings(self.skipped)
        return s


def _usage_numbers(usage: dict) -> list[int]:
    """[uncached, 5-minute writes, 1-hour writes, reads, output] of a usage object
    (writes without a split count as 5-minute writes)."""
    written = count(usage.get("cache_creation_input_tokens"))
    split = usage.get("cache_creation")
    w1h = min(count(split.get("ephemeral_1h_input_tokens")), written) \
        if isinstance(split, dict) else 0
    return [count(usage.get("input_tokens")), written - w1h, w1h,
            count(usage.get("cache_read_input_tokens")), count(usage.get("output_tokens"))]


def looks_like(obj: dict) -> bool:
    """A Claude Code line: its type tags and envelope fields."""
    kind = obj.get("type")
    if kind in ("user", "assistant", "system") and ("sessionId" in obj or "uuid" in obj or
                                                   "parentUuid" in obj):
        return True
    return kind in NOT_CONVERSATION and ("sessionId" in obj or "messageId" in obj or
                                         "snapshot" in obj or "uuid" in obj)
