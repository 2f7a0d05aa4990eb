# Developer commands. Every target first installs the project into .venv
# (created if missing; reinstalled when pyproject.toml changes).
#   make up      start the whole stack (kapi up; pass flags with ARGS="--port 7443 ...")
#   make test    the whole test suite (pass pytest flags with PYTEST_ARGS="-x tests/local")
#   make check-proto-breaking  buf lint + breaking-change check of protos/ against the previous release
#   make bench      the benchmark report: kapi vs raw etcd and Envoy -> bare handler (bench/report.py, ~5 min)
#   make bench-apf  APF noisy-neighbour benchmark (bench/apf.py; pass flags with ARGS="--seconds 20")
#   make bench-faults  fault matrix under load over a 3-member etcd (bench/faults.py; ARGS="--down 3", ~1.5 min)
#   make fuzz       10,000 new fuzz requests through a whole stack (tests/e2e/test_fuzz.py; FUZZ_EXAMPLES=N, ~8 min)

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.kapi-installed

.PHONY: install up test proto check-proto check-proto-breaking buf envoy-config check-envoy lint ruff mypy bench bench-storage bench-apf bench-faults fuzz

install: $(STAMP)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[test]'
	# Byte-compile the editable tree once, so the first stack's seven Python processes do not each compile it.
	$(BIN)/python -m compileall -q kapi services kapi_proto
	touch $@

up: $(STAMP)
	exec $(BIN)/kapi up $(ARGS)

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

proto: $(STAMP)
	$(BIN)/python scripts/genproto.py

check-proto: $(STAMP)
	$(BIN)/python scripts/genproto.py --check

# The protos' compatibility promise (docs/grpc-services.md): buf lint, then buf breaking against the previous
# release: the newest tag v* reachable from HEAD's parent, else PROTO_BASELINE (the protos when the promise was
# made, before kapi.api.v1 existed; kapi.api.v1 joins the check at the first release tag). Needs the baseline in
# the clone's history (not a shallow clone). buf comes from npm (@bufbuild/buf), installed under .tools/buf.
BUF_VERSION ?= 1.75.0
BUF := .tools/buf/node_modules/.bin/buf
PROTO_BASELINE ?= 211faa1682c78cb2a533b1f516ca123f85329730
PROTO_AGAINST ?= $(or $(shell git describe --tags --abbrev=0 --match 'v[0-9]*' HEAD^ 2>/dev/null),$(PROTO_BASELINE))

buf: $(BUF)

$(BUF):
	npm install --prefix .tools/buf --no-audit --no-fund --loglevel=error @bufbuild/buf@$(BUF_VERSION)

check-proto-breaking: $(BUF)
	$(BUF) lint protos
	@git cat-file -e '$(PROTO_AGAINST)^{commit}' 2>/dev/null || { \
		echo "check-proto-breaking: baseline $(PROTO_AGAINST) is not in this clone's history (shallow clone?)"; exit 1; }
	$(BUF) breaking protos --against '.git#ref=$(PROTO_AGAINST),subdir=protos'

# deploy/envoy.yaml is generated from kapi/local/envoy.py.
envoy-config: $(STAMP)
	$(BIN)/python -m kapi.local.envoy

check-envoy: $(STAMP)
	$(BIN)/python -m kapi.local.envoy --check

lint: ruff mypy

ruff: $(STAMP)
	$(BIN)/ruff check kapi services tests scripts

mypy: $(STAMP)
	$(BIN)/mypy kapi services

# The whole-stack report: writes its section of docs/benchmarks.md and docs/bench/*.png (needs the bench extra).
bench: $(STAMP)
	$(BIN)/python -c "import matplotlib" 2>/dev/null || $(BIN)/python -m pip install -e '.[test,bench]'
	$(BIN)/python bench/report.py $(ARGS)

bench-apf: $(STAMP)
	$(BIN)/python bench/apf.py $(ARGS)

# Kill the etcd leader, a follower, a storage replica, a gateway, then a storage replica and a gateway at once,
# under mixed load; per fault: errors by status, seconds to recovery, lost writes, stale reads, watch gaps.
bench-faults: $(STAMP)
	$(BIN)/python bench/faults.py $(ARGS)

# Storage gRPC API vs raw etcd (own etcd + storage on 127.0.0.1); writes the Storage section of docs/benchmarks.md.
bench-storage: $(STAMP)
	$(BIN)/python bench/storage.py $(ARGS)

# The fuzz suite's long run: new hypothesis draws (CI replays the same 300); prints the count per status code.
FUZZ_EXAMPLES ?= 10000
fuzz: $(STAMP)
	KAPI_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) KAPI_FUZZ_RANDOM=1 $(BIN)/pytest -q -s -p no:cacheprovider -o timeout=3600 \
		tests/e2e/test_fuzz.py
