"""compact-dp: decide when and where a coding agent should compact its conversation.

The Python API (imported lazily so the awk-compatible command line starts fast)::

    compact_dp.decide(source, params=None, model=None)          -> Decision
    compact_dp.should_compact(source, trigger, context_tokens)  -> PolicyResult

``library`` (over ``engine``) is what both use; the command lines are thin layers over it.
"""

from .version import __version__
__all__ = ["__version__", "decide", "should_compact", "load", "read_session", "Decision", "PolicyResult", "MODELS",
           "CompactDpError"]


def __getattr__(name: str) -> object:
    if name in ("decide", "should_compact", "load"):
        from . import library
        return getattr(library, name)
    if name == "read_session":
        from .sessions.read import read_session
        return read_session
    if name == "Decision":
        from .core.decision import Decision
        return Decision
    if name == "MODELS":
        from .core.models import MODELS
        return MODELS
    if name == "PolicyResult":
        from .core.policy import PolicyResult
        return PolicyResult
    if name == "CompactDpError":
        from .errors import CompactDpError
        return CompactDpError
    raise AttributeError(name)
