"""The command lines: ``main`` dispatches to the awk form (``awk``), the native decision
(``native``, parsed by ``options``) or a command for people (``app``: typer)."""
