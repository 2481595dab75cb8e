# dpusim — top-level build. GNU make, C11, gcc.
#
#   make            build bin/dpusim (and bin/dpusim-hw); says first which
#                   Debian packages are missing, if any
#   make deps       install the missing Debian packages (as root)
#   make demo       install what is missing, build, run the default scenario
#   make check      install what is missing, build, run every test (plain and sanitizer builds)
#   make bench      engine / flow / scale benchmarks (figures, never pass/fail)
#   make asan       AddressSanitizer + UBSan build of the tests, and run them
#   make install PREFIX=/usr/local
#   V=1             show full commands;  CI=1 (or CI=true) adds -Werror
#
# Object lists are explicit and live next to their code in one fragment per
# folder (sim/sim.mk, models/models.mk, report/report.mk, tools/tools.mk,
# backend-hw/hw.mk, tests/tests.mk). BUILD and BIN may be overridden so that
# several builds (plain, sanitizer, a second developer's) can share one tree.

BUILD ?= build
BIN ?= bin
PREFIX ?= /usr/local

CC ?= gcc
ifeq ($(origin CC),default)
CC := gcc
endif

WARN := -Wall -Wextra -Wshadow -Wconversion -Wmissing-prototypes \
        -Wstrict-prototypes -Wwrite-strings -Wno-sign-conversion
ifneq ($(CI),)
WARN += -Werror
endif

OPT ?= -O2 -g
SAN ?=
PKGS := gsl libfyaml sqlite3 libcrypto
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null)
# Open MPI's flags (backend-hw, tools/sweep_mpi.c), computed on first use and
# then kept: `make deps` on a machine without Open MPI must not run mpicc
# (it printed "mpicc: not found" once per use, four times, before installing).
MPI_CFLAGS = $(eval MPI_CFLAGS := $$(shell pkg-config --cflags ompi 2>/dev/null || \
	mpicc --showme:compile 2>/dev/null))$(MPI_CFLAGS)
MPI_LIBS = $(eval MPI_LIBS := $$(shell pkg-config --libs ompi 2>/dev/null || \
	mpicc --showme:link 2>/dev/null))$(MPI_LIBS)

CPPFLAGS += -I. -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L \
	    -DDPUSIM_DATADIR='"$(PREFIX)/share/dpusim"'
CFLAGS += -std=c11 $(OPT) $(WARN) $(SAN) -MMD -MP $(PKG_CFLAGS)
LDFLAGS += $(SAN)
LDLIBS += $(PKG_LIBS) -lm

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The stamp that the Debian packages are there (its rule is below); named
# before the fragments, whose rules list it as an order-only prerequisite.
DEPS_OK = $(BUILD)/.deps-ok

# Each fragment appends to these lists.
LIB_OBJS :=
DPUSIM_OBJS :=
UNIT_TESTS :=
E2E_TESTS :=
ALL_BINS :=
CHECK_BUILDS :=
CHECK_EXTRA_TESTS :=

# The fragments below define rules (bench-calib, check-rdma, ...): plain `make`
# must still build, not run the first of them.
.DEFAULT_GOAL := all

include sim/sim.mk
include models/models.mk
include report/report.mk
include tools/tools.mk
include backend-hw/hw.mk
include tests/tests.mk

LIB := $(BUILD)/libdpusim.a

FORCE:
ALL_BINS += $(BIN)/dpusim

# Keep test objects: they are intermediate files of the test binaries.
.SECONDARY:

.PHONY: all deps demo check check-unit check-e2e asan bench clean install fuzz FORCE
all: $(ALL_BINS)

# Before compiling anything, the Debian packages the build needs: one message
# naming what is missing and how to get it (tools/install-deps --check), not
# a compiler error about mpi.h. Checked again when the package database changes.
$(DEPS_OK): tools/install-deps $(wildcard /var/lib/dpkg/status)
	@tools/install-deps --check
	@mkdir -p $(dir $@) && touch $@

$(BUILD)/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIB): $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN)/dpusim: $(DPUSIM_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit test binaries: one Check suite per module, tests/unit/test_NAME.c,
# with the set-up helpers they share (tests/unit/fixture.h) from an archive,
# so that a suite links only the helpers it calls.
UNIT_BINS := $(UNIT_TESTS:%=$(BUILD)/tests/test_%)
TEST_LIB := $(BUILD)/tests/libfixture.a
$(TEST_LIB): $(BUILD)/tests/unit/fixture.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/tests/test_%: $(BUILD)/tests/unit/test_%.o $(TEST_LIB) $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

deps:
	@tools/install-deps

demo: deps
	$(MAKE) all
	$(BIN)/dpusim run scenarios/demo.yaml -o results/demo
	$(BIN)/dpusim plot results/demo/report.json --kind breakdown -o results/demo/breakdown.png
	@echo "demo: report in results/demo/report.json, breakdown plot in results/demo/breakdown.png"

# make check: every build first, side by side (make -j: the plain, sanitizer
# and VM builds), then every test program of every build through one
# tools/run-tests, CHECK_JOBS at a time, the longest first (CHECK_TESTS): most
# of a test's time is one process on one core, or waiting (timeouts, MPI
# start-up, the VM). Each test's output is in build/test-logs/; a failed
# test's log is printed whole.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# -j for a sub-make only where this make has no jobserver (make -jN check
# shares its own).
JOBS_FLAG = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(CHECK_JOBS))
check: deps
	@tools/run-tests reset
	$(MAKE) $(JOBS_FLAG) check-build
	@tools/run-tests -j $(CHECK_JOBS) run $(CHECK_TESTS); tools/run-tests summary

