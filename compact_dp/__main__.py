"""``python -m compact_dp`` runs the same command as ``compact-dp``."""

from .cli.main import entry

if __name__ == "__main__":
    entry()
