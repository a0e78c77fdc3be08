"""OpenAI-style chat messages: a JSON array of ``{role, content, tool_calls, …}`` (or an
object with a ``messages`` array), or one message per line.

``role: user`` is a human turn, ``role: tool`` a tool result, ``role: assistant`` the
model's output (with its ``tool_calls``), ``system``/``developer`` context.  Each assistant
message answers a request that saw every message before it.  No usage, no times: sizes come
from the content (``--tokens bytes``).
"""

from __future__ import annotations

from .jsonsize import DEEPER, MAX_DEPTH, json_size
from .line_reader import LineReader
from .session import ASSISTANT, CONTEXT, TOOL, USER

FORMAT = "openai"
ROLES = {"user": USER, "tool": TOOL, "function": TOOL, "assistant": ASSISTANT,
         "system": CONTEXT, "developer": CONTEXT}


class OpenAIChatReader(LineReader):
    format = FORMAT
    unit = "item(s)"

    def __init__(self, tokens: str = "auto", keep: bool = True) -> None:
        super().__init__(tokens, keep)
        self.skipped["not a message"] = 0

    def feed(self, obj: object) -> None:
        self.seen_lines += 1
        self._feed(obj)

    def _feed(self, obj: object, depth: int = 0) -> None:
        """``depth``: the arrays around ``obj``, bounded as ``jsonsize`` bounds them (not
        by the stack, which compiled code does not use up)."""
        if isinstance(obj, list):                        # a whole array on one line
            if depth >= MAX_DEPTH:
                raise RecursionError(DEEPER)
            for item in obj:
                self._feed(item, depth + 1)
            return
        if isinstance(obj, dict) and isinstance(obj.get("messages"), list) and \
                "role" not in obj:
            self._feed(obj["messages"], depth + 1)
            return
        role = obj.get("role") if isinstance(obj, dict) else None
        if not isinstance(role, str) or role not in ROLES:
            self.skipped["not a message"] += 1
            return
        assert isinstance(obj, dict)
        self.recognised += 1
        kind = ROLES[role]
        size = json_size(obj.get("content"))
        if obj.get("tool_calls") is not None:
            size += json_size(obj["tool_calls"])
        index = self.rec.message(kind, size)
        if kind == ASSISTANT:
            model = obj.get("model")
            self.rec.request(index, None, model if isinstance(model, str) else None, None)
