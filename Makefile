# Two commands matter: `make demo` and `make test`.  Both set up .venv on their own.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
BUILD  := $(if $(filter-out 0,$(COMPACT_DP_PURE)),pure,compiled)
READY  := $(VENV)/.ready-$(BUILD)
EXAMPLE := golden/inputs/syn_400.jsonl
STATS  := --turns 5 --requests 40 --input-tokens 400000

.PHONY: demo test test-pure bench setup clean mutants readme examples calibrate

# A regular (not editable) install, re-done when the sources change or the other build
# was installed last: an editable install adds an import hook to every start of this
# venv's Python (~10 ms), and the tests time nothing but they do run the installed
# command.  The compiled build unless COMPACT_DP_PURE=1; with COMPACT_DP_COMPILE=1 (CI)
# a failed compile stops here, else the pure build is installed and said so below
# (pip -q hides what the build prints).
$(READY): pyproject.toml setup.py MANIFEST.in build_backend/compact_dp_build.py $(shell find compact_dp agent_hooks -type f -not -path '*/__pycache__/*')
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet '.[test]'
	@$(BIN)/compact-dp --version | grep -q '(compiled)' || [ $(BUILD) = pure ] || \
	  echo "compact-dp: installed pure Python, as compiling failed (pip install -v . says why)" >&2
	rm -f $(VENV)/.ready*
	touch $(READY)

setup: $(READY)

demo: $(READY)
	@echo '$$ compact-dp $(STATS) $(EXAMPLE)            # a bash-agent file'
	@$(BIN)/compact-dp $(STATS) $(EXAMPLE)
	@echo
	@echo '$$ compact-dp --explain examples/claude-code.jsonl   # a Claude Code session'
	@$(BIN)/compact-dp --explain examples/claude-code.jsonl
	@echo
	@echo '$$ compact-dp replay examples/claude-code.jsonl examples/codex.jsonl'
	@$(BIN)/compact-dp replay examples/claude-code.jsonl examples/codex.jsonl
	@echo
	@echo '$$ compact-dp statusline < (statusLine JSON for examples/claude-code.jsonl)'
	@echo '{"transcript_path": "examples/claude-code.jsonl", "context_window": {"context_window_size": 200000}}' | COMPACT_DP_CACHE=$(VENV)/cache $(BIN)/compact-dp statusline
	@if [ -d ../shared/transcripts/claude-code ]; then \
	  echo; echo '$$ compact-dp replay ../shared/transcripts/claude-code   # real sessions, read in place'; \
	  $(BIN)/compact-dp replay --policy recorded --policy dp ../shared/transcripts/claude-code | tail -12; \
	fi

# pytest on every core (-n auto, pytest-xdist): the suite is subprocess-heavy and keeps
# `make test` under two minutes on two cores, the compiled build's set-up included.
test: $(READY)
	$(BIN)/python -m mypy
	$(BIN)/python -m ruff check .
	$(BIN)/python -m pytest -q -rs -n auto

# The pure build in a venv of its own, and the tests that differ between the builds or
# check the build (CI runs them after `make test`).
# (its readers and replay: the modules the other build compiles)
PURE_TESTS := tests/test_build.py tests/test_bytescan.py tests/test_fast.py \
              tests/test_sessions.py tests/test_claude_reader.py tests/test_codex_reader.py \
              tests/test_sizing.py tests/test_replay.py tests/test_bad_input.py tests/test_cli.py \
              tests/test_wait.py tests/test_hindsight.py
test-pure:
	COMPACT_DP_PURE=1 $(MAKE) --no-print-directory VENV=.venv-pure setup
	COMPACT_DP_PURE=1 .venv-pure/bin/python -m pytest -q -rs -n auto $(PURE_TESTS)

# The examples of the README and docs/replay.md, run again; the README's real-session
# sections, computed from ../shared.
readme: $(READY)
	$(BIN)/python examples/live_numbers.py --console
	$(BIN)/python examples/live_numbers.py --write

# The built-in profile, fitted on real sessions of other projects read in place
# (deterministic: the same sessions give the same file).
calibrate: $(READY)
	@test -d ../shared/transcripts/corpus || { echo "make calibrate needs ../shared (the corpus)"; exit 2; }
	corpus=$$(../shared/transcripts/corpus/unpack) && \
	$(BIN)/compact-dp calibrate --fresh --output compact_dp/calibration/default.json \
	  --source "make calibrate: real sessions of other projects" \
	  "$$corpus/claude-code" "$$corpus/codex" ../shared/transcripts/claude-code && \
	rm -f compact_dp/calibration/default.json.bak

# The example sessions (deterministic).
examples:
	$(PYTHON) examples/generate.py

# Break the core on purpose: every mutant must fail a test (tests/mutants.py).
mutants: $(READY)
	$(BIN)/python tests/mutants.py

bench: $(READY)
	$(BIN)/python benchmarks/bench.py

clean:
	rm -rf $(VENV) .venv-pure build *.egg-info .pytest_cache .hypothesis
