"""compact-dp: decide when and where a coding agent should compact its conversation.

The Python API (``api``; imported lazily, so the awk-compatible command line starts fast)::

    session = compact_dp.load("session.jsonl")      # any format: docs/formats.md
    decision = session.decide(turns=5)              # docs/api.md: every keyword
    decision.compact, decision.keep, decision.as_dict()

Every failure is a ``compact_dp.CompactDpError`` (``.status``: the exit status the command
would use).  The command lines are thin layers over the same modules.
"""

from .version import __version__

__all__ = ["__version__", "load", "decide", "Session", "Decision", "MODELS",
           "CompactDpError"]


def __getattr__(name: str) -> object:
    if name in ("load", "decide", "Session", "Decision"):
        from . import api
        return getattr(api, name)
    if name == "MODELS":
        from .core.models import MODELS
        return MODELS
    if name == "CompactDpError":
        from .errors import CompactDpError
        return CompactDpError
    raise AttributeError(name)
