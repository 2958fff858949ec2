# ttc_nb: every target creates or updates .venv first. See nbs/96_developing.ipynb (Developing) for what each does.
SHELL := /bin/bash
VENV ?= .venv
TORCH ?= torch==2.13.0
# The extras installed with the library: `lens` is TransformerLens (settings.ini's lens_requirements), which
# tests/test_lens.py and the TransformerLens page's checks need; EXTRAS=dev leaves it out, and those checks skip.
EXTRAS ?= dev,lens
BIN := $(VENV)/bin
PY := $(BIN)/python
EXP ?= sudoku-rrn
NBTIMES := _build/nbtest

# Python writes the bytecode of what it imports, so that the next process reads it: where the
# environment says not to (PYTHONDONTWRITEBYTECODE), every Python compiles torch from source again:
# `import torch, torch._dynamo` took 23 CPU-s on a 2-core AMD EPYC, against 8.5 from bytecode.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install run test sync lint nbtest pytest pytest-site pytest-ddp pytest-kills pytest-registry pytest-rest docs export clean mutate

# uv (from PyPI) installs what pip would, the same versions, resolving and unpacking in parallel: a
# fresh clone's `make install` took 51 s with it, its warm import included, against 100 s or more
# with pip, on a 2-core AMD EPYC. uv reads no pip configuration, so it is given pip's find-links
# (where this machine keeps its CPU torch wheel). Where uv cannot be installed or fails, pip installs
# as before. Neither byte-compiles at install (pip's --no-compile: torch alone has thousands of
# modules); Python compiles the ones the tests import, once, when they are first imported.
LINKS := $(or $(PIP_FIND_LINKS),$(shell python3 -m pip config get global.find-links 2>/dev/null))
PIP := $(PY) -m pip install -q --no-compile
$(BIN)/.installed: setup.py settings.ini
	test -x $(PY) || python3 -m venv $(VENV)
	($(PIP) uv && $(BIN)/uv pip install -q --python $(PY) $(addprefix --find-links ,$(LINKS)) \
	  "$(TORCH)" -e ".[$(EXTRAS)]") || \
	($(PIP) --upgrade pip && $(PIP) "$(TORCH)" && $(PIP) -e ".[$(EXTRAS)]")
	# the bytecode of what every test process imports, once, before the test streams start together
	$(PY) -c 'import torch, torch._dynamo, torch.distributed.run, matplotlib.pyplot, ttc_nb.cli'
	touch $@

install: $(BIN)/.installed

run: install
	$(BIN)/ttc run $(EXP)

# Notebooks clean and library + README in sync: cleaning and exporting must change nothing git sees.
# (The library is ruff-formatted after nbdev writes it, as `make export` does.)
sync: install
	@before="$$(git status --porcelain; git diff | sha1sum)"; \
	$(BIN)/nbdev_clean && $(BIN)/nbdev_export && $(BIN)/ruff format -q ttc_nb && $(PY) tools/docs.py readme || exit 1; \
	after="$$(git status --porcelain; git diff | sha1sum)"; \
	if [ "$$before" != "$$after" ]; then \
	  echo "sync: nbdev_clean/nbdev_export/README changed files: notebooks not clean or library not in sync. Run 'make export' and commit."; \
	  git status --porcelain; exit 1; fi; echo "sync: notebooks clean, library and README in sync"

nbtest: install
	# two notebooks at a time, one thread each (no oversubscribed cores), each in a process of its own forked from one
	# that imported torch, matplotlib and IPython once: a pool's worker that runs several notebooks carries one's module
	# state and signal handlers into the next, and tests then fail by schedule.
	# tools/nbtest.py runs a notebook as `nbdev_test --path --flags slow` does and times its cells; then the ten slowest cells of all.
	# The `#| slow` cells run too: they read the committed runs (ensure_run) and the measurements kept beside them (measured),
	# which under CI they never train or make, so a missing or outdated run or measurement fails. `#| cuda` cells are skipped.
	@rm -rf $(NBTIMES); start=$$(date +%s); \
	OMP_NUM_THREADS=1 $(PY) tools/nbtest.py --jobs 2 --flags slow --timings $(NBTIMES) nbs/*.ipynb; \
	status=$$?; $(PY) tools/nbtest.py --slowest 10 $(NBTIMES)/nbs/*.json; \
	echo "nbtest: $$(( $$(date +%s) - start )) s"; exit $$status

pytest: install
	$(BIN)/pytest -q tests --durations=10

docs: install
	$(PY) tools/docs.py site
	@echo "site: docs/index.html"

# tests/test_docs_site.py builds the site and checks every page in headless Chromium (last, when pytest runs every test).
# After `sync`, six streams side by side, none of which keeps the two cores busy alone: the notebooks, the docs site's
# build and browser check, the data-parallel tests, the tests that kill and resume training processes, the registry's
# tests (every `ci` preset that no notebook trains) with the lock's, and the other tests. Each one's output is printed
# whole when it ends, and any failure fails `test`. Streams of similar lengths end together, so that no core is left
# idle while one long stream finishes on the other. `make pytest` runs all the tests in one process.
DDP := tests/test_distributed.py
KILLS := tests/test_resume.py tests/test_kill.py
REGISTRY := tests/test_registry.py tests/test_lock.py
# `lint` runs first: it takes seconds. Each stream prints its own seconds when it ends.
test: sync lint
	@$(MAKE) --no-print-directory -j6 --output-sync=target nbtest pytest-site pytest-ddp pytest-kills \
	  pytest-registry pytest-rest

# $(call timed,NAME,COMMAND): run COMMAND, then print how many seconds it took; its status is kept.
timed = start=$$(date +%s); $(2); status=$$?; echo "$(1): $$(( $$(date +%s) - start )) s"; exit $$status

pytest-site: install
	@$(call timed,pytest-site,$(BIN)/pytest -q tests/test_docs_site.py --durations=3)

pytest-ddp: install
	@$(call timed,pytest-ddp,$(BIN)/pytest -q $(DDP) --durations=5)

pytest-kills: install
	@$(call timed,pytest-kills,$(BIN)/pytest -q $(KILLS) --durations=5)

pytest-registry: install
	@$(call timed,pytest-registry,$(BIN)/pytest -q $(REGISTRY) --durations=5)

pytest-rest: install
	@$(call timed,pytest-rest,$(BIN)/pytest -q tests $(addprefix --ignore=,tests/test_docs_site.py $(DDP) \
	  $(KILLS) $(REGISTRY)) --durations=10)

# nbdev 2.4.14 wraps each module's __all__ at 120 columns (a width fixed in nbdev/maker.py); ruff format
# rewraps the written library at 100, as the notebooks are.
export: install
	$(BIN)/nbdev_clean && $(BIN)/nbdev_export && $(BIN)/ruff format -q ttc_nb && $(PY) tools/docs.py readme

# The notebooks, the library, tests, tools and benchmarks: ruff's linter and formatter must change nothing.
LINTED := nbs ttc_nb tests tools benchmarks setup.py
lint: install
	$(BIN)/ruff check $(LINTED) && $(BIN)/ruff format --check $(LINTED)

# Mutation testing, not part of `test`: plants each bug of tools/mutate.py's catalogue in a scratch copy, runs the tests
# that should catch it, writes tools/mutants.json. One mutant at a time; `$(PY) tools/mutate.py --only NAME` runs one.
mutate: install
	OMP_NUM_THREADS=1 $(PY) tools/mutate.py

clean:
	rm -rf $(VENV) _proc _build docs .pytest_cache *.egg-info
