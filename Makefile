# The two commands a newcomer needs: `make run` and `make test`. Both set everything up themselves.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUNTIME_STAMP := $(VENV)/.installed-runtime
NODE_STAMP := tests/idp/node_modules/.installed
MCPB_STAMP := packaging/mcpb/node_modules/.installed
VIEWS_STAMP := views/node_modules/.installed
SYSTEM_STAMP := $(VENV)/.system-packages
ARGS ?=

.PHONY: install run check demo test test-fast kit test-loaded lint typecheck pytest bench bench-real bench-real-find bench-real-find-load bench-apps docs dist mcpb views views-preview clean

# uv (pinned in constraints.txt, installed into the venv by its own pip) installs the pinned
# versions: 12 s where pip took 104 s, and the same distributions at the same versions (ADR 0102).
UV := $(BIN)/uv
UV_INSTALL := $(UV) pip install --quiet --python $(BIN)/python -c constraints.txt
define make_venv
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@echo "Installing into $(VENV) (the first time takes a while)"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -c constraints.txt uv
	@# the distribution was called nextcloud-mcp-server before ADR 0022; drop its stale script
	@$(UV) pip uninstall --quiet --python $(BIN)/python nextcloud-mcp-server >/dev/null 2>&1 || true
endef

# The server and its runtime dependencies only (`make install`, `make run`, `make check`).
$(RUNTIME_STAMP): pyproject.toml constraints.txt
	$(make_venv)
	$(UV_INSTALL) -e .
	@touch $@

# Everything for tests, the demo, benchmarks and packaging: one install, the runtime's included.
$(STAMP): pyproject.toml constraints.txt
	$(make_venv)
	$(UV_INSTALL) -e '.[dev]'
	@touch $(RUNTIME_STAMP) $@

# The official MCPB CLI (validates and packs the Claude Desktop extension), pinned by the lockfile.
$(MCPB_STAMP): packaging/mcpb/package.json packaging/mcpb/package-lock.json
	cd packaging/mcpb && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# The MCP Apps views' build (esbuild, the ext-apps App bridge), pinned by the lockfile; the test
# host bundles its host side from here too.
$(VIEWS_STAMP): views/package.json views/package-lock.json
	cd views && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## views: rebuild the MCP Apps views shipped in nextcloud_mcp_server/views/ from views/src (commit the result)
views: $(VIEWS_STAMP)
	cd views && node build.mjs

## views-preview: the views in your browser, against the demo's stand-in Nextcloud (ARGS="--configured" for yours)
views-preview: $(STAMP) $(VIEWS_STAMP) $(NODE_STAMP)
	$(BIN)/python -m tests.views_preview $(ARGS)

## install: only the virtualenv (.venv/bin/nextcloud-mcp-bridge); no configuration needed
install: $(RUNTIME_STAMP)
	@echo "Installed: $(BIN)/nextcloud-mcp-bridge (try: $(BIN)/nextcloud-mcp-bridge --help, or make demo)"

# Test peers from npm (the OpenID provider, Node 22 itself, the TypeScript MCP client), pinned by the lockfile.
$(NODE_STAMP): tests/idp/package.json tests/idp/package-lock.json
	cd tests/idp && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

# Debian packages the tests need: Chromium (Playwright drives it; no browser is downloaded) and the
# real Nextcloud's nginx and php-fpm (the kit would install those itself; one apt run is faster).
$(SYSTEM_STAMP): tests/system-packages.txt | $(STAMP)
	tests/install-system-packages.sh tests/system-packages.txt
	@touch $@

## run: start the server (stdio by default; ARGS="--transport http" for streamable HTTP)
run: $(RUNTIME_STAMP)
	$(BIN)/nextcloud-mcp-bridge run $(ARGS)

## check: verify the configuration against your Nextcloud
check: $(RUNTIME_STAMP)
	$(BIN)/nextcloud-mcp-bridge check

## demo: try the server without a Nextcloud: a stand-in one with sample data (ARGS="--port N")
demo: $(STAMP)
	@NEXTCLOUD_MCP_DEMO_VIA_MAKE=1 $(BIN)/python -m tests.demo $(ARGS)

## docs: regenerate the files written from the toolsets' declarations and the tools (README's toolset
## and tool tables, .env.example's toolset names, the Keycloak realm's scopes; tests/generated.py)
docs: $(STAMP)
	$(BIN)/python -m tests.generated

## dist: wheel and sdist in dist/ (pipx install --pip-args="-c constraints.txt" dist/*.whl; uvx -c constraints.txt --from dist/<wheel> nextcloud-mcp-bridge)
dist: $(STAMP)
	$(BIN)/python -m build --installer uv --outdir dist .

## mcpb: the Claude Desktop extension, dist/nextcloud-mcp-bridge-<version>.mcpb (validated by the MCPB CLI)
mcpb: $(RUNTIME_STAMP) $(MCPB_STAMP)
	$(BIN)/python packaging/mcpb/build.py --out dist

## test: lint, type-check and the whole test suite (first checks in a second that the real-Nextcloud kit is there)
test: kit
	@$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck $(TEST_PEERS)
	@$(MAKE) --no-print-directory pytest
# when `make test` began: pytest's last line gives the whole wall time beside the budget (ADR 0068)
test: export SUITE_STARTED_AT := $(shell date +%s)

