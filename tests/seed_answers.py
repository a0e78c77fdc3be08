"""The seed models' answers as the code gave them before the horizon existed, which
``--horizon seed`` must still give to the bit (issue 18; tests/test_horizon.py).

Made once, from the last commit before the horizon (c936477, the parent of 17fde9d), by

    mkdir /tmp/pre && git archive c936477 | tar -x -C /tmp/pre
    python3 -m venv /tmp/pre/.venv && /tmp/pre/.venv/bin/pip install -q /tmp/pre
    python3 tests/seed_answers.py /tmp/pre/.venv/bin/compact-dp > tests/seed_answers.json

run in the repository's root.  (A seed model takes none of the profile's figures: S, V and
what a compaction leaves stay bash-agent's defaults, so its answers are the old ones.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

COMMAND = "\n".join(line.strip() for line in __doc__.splitlines() if line.startswith("    "))
SEED_MODELS = ["v3.0.7", "v2", "v4.2", "turn-keep"]
STATS = ["--turns", "5", "--requests", "40", "--input-tokens", "400000"]
INPUTS = [                                    # (file, options, the other keep mode)
    ("examples/claude-code.jsonl", [], "best"),
    ("examples/claude-code.jsonl", ["--calls-per-turn", "7", "--baseline-turns", "3"], "best"),
    ("examples/codex.jsonl", [], "best"),
    ("examples/openai-chat.json", [], "none"),
    ("golden/inputs/syn_40.jsonl", [], "none"),
    ("golden/inputs/syn_400.jsonl", STATS, "none"),
    ("golden/inputs/up_gen_3x5000.jsonl", [*STATS, "--compactions", "2", "--fixed-turns", "3"],
     "none"),
]


def cases() -> list[list[str]]:
    """The arguments of every recorded run (without --json)."""
    return [[*options, "--model", model, *keep, path]
            for path, options, other in INPUTS for model in SEED_MODELS
            for keep in ([], ["--keep", other])]


def main(command: str) -> None:
    env = {k: v for k, v in os.environ.items()              # no setting of the caller's
           if not k.startswith(("DP_", "COMPACT_DP_")) and k != "MAX_CONTEXT_TOKENS"}
    answers = []
    for args in cases():
        plain = subprocess.run([command, *args], capture_output=True, text=True, env=env)
        asked = subprocess.run([command, "--json", *args], capture_output=True, text=True,
                               env=env, check=True)
        answers.append({"args": args, "stdout": plain.stdout, "status": plain.returncode,
                        "json": json.loads(asked.stdout)})
    rows = ",\n".join(json.dumps(a, ensure_ascii=False) for a in answers)   # one a line
    sys.stdout.write(f'{{"generated_by": {json.dumps(COMMAND)},\n"answers": [\n{rows}\n]}}\n')


if __name__ == "__main__":
    main(sys.argv[1])
