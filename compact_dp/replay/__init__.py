"""Replay: what a compaction policy would have cost over a recorded session.

``simulate`` grows a session again under each policy and bills every request; ``view``
and ``svg`` show the result.  Imports go one way, into the core and the engine.
"""