# The kit's check, then its instances install in the background (stdlib Python only) while the
# venv is built, linted and type-checked; the tests that need one wait for it (ADR 0068).
kit:
	@tests/check-kit.sh
	@python3 -m tests.shared_instances prepare </dev/null >/dev/null 2>&1 &

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# mypy's cache, kept beside uv's and npm's in ~/.cache, seeds a fresh clone's: a cold mypy took
# 18-26 s, a seeded one under a second when little changed. mypy checks every file against the
# cache by its hash, as after switching branches; the copy is whole before it is renamed (ADR 0102).
MYPY_SEED := $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/nextcloud-mcp-bridge/mypy

typecheck: $(STAMP)
	@test -d .mypy_cache || ! test -d $(MYPY_SEED) || cp -r $(MYPY_SEED) .mypy_cache
	$(BIN)/mypy
	@mkdir -p $(dir $(MYPY_SEED)) && rm -rf $(MYPY_SEED).$$$$ && cp -r .mypy_cache $(MYPY_SEED).$$$$ \
		&& rm -rf $(MYPY_SEED) && mv -T $(MYPY_SEED).$$$$ $(MYPY_SEED) || rm -rf $(MYPY_SEED).$$$$

# Two workers: each real version's tests on one, other tests a file at a time (ADR 0099); each has its own
# IdP, PostgreSQL and browser, and both share the real Nextclouds (ADR 0053).
# `make pytest ARGS="-n 0 ..."` runs in one process.
XDIST := -n 2 --dist loadgroup

# What pytest needs. `make test` and `make test-fast` make it four jobs at a time beside lint and
# mypy: the npm installs run while uv fills the venv, the Debian check and mypy while npm runs (ADR 0102).
# (lint and typecheck make the venv first)
TEST_PEERS := $(NODE_STAMP) $(MCPB_STAMP) $(VIEWS_STAMP) $(SYSTEM_STAMP)
TEST_SETUP := $(STAMP) $(TEST_PEERS)

pytest: $(TEST_SETUP)
	$(BIN)/pytest $(XDIST) --durations=25 $(ARGS)

## test-fast: the inner loop: lint, types and the tests that need neither the real Nextcloud nor a browser,
## less those that take seconds each (`slow`: processes, the TypeScript SDK, packaging; ADR 0086)
test-fast: export SUITE_STARTED_AT := $(shell date +%s)
test-fast: export SUITE_BUDGET_SECONDS := 180
test-fast:
	@$(MAKE) --no-print-directory -j4 --output-sync=target lint typecheck $(NODE_STAMP) $(MCPB_STAMP) $(VIEWS_STAMP)
	$(BIN)/pytest $(XDIST) -m "not real_nextcloud and not browser and not slow" $(ARGS)

## test-loaded: the whole suite 5 times from fresh clones of HEAD, two at once, with CPU burners
## filling the cores (about 1 h on 2 cores); a test that depends on timing shows up here
test-loaded:
	tests/loaded-runs.sh $(ARGS)

## bench: benchmarks side by side, printed and written to bench/results/ (never part of `make test`;
## ARGS="--quick" for a smoke run, "--skip-published" without the PyPI package)
bench: $(STAMP) $(NODE_STAMP)
	$(BIN)/python bench/run_all.py $(ARGS)

## bench-real: the tools on the kit's real Nextcloud 34 (or 29: ARGS="--version 29") full of data (issue
## 30): seeds it once (24 min on 34, 38 min on 29 on a busy machine; kept in
## /var/tmp/nextcloud-mcp-bench/VERSION/.seeded, restored in seconds to minutes), then this server, the floor and the PyPI package side by side, warm and as the first call
## of a new process (ARGS="--quick", "--skip-published", "--rounds N", "--sections first_call")
bench-real: $(STAMP)
	$(BIN)/python bench/real/measure.py $(ARGS)

## bench-real-find: nc_find on a real Nextcloud 34 holding 2,035 documents (issues 41, 42): seeds its own
## instance once (/var/tmp/nextcloud-mcp-bench/find-34, restored in seconds), then the first index beside
## the floor, p50/p95 over MCP, recall@10 and MRR by words, meaning and both beside Nextcloud's unified
## search and the PyPI package (ARGS="--quick", "--skip-published", "--skip-endpoint")
bench-real-find: $(STAMP)
	$(BIN)/python bench/real/find_measure.py $(ARGS)

## bench-real-find-load: embedding the find benchmark's corpus in the background beside another session's
## calls (p50/p95 while embedding and idle), its time and the model's memory (ADR 0091; after bench-real-find)
bench-real-find-load: $(STAMP)
	$(BIN)/python bench/real/find_load.py $(ARGS)

## bench-apps: every app toolset's tools on the kit's real Nextcloud 34 with its apps (ARGS="--version 29";
## issue 43): requests per call beside the fewest the app's API needs (OVER marks one that asks more),
## wall time beside the floor; installs /var/tmp/nextcloud-mcp-bench/apps-VERSION once (2-3 min), then
## about 5 min (ARGS="--rounds N", "--only deck,tables"); writes bench/results/bench_apps_VERSION.txt
bench-apps: $(STAMP)
	$(BIN)/python bench/apps/measure.py $(ARGS)

## clean: the venv, node_modules, caches, and this checkout's real Nextcloud instances
clean:
	@test ! -f tests/shared_instances.py || $(PYTHON) -m tests.shared_instances clean
	rm -rf $(VENV) tests/idp/node_modules packaging/mcpb/node_modules views/node_modules dist .mypy_cache .ruff_cache .pytest_cache .hypothesis
