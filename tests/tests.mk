# tests/: end-to-end scripts (tests/e2e/NAME, run with BIN set); unit suites
# are listed by each fragment in UNIT_TESTS.
E2E_TESTS += cli-basics.sh bench-engine.sh datadir.sh build-deps.sh version.sh
E2E_TESTS += readme.sh run-table.sh help-options.sh run-trace.sh conventions.sh
E2E_TESTS += plot-words.sh
E2E_TESTS += hw-probe.sh hw-tcp.sh hw-replay.sh
E2E_TESTS += hw-replay-train.sh hw-hostile.sh lab-net.sh
E2E_TESTS += hw-replay-crypto.sh hw-replay-pp.sh hw-replay-store.sh hw-replay-p2p.sh
E2E_TESTS += check-scenarios.sh bad-input.sh bad-reports.sh check-run.sh
E2E_TESTS += yaml-input.sh
E2E_TESTS += effects.sh
# libFuzzer over the scenario loader: `make fuzz` (FUZZ_TIME seconds,
# default 60); new inputs go to tests/fuzz/corpus-run/ (git-ignored), the
# seed corpus is tests/fuzz/corpus/, the dictionary (YAML structure with
# anchors, aliases and merge keys, scenario keys, units, UTF-8 edge bytes)
# tests/fuzz/scenario.dict. Needs clang and libclang-rt-14-dev (tools/install-deps).
FUZZ_TIME ?= 60
# The scenario language's sources come from models/models.mk (SCN_SRCS), so
# a module added there cannot leave this target unlinkable (canon.c did).
FUZZ_SRCS := tests/fuzz/fuzz_scenario.c $(SCN_SRCS) models/workload.c sim/err.c
build/fuzz/fuzz_scenario: $(FUZZ_SRCS) $(wildcard models/*.h sim/*.h)
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined,float-cast-overflow -fno-sanitize-recover=all \
	    $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $(FUZZ_SRCS) $(PKG_LIBS) -lm
fuzz: build/fuzz/fuzz_scenario
	@mkdir -p tests/fuzz/corpus-run
	build/fuzz/fuzz_scenario -max_total_time=$(FUZZ_TIME) -timeout=20 -rss_limit_mb=2048 \
	    -dict=tests/fuzz/scenario.dict -print_final_stats=1 tests/fuzz/corpus-run tests/fuzz/corpus
# training scale benchmark lines
E2E_TESTS += ring-steps.sh
E2E_TESTS += bench-train.sh run-train.sh run-jobs.sh steady-state.sh progress.sh validate.sh run-scenarios.sh
E2E_TESTS += shared-bench.sh
E2E_TESTS += failures-cost.sh
E2E_TESTS += async-checkpoint.sh
E2E_TESTS += energy-bound.sh
E2E_TESTS += writes.sh
E2E_TESTS += import-exact.sh
E2E_TESTS += plot-scale.sh
E2E_TESTS += variant-hardware.sh nccl-sockets.sh
E2E_TESTS += report-scale.sh
E2E_TESTS += metamorphic.sh shipped-monotone.sh fuzz-physics.sh
E2E_TESTS += binding.sh
E2E_TESTS += workload-shapes.sh
E2E_TESTS += scenario-answers.sh
# The order make check starts tests in (tools/run-tests runs CHECK_JOBS at a
# time): the longest first, so that none of them starts late and ends the run
# alone. The slowest scripts by user+sys CPU seconds, measured on the 2-core
# machine in December 2026 (build/test-logs and tools/run-tests's lines give
# each one's wall time); the VM (check-rdma, 2-4 minutes) before them, the
# rest in list order, the unit suites last.
# (hw-*: a few seconds of CPU in the plain build, but tens of seconds of wall:
# MPI start-up and the timeouts they wait out.)
# sweep.sh (no longer a slow sweep to kill: 30 s of CPU under the
# sanitizers, was 185) and energy-bound.sh (2 iterations: 31 s, was 83)
# moved down on 3 December. plan.sh moved up on 5 December: its GPT-3
# 175B plan (8 finalists of 1,024 GPUs) takes it to 96 s of wall under the
# sanitizers (28 s plain).
E2E_SLOW := run-scenarios.sh metamorphic.sh effects.sh hw-replay-train.sh \
	hw-hostile.sh hw-tcp.sh sweep.sh readme.sh
E2E_SLOW_ASAN := run-scenarios.sh hw-replay-train.sh hw-tcp.sh sweep.sh hw-replay.sh plan.sh \
	energy-bound.sh hw-hostile.sh closed-loop.sh effects.sh hw-replay-pp.sh hw-replay-crypto.sh
E2E_ORDER = $(E2E_SLOW) $(filter-out $(E2E_SLOW),$(E2E_TESTS))
e2e_specs = $(foreach t,$(2),e2e:$(1):tests/e2e/$(t))
CHECK_TESTS = $(CHECK_EXTRA_TESTS) $(call e2e_specs,build/asan/bin,$(E2E_SLOW_ASAN)) \
	$(call e2e_specs,$(BIN),$(E2E_SLOW)) \
	$(call e2e_specs,build/asan/bin,$(filter-out $(E2E_SLOW_ASAN),$(E2E_TESTS))) \
	$(UNIT_TESTS:%=unit:build/asan/tests/test_%) \
	$(call e2e_specs,$(BIN),$(filter-out $(E2E_SLOW),$(E2E_TESTS))) \
	$(UNIT_BINS:%=unit:%)
