# tests/: end-to-end scripts (tests/e2e/NAME, run with BIN set); unit suites
# are listed by each fragment in UNIT_TESTS.
E2E_TESTS += cli-basics.sh bench-engine.sh
E2E_TESTS += hw-probe.sh hw-tcp.sh hw-replay.sh
E2E_TESTS += check-scenarios.sh bad-input.sh
