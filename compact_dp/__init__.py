"""compact-dp: decide when and where a coding agent should compact its conversation.

The Python API (``api``; imported lazily, so the awk-compatible command line starts fast)::

    session = compact_dp.load("session.jsonl")      # any format: docs/formats.md
    decision = session.decide(turns=5)              # docs/api.md: every keyword
    decision.compact, decision.keep, decision.as_dict()
    compact_dp.replay(["sessions/"]).as_dict()      # what `compact-dp replay --json` prints
    compact_dp.prices(["claude-opus-4-6"]).as_dict()

Every failure is a ``compact_dp.CompactDpError`` (``.status``: the exit status the command
would use).  The command lines are thin layers over the same modules.
"""

from .version import __version__

TYPE_CHECKING = False       # typing costs start-up time; mypy reads this as True
if TYPE_CHECKING:           # what type checkers and editors see; run time: __getattr__
    from .api import (
        Decision,
        PriceTable,
        Replay,
        Session,
        decide,
        load,
        prices,
        replay,
    )
    from .core.models import MODELS
    from .errors import CompactDpError

__all__ = ["__version__", "load", "decide", "replay", "prices", "Session", "Decision",
           "Replay", "PriceTable", "MODELS", "CompactDpError"]
_API = ("load", "decide", "replay", "prices", "Session", "Decision", "Replay", "PriceTable")


def __getattr__(name: str) -> object:
    if name in _API:
        from . import api
        return getattr(api, name)
    if name == "MODELS":
        from .core.models import MODELS
        return MODELS
    if name == "CompactDpError":
        from .errors import CompactDpError
        return CompactDpError
    raise AttributeError(name)
