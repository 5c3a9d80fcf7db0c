# fairbench: the README's two commands are `make compare` and `make test`.
GO ?= go
OUT ?= out/compare

.PHONY: build engines compare test bench vet

build:
	$(GO) build -o bin/fairbench ./cmd/fairbench

# Installs PostgreSQL, MariaDB (Debian packages) and MySQL (a Debian sid root), plus sysbench,
# pgbench and chromium for the benchmarks and the report test. Quiet when all is present.
engines:
	./scripts/install-engines.sh

compare: engines build
	./bin/fairbench compare --suite quick --out $(OUT) --force

# Integration tests start real servers on loopback; every engine must be there.
test: engines
	FAIRBENCH_REQUIRE_ENGINES=postgres,mariadb,mysql $(GO) test -count=1 -timeout 20m ./...
	$(GO) test -run '^$$' -fuzz FuzzParseTarget -fuzztime 5s ./internal/sqldb

vet:
	$(GO) vet ./...

# Speed and memory goals: fairbench beside sysbench and pgbench on the same servers.
bench: engines
	./bench/vs-sysbench.sh postgres mariadb mysql
