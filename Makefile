# kubeactor: build, run, check, test, bench.
GO       ?= go
BIN      ?= bin/kubeactor
PKGS     := ./...
# Packages without Docker/network needs; e2e has its own target.
UNIT     := $(shell $(GO) list ./... 2>/dev/null | grep -v /e2e)
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck

.PHONY: build run up test unit e2e check fmt vet lint boundaries bench tools clean images install

# install: the binary into $(PREFIX)/bin, with links under the book's names; a
# file of one of those names that is not a link (a real kubectl) is kept.
PREFIX     ?= /usr/local
BOOK_NAMES := kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl

build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) .

# up: the quick start: the server on ~/.kubeactor/data with one Docker node agent
# (the images it needs are built first). Without Docker: bin/kubeactor up --simulate 1.
run up: build images
	$(BIN) up

## test: everything CI runs: unit tests under -race, then the e2e suite against the real binary.
test: unit e2e

# The large decision tests (30,000 pods on 5,000 nodes) skip themselves under -race,
# which slows them tenfold, and so do the tests of two actor-cluster members in one
# process (protoactor's remote races on grpc's global logger): they run once more
# without it.
unit:
	$(GO) test -race -count=1 -timeout 20m $(UNIT)
	$(GO) test -count=1 -timeout 20m -run 'Spread30k' ./actors/scheduler/
	$(GO) test -count=1 -timeout 10m -run 'TestCluster' ./actors/

e2e: build images
	KUBEACTOR_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 60m ./e2e/...

check: fmt vet lint boundaries

fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

lint: tools
	$(STATICCHECK) $(PKGS)

boundaries:
	@./.ci/boundaries.sh
	@./.ci/layers.sh

tools:
	@test -x $(STATICCHECK) || $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

## bench: every benchmark, printing JSON figures (one object per benchmark). Package
## benchmarks scale with b.N; the e2e ones run whole scenarios once each. Packages run
## one at a time (-p 1): two packages' benchmarks at once would share the 2 cores.
bench: build
	{ $(GO) test -p 1 -run '^$$' -bench . -timeout 30m $(UNIT); \
	  KUBEACTOR_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchtime 1x -timeout 90m ./e2e/...; } | $(GO) run ./.ci/benchjson

## images: the pause, testserver and busybox images, built into the local Docker engine.
images:
	./images/build.sh

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/kubeactor
	@for n in $(BOOK_NAMES); do \
	  f=$(DESTDIR)$(PREFIX)/bin/$$n; \
	  if [ -e $$f ] && [ ! -L $$f ]; then echo "kept $$f (not a link)"; else ln -sfn kubeactor $$f && echo "$$f -> kubeactor"; fi; \
	done

clean:
	rm -rf bin
