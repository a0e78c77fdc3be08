"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Lines are ``{timestamp, type, payload}``:

* ``response_item`` — what the model saw and said: ``message`` (``input_text`` /
  ``output_text``), ``reasoning``, ``function_call`` and its ``function_call_output``,
  ``custom_tool_call`` and its output, ``local_shell_call``, ``web_search_call``;
* ``event_msg`` — ``user_message`` (a human turn begins), ``token_count`` (the usage of
  the last request: ``info.last_token_usage``), ``context_compacted``;
* ``turn_context`` — the model id of the turns that follow;
* ``compacted`` — a compaction (its ``replacement_history``, when present, is the new
  context).

A request is a ``token_count`` event with ``info``; Codex repeats the event with an
unchanged running total (``info.total_token_usage``), so an event whose total equals the
previous one is the same request again.  ``input_tokens`` includes the cached part,
``output_tokens`` includes reasoning.  Files from before the envelope (mid-2025: a first
line ``{id, timestamp, instructions}``, then bare response items) are read too; they have
no usage.
"""

from __future__ import annotations

from .jsonsize import json_size
from .reader import LineReader
from .model import (ASSISTANT, CONTEXT, TOOL, USER, Compaction, Request, Session, Usage,
                    count, skipped_warnings)
from .timefmt import parse_time

FORMAT = "codex"
ENVELOPE = frozenset({"session_meta", "turn_context", "response_item", "event_msg",
                      "compacted"})
OUTPUT_ITEMS = frozenset({"reasoning", "function_call", "custom_tool_call",
                          "local_shell_call", "web_search_call", "image_generation_call"})
TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output"})
CONTEXTUAL = ("<environment_context", "<user_instructions", "# agents.md instructions",
              "<skill", "<user_shell_command", "<turn_aborted", "<subagent",
              "<permissions instructions", "<model_switch")
SUMMARY_PREFIX = "another language model started to solve this problem"


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


class CodexReader(LineReader):
    """Feeds parsed rollout lines into the normalised session."""

    format = FORMAT

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list] = []     # [seen, time, model, input, w5m, w1h, read, out, seg]
        self.compactions: list[list] = []  # [at, time, trigger, pre_tokens]
        self.turns = 0
        self.model: str | None = None
        self.last_total: list | None = None
        self.since_request = 0             # messages added since the last request
        self.run_start: int | None = None  # first message of the current output run
        self.fresh_compaction = False      # a compaction with nothing after it yet

    def feed(self, obj: object) -> None:
        self.seen_lines += 1
        if not isinstance(obj, dict):
            return
        kind, payload = obj.get("type"), obj.get("payload")
        if not isinstance(kind, str):
            return
        if kind in ENVELOPE and isinstance(payload, dict) or looks_like(obj):
            self.recognised += 1
        if kind in ENVELOPE and isinstance(payload, dict):
            time = parse_time(obj.get("timestamp"))
            if kind == "response_item":
                self._item(payload)
            elif kind == "event_msg":
                self._event(payload, time)
            elif kind == "turn_context":
                if isinstance(payload.get("model"), str) and payload["model"]:
                    self.model = payload["model"]
            elif kind == "compacted":
                self._compacted(payload, time)
        elif kind in ENVELOPE:
            self.skip_malformed()          # an envelope without its payload object
        elif "record_type" in obj or ("id" in obj and "instructions" in obj):
            return                         # legacy state and session lines
        elif kind == "message" or kind in OUTPUT_ITEMS or kind in TOOL_OUTPUTS:
            self._item(obj)                # a legacy bare response item

    # --- messages --------------------------------------------------------------------------

    def _append(self, kind: str, item: dict) -> None:
        size = json_size(item)
        if kind == ASSISTANT:
            if self.run_start is None:
                self.run_start = len(self.kinds)
        else:
            self.run_start = None
        self.kinds.append(kind)
        self.nbytes.append(size)
        self.since_request += 1
        self.fresh_compaction = False

    def _item(self, item: dict) -> None:
        kind = item.get("type")
        if not isinstance(kind, str):
            return
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._append(ASSISTANT, item)
            elif role == "user":
                text = _text_of(item.get("content")).lstrip().lower()
                contextual = text.startswith(CONTEXTUAL) or SUMMARY_PREFIX in text[:300]
                self._append(CONTEXT if contextual else USER, item)
            else:                          # developer, system: instructions
                self._append(CONTEXT, item)
        elif kind in OUTPUT_ITEMS:
            self._append(ASSISTANT, item)
        elif kind in TOOL_OUTPUTS:
            self._append(TOOL, item)
        elif kind == "compaction" or kind == "compaction_summary":
            self._append(CONTEXT, item)

    # --- events ----------------------------------------------------------------------------

    def _event(self, payload: dict, time: float | None) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            self.turns += 1
        elif kind == "token_count":
            self._token_count(payload.get("info"), time)
        elif kind == "context_compacted":
            self._compaction(time)

    def _token_count(self, info: object, time: float | None) -> None:
        if not isinstance(info, dict):
            return                         # info is null until something is known
        last, total = info.get("last_token_usage"), info.get("total_token_usage")
        if not isinstance(last, dict):
            return
        running = [count(total.get(k)) for k in ("input_tokens", "cached_input_tokens",
                                                "output_tokens", "total_tokens")] \
            if isinstance(total, dict) else None
        if running is not None and running == self.last_total:
            return                         # the same request, reported again
        self.last_total = running
        if not count(last.get("input_tokens")) and not count(last.get("output_tokens")):
            return                         # a placeholder (e.g. "filled to the window")
        prompt = count(last.get("input_tokens"))
        cached = min(count(last.get("cached_input_tokens")), prompt)
        written = min(count(last.get("cache_write_input_tokens")), prompt - cached)
        uncached = prompt - cached - written
        seen = self.run_start if self.run_start is not None else len(self.kinds)
        self.requests.append([seen, time, self.model, uncached, written, 0, cached,
                              count(last.get("output_tokens")), len(self.compactions)])
        self.since_request = 0
        self.run_start = None
        self.fresh_compaction = False

    def _compaction(self, time: float | None) -> None:
        """A `compacted` line and its `context_compacted` event, in either order and with
        nothing between them, are one compaction."""
        if not self.fresh_compaction:
            self.compactions.append([len(self.kinds), time, None, None])
        self._reset_after_compaction()
        self.fresh_compaction = True

    def _compacted(self, payload: dict, time: float | None) -> None:
        self._compaction(time)
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    self._item(item)
        elif isinstance(payload.get("message"), str) and payload["message"]:
            self._append(CONTEXT, {"type": "message", "role": "user",
                                   "content": payload["message"]})
        self.run_start = None
        self.fresh_compaction = True

    def _reset_after_compaction(self) -> None:
        self.run_start = None
        self.since_request = 0

    def session(self, path: str | None = None) -> Session:
        requests = [Request(r[0], r[1], r[2], Usage(r[3], r[4], r[5], r[6], r[7]), r[8])
                    for r in self.requests]
        s = Session(FORMAT, list(self.kinds), list(self.nbytes), requests,
                    [Compaction(*c) for c in self.compactions],
                    turns=self.turns if self.turns else None, path=path)
        s.warnings += skipped_warnings(self.skipped)
        return s


def looks_like(obj: dict) -> bool:
    if obj.get("type") in ENVELOPE and isinstance(obj.get("payload"), dict):
        return True
    if "record_type" in obj:
        return True
    return "id" in obj and "instructions" in obj and "timestamp" in obj
