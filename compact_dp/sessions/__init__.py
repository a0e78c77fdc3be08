"""Sessions: every supported transcript format, read into one normalised ``Session``.

``read.read_session`` sniffs the format (``sniff``), streams the file through that
format's reader (``bash_agent``, ``claude_code``, ``codex``, ``openai_chat``) and sizes the
messages (``sizing``: from the recorded usage, or from the content bytes).  The decision
core never sees a format: it gets the live context's sizes and user turns.  Imports go one
way, into ``model`` and the core's scanner.
"""
