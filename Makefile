# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LOAD_STAMP := $(VENV)/.installed-load

.PHONY: demo test bench load experiment lint format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py seed_demo --password $${DEMO_PASSWORD:-demo-password}
	@echo ""
	@echo "Demo users: admin support warehouse supervisor auditor alice bob"
	@echo "Password:   $${DEMO_PASSWORD:-demo-password}"
	@echo "Admin:      http://127.0.0.1:8000/admin/"
	@echo "API:        http://127.0.0.1:8000/api/orders/  (catalog: /api/operations/, docs: /api/docs/)"
	@echo ""
	$(BIN)/python manage.py runserver 127.0.0.1:8000

test: $(STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python manage.py bench_affordances

# Every task through interfaces A, B and C with the scripted agents, on a throwaway
# database; the report lands in out/experiment/. EXPERIMENT_ARGS="--agent llm --repeat 3".
experiment: $(STAMP)
	$(BIN)/python manage.py run_experiment $(EXPERIMENT_ARGS)

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
