"""compact-dp: decide when and where a coding agent should compact its conversation.

Public API (imported lazily so the awk-compatible command line starts fast)::

    compact_dp.decide(source, params=None, model="v3.0.7")   -> Decision
    compact_dp.should_compact(source, trigger, context_tokens, ...) -> PolicyResult
"""

__version__ = "0.1.0"
__all__ = ["decide", "should_compact", "load", "Decision", "PolicyResult", "MODELS"]


def __getattr__(name):
    if name in ("decide", "should_compact", "load"):
        from . import api
        return getattr(api, name)
    if name in ("Decision", "MODELS"):
        from . import models
        return getattr(models, name)
    if name == "PolicyResult":
        from .policy import PolicyResult
        return PolicyResult
    raise AttributeError(name)
