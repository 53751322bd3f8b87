# loadprobe's build, test and development targets. `make test` works on a fresh
# Debian 12 machine with Go installed, as root: it installs what the tests need.

GO      ?= go
BINARY  ?= loadprobe
PKGS    ?= ./...

# Build metadata for --version and loadprobe_build_info.
VERSION_PKG := github.com/prometheus/common/version
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null | sed 's/^v//' || true)
REVISION    ?= $(shell git rev-parse HEAD 2>/dev/null)
BRANCH      ?= $(shell git rev-parse --abbrev-ref HEAD 2>/dev/null)
BUILD_USER  ?= $(shell id -un 2>/dev/null)@$(shell hostname 2>/dev/null)
BUILD_DATE  ?= $(shell date -u +%Y%m%d-%H:%M:%S)
LDFLAGS     := -X $(VERSION_PKG).Version=$(or $(VERSION),unknown) \
               -X $(VERSION_PKG).Revision=$(or $(REVISION),unknown) \
               -X $(VERSION_PKG).Branch=$(or $(BRANCH),unknown) \
               -X $(VERSION_PKG).BuildUser=$(BUILD_USER) \
               -X $(VERSION_PKG).BuildDate=$(BUILD_DATE)

# Every test runs once, under the race detector, over both modules. The
# end-to-end tests measure (knees, rates, latencies of real load on
# loopback), so the packages run one at a time (-p 1): one package's load
# must not skew another's figures. The allocation counts and the latency
# precision tests run without the detector instead, whose instrumentation
# allocates (the TLS client: 4 per request under it, 2 without) and slows
# a gRPC stream's message path several-fold, with a noise larger than the
# 10% a precision test allows. They too run one package at a time: the
# other packages' test binaries, built beside a precision test, would take
# the cores it measures with.
TEST_FLAGS  ?= -race -count=1 -p 1 -timeout=20m
PLAIN_TESTS := ZeroAllocs|Precise

# deploy/ is a module of its own, so that the Kubernetes types its tests
# decode stay out of loadprobe's requirements.
DEPLOY := cd deploy &&

# staticcheck, pinned, run through `go run` so that a fresh machine needs
# nothing but Go (the first run compiles it: about a minute).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Debian packages the tests use: promtool and prometheus (rule tests, queries
# against a real server) and headless Chromium (page tests).
APT_PACKAGES := prometheus chromium

.PHONY: all help build test deps lint fmt-check vet tidy-check staticcheck bench soak demo clean deploy-rules

all: build ## the default: build

# Every target with the text after its `##`.
help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## / {printf "  %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## static binary ./loadprobe, with version, revision and branch from git
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BINARY) .

# Install what is missing, with one apt-get update first; nothing when all is there.
deps: ## install promtool, Prometheus and Chromium with apt-get when missing (root)
	@missing=""; \
	command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 || missing="$$missing prometheus"; \
	command -v chromium >/dev/null 2>&1 || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
		echo ">> installing$$missing"; \
		apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi

# Every benchmark also runs once (-benchtime=1x), so that `make bench` never
# finds one broken: they are not run by plain `go test`.
test: deps lint ## deps, lint, every test under the race detector, the allocation counts and precision tests without it, every benchmark once, the deploy module
	CGO_ENABLED=1 $(GO) test $(TEST_FLAGS) -skip '$(PLAIN_TESTS)' $(PKGS)
	$(DEPLOY) CGO_ENABLED=1 $(GO) test $(TEST_FLAGS) ./...
	$(GO) test -count=1 -p 1 -run '$(PLAIN_TESTS)' $(PKGS)
	$(GO) test -count=1 -run '^$$' -bench . -benchtime=1x $(PKGS)

fmt-check: ## fail when gofmt -l lists a file
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then echo "gofmt -l: these files need formatting:"; echo "$$out"; exit 1; fi

vet: ## go vet over both modules
	$(GO) vet $(PKGS)
	$(DEPLOY) $(GO) vet ./...

# The lint fails the build: formatting, vet, a go.mod that `go mod tidy`
# would change, and staticcheck's findings.
lint: fmt-check vet tidy-check staticcheck ## fmt-check, vet, tidy-check and staticcheck

tidy-check: ## fail when go mod tidy would change go.mod or go.sum
	$(GO) mod tidy -diff
	$(DEPLOY) $(GO) mod tidy -diff

staticcheck: ## staticcheck (pinned, through go run) over both modules
	$(GO) run $(STATICCHECK) $(PKGS)
	$(DEPLOY) $(GO) run $(STATICCHECK) ./...

# loadprobe beside wrk, hey and vegeta against one local nginx: closed and
# open loop, the open loop against its own closed loop, latency overhead,
# https, 1k and 10k connections, templates, WebSocket and the per-request cost
# of recording an attempt (bench/BENCH.md). Installs what it needs (apt-get,
# go install); prints the tables and writes bench/RESULTS.md. About 17
# minutes on a quiet machine; knobs in bench/bench.sh (QUICK=1: 3 min).
bench: ## loadprobe beside wrk, hey and vegeta against nginx; writes bench/RESULTS.md
	bash bench/bench.sh

# The daemon's resources over a long run (bench/soak): SOAK_PROBES probes of
# mixed kinds against demo targets on loopback for SOAK_DURATION, its
# goroutines, RSS, heap, open fds and series count sampled every SOAK_INTERVAL;
# prints them and whether each stayed flat (exit 1 when one grew), writes
# bench/SOAK.md. Not part of `make test`.
SOAK_PROBES   ?= 30
SOAK_DURATION ?= 10m
SOAK_INTERVAL ?= 10s
soak: ## the daemon's resources over a long run (SOAK_PROBES, SOAK_DURATION); writes bench/SOAK.md
	$(GO) run ./bench/soak -probes=$(SOAK_PROBES) -duration=$(SOAK_DURATION) -interval=$(SOAK_INTERVAL) -out=bench/SOAK.md

# With the same version stamps as `build` (go run stamps no VCS information).
demo: ## go run . demo with the version stamps of build
	$(GO) run -ldflags '$(LDFLAGS)' . demo

# deploy/kubernetes/prometheusrule.yaml carries dashboards/alerts.yml and
# rules.yml for the Prometheus Operator; regenerate it after editing them
# (the deploy module's tests fail, naming this target, until it matches).
deploy-rules: ## regenerate deploy/kubernetes/prometheusrule.yaml from dashboards/*.yml
	$(DEPLOY) $(GO) test -count=1 . -run TestPrometheusRuleCarriesTheDashboardsRules -update

clean: ## remove the binary
	rm -f $(BINARY)
