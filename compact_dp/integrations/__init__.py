"""Integrations with the agents people run: Claude Code's status line, its hooks, and the
one-step install into its settings.  They sit on the library like any front end; the status
line and the hooks start as light as the awk form (no typer, no rich)."""
