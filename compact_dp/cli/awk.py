"""The awk-compatible command line (docs/awk.md): ``compact-dp -v name=value … FILE``.

An agent script that ran ``awk -v … -f compact_dp.awk FILE`` can run ``compact-dp`` with the
same arguments and get the same bytes and exit status.  This path is the hot one — it runs
before every LLM call — so it imports neither typer, rich nor orjson.
"""

from __future__ import annotations

from ..asking import Ask, answer, model_named
from ..core.awkvalue import unescape
from ..core.models import AWK_MODELS
from ..core.params import awk_values, string_valued
from ..core.scan import scan_paths
from ..environment import Env
from ..errors import UsageError
from ..views.emit import emit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

TURN_KEEP_PROGRAM = "compact_turn_keep.awk"


def split_assignment(text: str) -> tuple[str, str] | None:
    """``name=value`` with an awk identifier as name, else None (then it is a file)."""
    name, eq, value = text.partition("=")
    if eq and name.isascii() and name.isidentifier():
        return name, value
    return None


class AwkInvocation:
    """What the arguments ask for: the model, the assignments in order, the files."""

    def __init__(self) -> None:
        self.model: str | None = None
        self.program: str | None = None
        self.assignments: dict[str, str] = {}
        self.files: list[str] = []
        self.output = "plain"                    # plain | json | explain

    def model_name(self, environ: Mapping[str, str]) -> str:
        """--model, else the program name (turn-keep), else COMPACT_DP_MODEL, else v3.0.7."""
        if self.model:
            return self.model
        if self.program and self.program.rsplit("/", 1)[-1] == TURN_KEEP_PROGRAM:
            return "turn-keep"
        return environ.get("COMPACT_DP_MODEL") or "v3.0.7"


def _assignment(text: str, where: str) -> tuple[str, str]:
    pair = split_assignment(text)
    if pair is None:
        raise UsageError(f"{where}: expected name=value, got {text!r}")
    return pair


def parse_awk_args(argv: list[str]) -> AwkInvocation:
    """Options first (awk stops at the first operand), then files and name=value operands."""
    inv = AwkInvocation()
    i = 0

    def value_of(opt: str) -> str:
        nonlocal i
        if i + 1 >= len(argv):
            raise UsageError(f"option {opt} needs a value")
        i += 1
        return argv[i]

    while i < len(argv):
        a = argv[i]
        if a == "--":
            i += 1
            break
        if a == "-" or not a.startswith("-"):
            break
        if a == "-v" or a.startswith("-v"):
            name, value = _assignment(value_of(a) if a == "-v" else a[2:], "-v")
            inv.assignments[name] = unescape(value)
        elif a == "-f" or a.startswith("-f"):
            inv.program = value_of(a) if a == "-f" else a[2:]
        elif a == "-F" or a.startswith("-F"):
            if a == "-F":
                value_of(a)                  # the field separator: this program reads no fields
        elif a == "--model" or a.startswith("--model="):
            inv.model = value_of(a) if a == "--model" else a.split("=", 1)[1]
        elif a in ("--json", "--explain"):
            inv.output = a[2:]
        else:
            raise UsageError(f"unknown option {a!r} (awk form: -v name=value, -f PROGRAM, "
                             "--model NAME, --json, --explain)")
        i += 1
    for operand in argv[i:]:
        pair = split_assignment(operand)
        if pair:
            inv.assignments[pair[0]] = unescape(pair[1])
        else:
            inv.files.append(operand)
    return inv


def run(argv: list[str], env: Env) -> int:
    """Parse, decide, print, as awk would; failures are CompactDpError (exit 2)."""
    inv = parse_awk_args(argv)
    model = model_named(inv.model_name(env.environ))
    if model.name not in AWK_MODELS:
        raise UsageError(f"the awk form runs bash-agent's models ({', '.join(AWK_MODELS)}); "
                         f"use the native form for {model.name}")
    # the awk prints its answer with print: ORS (default \n) ends it
    end = inv.assignments.get("ORS", "\n")
    if "RS" in inv.assignments:
        env.warn("RS is ignored: records are always split on \\n, as compact_dp.awk's "
                 "callers use it")
    values = awk_values(inv.assignments)
    for name in string_valued(values, model.reads):
        env.warn(f"{name}={values[name].text!r} is not a number; awk compares it as a "
                 f"string and uses {values[name].num:g} in arithmetic")
    conv = scan_paths(inv.files, model.v2_users, env.stdin)
    return emit(answer(Ask(model, values), conv).decision, env, inv.output, end=end)
