"""The release number and where the documentation is, in one place each (pyproject.toml
reads the version from here and names the same address in [project.urls])."""

__version__ = "0.2.0"
DOCS = "https://github.com/compact-dp/compact-dp/tree/main/docs"
