"""bash-agent conversations: one compact JSON message per line, read as bytes.

The awk's rules, exactly (docs/formats.md): each line is a message of
``(bytes + 3) // 4 + 1`` tokens — the whole line, since the line *is* the message; a user
line has ``"role":"user"`` and no ``"content":[``; an assistant line has
``"role":"assistant"``.  Each assistant line answers a request that saw the lines before
it.  The JSON is never parsed, so the decision is the awk's to the byte.
"""

from __future__ import annotations

from ..core.scan import ARRAY_CONTENT, USER_ROLE, Conversation, Scanner
from .session import ASSISTANT, CONTEXT, TOOL, USER, Request, Session

FORMAT = "bash-agent"
ASSISTANT_ROLE = b'"role":"assistant"'
SPACED_USER = b'"role": "user"'


class BashAgentScanner(Scanner):
    """The scanner of the awk form, also noting each line's kind."""

    MARKERS = Scanner.MARKERS + (ASSISTANT_ROLE, SPACED_USER)

    def __init__(self, chunk: int | None = None):
        super().__init__(v2_users=True, **({"chunk": chunk} if chunk else {}))
        self.kinds: list[str] = []
        self.spaced = False                 # saw "role": "user" written with a space

    def add_lines(self, lines: list[bytes]) -> None:
        super().add_lines(lines)
        self.kinds.extend([
            USER if ARRAY_CONTENT not in x and USER_ROLE in x else
            ASSISTANT if ASSISTANT_ROLE in x else TOOL if USER_ROLE in x else CONTEXT
            for x in lines])
        if not self.spaced and not self.conv.users:     # only a file without user lines
            self.spaced = any(SPACED_USER in x for x in lines)

    def session(self, path: str | None = None) -> Session:
        conv: Conversation = self.conv
        requests = [Request(i, None, None, None) for i, k in enumerate(self.kinds)
                    if k == ASSISTANT]
        s = Session.of_lines(FORMAT, self.kinds, conv.sizes, requests, path)
        s.users_v2 = conv.users_v2
        if conv.sizes and not conv.users:
            hint = ("; JSON written with spaces after the colons is not bash-agent's format: "
                    "--format openai reads it as chat messages") if self.spaced else ""
            s.warnings.append("no user line recognised (a line with \"role\":\"user\" and "
                              "no \"content\":[), so a kept window can only start at line 1"
                              + hint)
        return s