# What the tests of this build run (the sanitizer build's are made by a sub-make).
test-programs: $(ALL_BINS) $(UNIT_BINS)
check-build: test-programs check-build-asan $(CHECK_BUILDS)

check-unit: $(UNIT_BINS)
	@tools/run-tests -j $(CHECK_JOBS) unit $(UNIT_BINS)

check-e2e: $(ALL_BINS)
	@BIN=$(BIN) tools/run-tests -j $(CHECK_JOBS) e2e $(E2E_ORDER:%=tests/e2e/%)

# The sanitizer build lives in its own folders so it never mixes objects
# with the plain build.
# float-cast-overflow is not part of gcc's (nor clang's) -fsanitize=undefined: a double
# cast to an integer it does not fit is undefined, and no other check sees it.
ASAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer \
	      -fno-sanitize-recover=all
ASAN_MAKE = $(MAKE) BUILD=build/asan BIN=build/asan/bin OPT="-O1 -g" SAN="$(ASAN_FLAGS)"
asan:
	+$(ASAN_MAKE) check-unit check-e2e
check-build-asan:
	+$(ASAN_MAKE) test-programs

check-summary:
	@tools/run-tests summary

bench: all
	$(BIN)/dpusim bench engine
	$(BIN)/dpusim bench flows
	$(BIN)/dpusim bench scale
	@# issue 14's yardstick: the shipped capacity sweep, whole, as a planner runs it
	@d=$$(mktemp -d) && /usr/bin/time -f "sweep scenarios/capacity.yaml points=12 jobs=2 \
	wall_s=%e peak_rss_kb=%M" $(BIN)/dpusim sweep scenarios/capacity.yaml --db "$$d/c.db" \
	--jobs 2 >/dev/null; rc=$$?; rm -rf "$$d"; [ $$rc -eq 0 ] || exit $$rc
	@# issue 14's 16,384-GPU target (under 30 s, 8 GiB): 405B, host TCP, ECMP, 16
	@# microbatches a pipeline, two NICs a node (its data-parallel rings' channels share them)
	@/usr/bin/time -f "run tests/bench/train-405b-16k-2nics.yaml gpus=16384 microbatches=16 \
	wall_s=%e peak_rss_kb=%M" $(BIN)/dpusim run tests/bench/train-405b-16k-2nics.yaml >/dev/null
	@# the shipped collective sweep (ring and tree, 20 runs of 11 sizes, 2 variants)
	@d=$$(mktemp -d) && /usr/bin/time -f "sweep scenarios/allreduce-sweep.yaml points=2 \
	wall_s=%e peak_rss_kb=%M" $(BIN)/dpusim sweep scenarios/allreduce-sweep.yaml \
	--db "$$d/a.db" >/dev/null; rc=$$?; rm -rf "$$d"; [ $$rc -eq 0 ] || exit $$rc
	@# issue 15's yardstick: plan over the layouts of GPT-3 175B on 1,024 GPUs (2,744
	@# with virtual stages and sequence parallelism, 976 without), 20 finalists
	@# simulated under 3 variants (goal: under 5 minutes on 2 cores)
	@/usr/bin/time -f "plan scenarios/gpt3-175b-1024xh100.yaml layouts=2744 finalists=20 \
	wall_s=%e peak_rss_kb=%M" $(BIN)/dpusim plan scenarios/gpt3-175b-1024xh100.yaml \
	--finalists 20 >/dev/null
	@/usr/bin/time -f "plan scenarios/gpt3-175b-1024xh100.yaml layouts=2744 finalists=20 \
	jobs=2 wall_s=%e peak_rss_kb=%M" $(BIN)/dpusim plan scenarios/gpt3-175b-1024xh100.yaml \
	--finalists 20 --jobs 2 >/dev/null

clean:
	rm -rf build bin

# The data the commands read (models/datadir.c finds it beside the installed
# binary): PREFIX/share/dpusim/{profiles,validation,scenarios}.
SHARE_DIR := $(DESTDIR)$(PREFIX)/share/dpusim
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(SHARE_DIR)/profiles $(SHARE_DIR)/validation \
	    $(SHARE_DIR)/scenarios/effects
	install -m 755 $(ALL_BINS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 models/profiles/*.yaml $(SHARE_DIR)/profiles/
	install -m 644 tests/validation/*.yaml $(SHARE_DIR)/validation/
	install -m 644 scenarios/*.yaml $(SHARE_DIR)/scenarios/
	install -m 644 scenarios/effects/*.yaml $(SHARE_DIR)/scenarios/effects/

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
