"""Typer commands built from ``Option`` tables (for the commands for people)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import typer
from typer._click import Context

from ..version import doc_lines
from .options import Option, not_empty

TYPE_CHECKING = False
if TYPE_CHECKING:
    # what typer.main.get_command returns: typer vendors click and exports no name for it
    from typer._click import Command as Command


def typer_parameter(o: Option) -> inspect.Parameter:
    """One typer option from an Option (values stay strings: validated by the library)."""
    names = [o.flag] + ([o.short] if o.short else [])
    if not o.takes_value:
        kind: Any = bool
        default = typer.Option(False, *names, help=o.help)
    elif o.multiple:
        kind = list[str] | None
        default = typer.Option(None, *names, metavar=o.metavar, help=o.help,
                               show_default=False)
    else:
        kind = str | None
        default = typer.Option(None, *names, metavar=o.metavar, help=o.help,
                               show_default=False)
    return inspect.Parameter(o.dest, inspect.Parameter.KEYWORD_ONLY, annotation=kind,
                             default=default)


def files_parameter(help: str, metavar: str = "FILE") -> inspect.Parameter:
    return inspect.Parameter("files", inspect.Parameter.KEYWORD_ONLY,
                             annotation=list[str] | None,
                             default=typer.Argument(None, metavar=metavar,
                                                    show_default=False, help=help))


class _AsGiven:
    """typer's coercion of what these commands declare — a string or None, strings or
    None, a flag — is the value as parsed: this gives it without the pydantic adapter
    typer would build per parameter (importing pydantic and building them cost ~70 ms of
    every run; the library validates the values itself).  tests/test_cli.py checks that a
    command gets what typer's own coercion gives."""

    def coerce(self, value: Any, param: Any = None, ctx: Any = None) -> Any:
        return value


AS_GIVEN = _AsGiven()
HELP_NAMES = ["-h", "--help"]


class _Option(typer.core.TyperOption):
    def get_runtime_param(self) -> Any:
        return AS_GIVEN


class _Operands(typer.core.TyperArgument):
    """The FILE... argument as help pages write it: ``[FILE]...`` in the usage line and
    ``FILE`` in the list, without the Python type typer adds (``FILE <list[str]>``)."""

    def display_type_rich(self, ctx: Context) -> None:
        return None

    def get_runtime_param(self) -> Any:
        return AS_GIVEN


def command(name: str, func: Callable[..., int], options: list[Option], files_help: str,
            doc: str, files_metavar: str = "FILE", pages: tuple[str, ...] = ()) -> Command:
    """A click command from a function taking **kwargs, its Options and a FILE... list;
    ``pages``: its pages of the documentation, named by address at the end of --help."""
    def wrapper(**kwargs: Any) -> int:
        for o in options:
            value = kwargs.get(o.dest)
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, str):
                    not_empty(o.flag, v)
        return func(**kwargs)
    wrapper.__doc__ = doc
    # typer reads a command's parameters from its signature: this one is made, not written
    wrapper.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [files_parameter(files_help, files_metavar),
         *(typer_parameter(o) for o in options)])
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False,
                      rich_markup_mode=None,
                      context_settings={"help_option_names": HELP_NAMES})
    # \b: click must not rewrap the line (it would cut the address at a hyphen)
    app.command(name=name, epilog="\b\n" + doc_lines(pages))(wrapper)
    cmd = typer.main.get_command(app)
    # --help is made on first use, then kept: made here, it is coerced as given too
    helper = cmd.get_help_option(Context(cmd, help_option_names=HELP_NAMES))
    for p in [*cmd.params, helper]:
        if type(p) is typer.core.TyperArgument:
            p.__class__ = _Operands
        elif type(p) is typer.core.TyperOption:
            p.__class__ = _Option
    return cmd
