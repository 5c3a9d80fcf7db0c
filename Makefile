# fairbench: the README's two commands are `make compare` and `make test`.
GO ?= go
OUT ?= out/compare

# The git commit goes into every result (tool_commit), so `history` can tell fairbench's own
# builds apart; set explicitly because GOFLAGS=-buildvcs=false (or no .git) leaves Go's own
# stamp out. Empty outside a git checkout.
COMMIT := $(shell c=$$(git rev-parse --short=12 HEAD 2>/dev/null) && { git diff --quiet HEAD -- || c=$$c-dirty; echo $$c; })
LDFLAGS := -X github.com/fairbench/fairbench/internal/version.commit=$(COMMIT)

# A static binary for the container image of client hosts (deploy/Dockerfile, FROM scratch).
image-binary:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o deploy/fairbench ./cmd/fairbench

.PHONY: image-binary build engines compare unit test bench vet lint fuzz

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/fairbench ./cmd/fairbench

# Installs PostgreSQL, MariaDB (Debian packages) and MySQL (a Debian sid root), plus sysbench,
# pgbench and chromium for the benchmarks and the report test. Quiet when all is present.
# FAIRBENCH_VERSIONS=all (or postgres@17,mariadb@11.8,...) adds more versions from Debian roots.
engines:
	./scripts/install-engines.sh

# The tests also start a PostgreSQL from a Debian root (an upgrade study, chroot): 18 is the
# cheapest to add, since the sid root that MySQL needs is built anyway.
TEST_VERSIONS ?= postgres@18

compare: engines build
	./bin/fairbench compare --suite quick --out $(OUT) --force

# The unit layer: every test that needs no server (go test -short skips the others, through
# testserver.Integration), as any user, with no engine installed; under a minute here. Run
# first by `make test`, so that a broken build or a broken rule fails in a minute.
unit:
	$(GO) build ./...
	$(GO) test -short -count=1 ./...

# Integration tests start real servers on loopback; every engine must be there. Then the checks
# of the code itself, and a few seconds of fuzzing per parser of user input.
test: unit engines
	./scripts/install-engines.sh --versions $(TEST_VERSIONS)
	FAIRBENCH_REQUIRE_ENGINES=postgres,mariadb,mysql,postgres-ha,$(TEST_VERSIONS) $(GO) test -count=1 -timeout 20m ./...
	$(MAKE) --no-print-directory lint fuzz

vet:
	$(GO) vet ./...

# gofmt, go vet and staticcheck. staticcheck is a `tool` line in go.mod, so its version sits in
# go.sum with the rest and `go mod download` (which .ci/run retries) fetches it with the others;
# a `go run pkg@version` here fetched it late, and one proxy 503 at that point failed CI once.
lint: vet
	@out=$$(gofmt -l cmd internal); if [ -n "$$out" ]; then echo "gofmt needed: $$out"; exit 1; fi
	$(GO) tool staticcheck ./...

# The parsers that read user input, each fuzzed for FUZZTIME beyond its seed corpus (which the
# plain tests run too). PACKAGE:TARGET pairs. The budget is a count of executions, not a
# duration: Go 1.26's fuzz coordinator can report a bare "context deadline exceeded" when a
# duration runs out while a worker is mid-call (go.dev/issue/75804, fixed in Go 1.27), which
# failed CI once with no failing input. A count has no deadline to race; 100000 runs take
# 1-10 s per target here.
FUZZTIME ?= 100000x
FUZZ_TARGETS = \
	./internal/sqldb:FuzzParseTarget \
	./internal/suite:FuzzParse \
	./internal/result:FuzzDecode \
	./internal/runspec:FuzzParseSize \
	./internal/runspec:FuzzParseFault \
	./internal/compare:FuzzParseExplain \
	./internal/engine:FuzzParseEngines \
	./internal/regress:FuzzParseFailIf \
	./internal/workloadfile:FuzzParse \
	./internal/capture:FuzzStatementText \
	./internal/pgbenchscript:FuzzParse \
	./internal/slo:FuzzParse
fuzz:
	@for t in $(FUZZ_TARGETS); do \
		echo "fuzz $${t#*:} in $${t%:*} for $(FUZZTIME)"; \
		$(GO) test -run='^$$' -fuzz="^$${t#*:}$$" -fuzztime=$(FUZZTIME) "$${t%:*}" || exit 1; \
	done

# Speed and memory goals: fairbench beside sysbench and pgbench on the same servers.
bench: engines
	./bench/vs-sysbench.sh postgres mariadb mysql
	./bench/file-vs-pgbench.sh postgres
