# Pinky: `make demo` runs the main job on the virtual phones; `make test` installs
# what the tests need and runs them all. `make help` lists every target.

GO        ?= go
BIN       := bin
BUF       := $(GO) tool -modfile=scripts/tools/go.mod buf
GOTESTFLAGS ?=

.PHONY: test-under-load help build test demo bench proto proto-check conformance vet fmt-check corpus clean deb deb-check dist cross-vet

help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

# The version stamped into the binaries (pinky version): git describe, the
# commit (with -dirty for a changed work tree) and its commit time.
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
DATE      ?= $(shell git log -1 --format=%cI 2>/dev/null)
VPKG      := github.com/pinky-gateway/pinky/internal/version
LDFLAGS   := -X $(VPKG).Version=$(VERSION) -X $(VPKG).Commit=$(COMMIT) -X $(VPKG).Date=$(DATE)

build: ## Build every binary into bin/, with the version stamped from git.
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cli/cmd/pinky ./drivers/sim/cmd/pinky-driver-sim ./drivers/android/cmd/pinky-driver-android ./drivers/ios/cmd/pinky-driver-ios

test: ## Install test dependencies (scripts/test-deps.sh), then vet and run every test, and check the Debian package.
	scripts/test-deps.sh
	$(MAKE) vet fmt-check cross-vet
	GO=$(GO) scripts/run-tests.sh $(GOTESTFLAGS)
	scripts/deb-check.sh

test-under-load: ## make test beside stress-ng --cpu 4 (installed when missing): the tests must hold on a busy machine.
	scripts/test-under-load.sh

# The other systems' builds: darwin (its amd64 build differs only in the
# assembler), linux/arm64 and windows/amd64 compile and vet here without
# cgo; make dist builds the Linux and Windows archives with cgo here, the
# macOS ones on macOS (release workflow).
CROSS_TARGETS ?= darwin/arm64 linux/arm64 windows/amd64
cross-vet: ## go vet the module for the other systems release archives are built for (without cgo).
	@for t in $(CROSS_TARGETS); do echo "go vet ($$t)"; GOOS=$${t%/*} GOARCH=$${t#*/} CGO_ENABLED=0 $(GO) vet ./... || exit 1; done

dist: ## Release archives (stripped, versioned) for linux/amd64, linux/arm64 and windows/amd64 into dist/, with SHA256SUMS.
	scripts/dist.sh

deb: ## Build the Debian package (binaries, systemd user unit, man pages) into dist/.
	scripts/deb.sh dist

deb-check: ## Build the Debian package, install it into a throwaway root and run what it installed.
	scripts/deb-check.sh

vet: ## go vet over the module.
	$(GO) vet ./...

fmt-check: ## Fail when gofmt would change a file.
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

demo: build ## Play an agent on the virtual phones over MCP, end to end, then show its history.
	$(GO) run ./scripts/demo $(BIN)/pinky

bench: build ## Run the benchmarks and print the figures BENCHMARKS.md reports.
	scripts/bench.sh

proto: ## Regenerate the Go code of proto/.
	$(BUF) generate

proto-check: ## Lint, format-check and regenerate proto/ (fails on a diff); buf breaking against the previous commit.
	scripts/proto-check.sh

conformance: build ## Run the driver conformance suite: pinky-driver-sim, the Android driver through a real adb server, and the iOS driver through WebDriverAgent, on the virtual phones.
	$(BIN)/pinky driver check --pin 1234 $(BIN)/pinky-driver-sim
	$(GO) test -count=1 -run 'TestConformance$$' -v ./drivers/android/ ./drivers/ios/

corpus: ## Rebuild gateway/commit/corpus/rows from labels/ and the fetched app repositories (PINKY_MIRRORS).
	$(GO) run ./scripts/corpus build

commit-model: ## Train the commit detector's model from gateway/commit/corpus into gateway/commit/model.bin.
	UPDATE_MODEL=1 $(GO) test -count=1 -run '^TestModelIsTrainedFromTheCorpus$$' -v ./gateway/commit/

commit-eval: ## Print the commit detector's figures on the corpus's held-out apps (for BENCHMARKS.md).
	COMMIT_EVAL=1 $(GO) test -count=1 -run '^TestHeldOut$$' -v ./gateway/commit/

.PHONY: commit-model commit-eval

clean: ## Remove built binaries.
	rm -rf $(BIN)
