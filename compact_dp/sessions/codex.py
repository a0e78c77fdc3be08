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
previous one is the same request again; the session's id and that running total are the
request's key (the same request in another file of a run is counted once).
``input_tokens`` includes the cached part, ``output_tokens`` includes reasoning.  Files
from before the envelope (mid-2025: a first line ``{id, timestamp, instructions}``, then
bare response items) are read too; they have no usage.
"""

from __future__ import annotations

from .jsonsize import json_size
from .line_reader import LineReader
from .session import ASSISTANT, CONTEXT, TOOL, USER, count, key_of
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
    """Feeds parsed rollout lines into the recorder."""

    format = FORMAT
    FIELDS = LineReader.FIELDS + ("llm", "last_total", "run_start", "fresh_compaction")

    def __init__(self, tokens: str = "auto", keep: bool = True) -> None:
        super().__init__(tokens, keep)
        self.llm: str | None = None           # from the latest turn_context
        self.last_total: list[int] | None = None   # the last running total reported
        self.run_start: int | None = None       # first message of the current output run
        self.fresh_compaction = False           # a compaction with nothing after it yet
        self.write_counts = False               # until a usage counts them (GPT-5.6 on)

    def feed(self, obj: object) -> None:
        self.seen_lines += 1
        if not isinstance(obj, dict):
            return
        kind, payload = obj.get("type"), obj.get("payload")
        legacy = "record_type" in obj or ("id" in obj and "instructions" in obj)
        if not isinstance(kind, str):
            self.recognised += legacy      # a legacy rollout's first line, a state line
            return
        if kind in ENVELOPE and isinstance(payload, dict) or legacy:
            self.recognised += 1
        if kind in ENVELOPE and isinstance(payload, dict):
            time = parse_time(obj.get("timestamp"))
            self.where(payload.get("id") if kind == "session_meta" else None,
                       payload.get("cwd"), time)
            if kind == "session_meta" and isinstance(payload.get("cli_version"), str):
                self.version = payload["cli_version"] or self.version
            if kind == "response_item":
                self._item(payload)
            elif kind == "event_msg":
                self._event(payload, time)
            elif kind == "turn_context":
                if isinstance(payload.get("model"), str) and payload["model"]:
                    self.llm = payload["model"]
                limit = count(payload.get("model_auto_compact_token_limit") or
                              payload.get("auto_compact_token_limit"))
                if limit:
                    self.auto_limit = limit
            elif kind == "compacted":
                self._compacted(payload, time)
        elif kind in ENVELOPE:
            self.skip_malformed()          # an envelope without its payload object
        elif legacy:
            return                         # legacy state and session lines
        elif kind == "message" or kind in OUTPUT_ITEMS or kind in TOOL_OUTPUTS:
            self._item(obj)                # a legacy bare response item

    # --- messages --------------------------------------------------------------------------

    def _append(self, kind: str, item: dict[str, object], left: bool | None = None) -> None:
        index = self.rec.message(kind, json_size(item), left)
        if kind == ASSISTANT:
            if self.run_start is None:
                self.run_start = index
        else:
            self.run_start = None
        self.fresh_compaction = False

    def _item(self, item: dict[str, object], left: bool | None = None) -> None:
        """One response item; ``left``: it comes from a compaction's replacement history
        (its user prompts are kept context, not new turns)."""
        kind = item.get("type")
        if not isinstance(kind, str):
            return
        if kind == "message":
            role = item.get("role")
            if role == "assistant":
                self._append(ASSISTANT, item, left)
            elif role == "user":
                text = _text_of(item.get("content")).lstrip().lower()
                contextual = text.startswith(CONTEXTUAL) or SUMMARY_PREFIX in text[:300]
                self._append(CONTEXT if contextual or left else USER, item, left)
            else:                          # developer, system: instructions
                self._append(CONTEXT, item, left)
        elif kind in OUTPUT_ITEMS:
            self._append(ASSISTANT, item, left)
        elif kind in TOOL_OUTPUTS:
            self._append(TOOL, item, left)
        elif kind == "compaction" or kind == "compaction_summary":
            self._append(CONTEXT, item, left)

    # --- events ----------------------------------------------------------------------------

    def _event(self, payload: dict[str, object], time: float | None) -> None:
        kind = payload.get("type")
        if kind == "user_message":
            self.rec.turn()
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
        window = count(info.get("model_context_window"))
        if window:
            self.window = window
            self.windows[self.llm or ""] = window
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
        if "cache_write_input_tokens" in last:
            self.write_counts = True
        written = min(count(last.get("cache_write_input_tokens")), prompt - cached)
        seen = self.run_start if self.run_start is not None else self.rec.message_count
        self.rec.request(seen, time, self.llm, [prompt - cached - written, written, 0,
                                                  cached, count(last.get("output_tokens"))],
                         None if running is None else key_of((self.session_id, running)))
        self.run_start = None
        self.fresh_compaction = False

    def _compaction(self, time: float | None) -> None:
        """A `compacted` line and its `context_compacted` event, in either order and with
        nothing between them, are one compaction."""
        if not self.fresh_compaction:
            self.rec.compaction(time, None, self.gap() if time is not None else None)
        self.run_start = None
        self.fresh_compaction = True

    def _compacted(self, payload: dict[str, object], time: float | None) -> None:
        self._compaction(time)
        history = payload.get("replacement_history")
        if isinstance(history, list):
            for item in history:
                if isinstance(item, dict):
                    self._item(item, left=True)
        elif isinstance(payload.get("message"), str) and payload["message"]:
            self._append(CONTEXT, {"type": "message", "role": "user",
                                   "content": payload["message"]}, left=True)
        self.run_start = None
        self.fresh_compaction = True
