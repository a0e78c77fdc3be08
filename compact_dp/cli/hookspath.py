"""``compact-dp hooks path``: where the installed bash-agent hooks are.

``agent_hooks/`` ships inside the package, so after ``pip install`` an agent sources
``"$(compact-dp hooks path)/bash-agent.sh"`` without knowing where pip put it.
"""

from __future__ import annotations

import os

from ..environment import Env
from ..errors import UsageError

USAGE = ("Usage: compact-dp hooks path\n\n"
         "Print the directory of the installed agent hooks (bash-agent.sh and its README),\n"
         "e.g.  source \"$(compact-dp hooks path)/bash-agent.sh\"\n")


def hooks_dir() -> str:
    """The agent_hooks directory of this installation (package data, or the source tree)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(here, "agent_hooks"),
                      os.path.join(os.path.dirname(here), "agent_hooks")):
        if os.path.isfile(os.path.join(candidate, "bash-agent.sh")):
            return candidate
    raise UsageError("the agent hooks are not installed with this copy of compact-dp")


def run(argv: list[str], env: Env) -> int:
    if "--help" in argv or "-h" in argv:
        return env.write(USAGE)
    if not argv:
        raise UsageError("hooks needs a command: compact-dp hooks path")
    if argv != ["path"]:
        raise UsageError(f"unknown hooks command {' '.join(argv)!r} (try: compact-dp hooks "
                         "path)")
    return env.write(hooks_dir() + "\n")
