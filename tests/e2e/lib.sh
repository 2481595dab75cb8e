# Shared helpers for end-to-end tests. Source it; BIN names the binaries' folder.
# Each check prints "ok - ..." or "not ok - ..."; finish() exits non-zero on any failure.
set -u
BIN=${BIN:-bin}
DPUSIM=$BIN/dpusim
E2E_FAILS=0
E2E_COUNT=0
E2E_TMP=$(mktemp -d)
trap 'rm -rf "$E2E_TMP"' EXIT

ok()     { E2E_COUNT=$((E2E_COUNT + 1)); echo "ok - $*"; }
not_ok() { E2E_COUNT=$((E2E_COUNT + 1)); E2E_FAILS=$((E2E_FAILS + 1)); echo "not ok - $*"; }

# run_cmd CMD...: runs it, keeps stdout in $OUT, stderr in $ERR, status in $RC.
run_cmd() {
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err"
	RC=$?
	OUT=$(cat "$E2E_TMP/out")
	ERR=$(cat "$E2E_TMP/err")
}

# expect_rc N DESCRIPTION: checks the last run_cmd's status.
expect_rc() {
	if [ "$RC" -eq "$1" ]; then ok "$2 (exit $RC)"
	else not_ok "$2: exit $RC, expected $1"; echo "   stdout: ${OUT:0:400}"; echo "   stderr: ${ERR:0:400}"; fi
}

# expect_out REGEX DESCRIPTION / expect_err REGEX DESCRIPTION (grep -E).
expect_out() { if grep -Eq -- "$1" <<<"$OUT"; then ok "$2"; else not_ok "$2: stdout lacks /$1/"; echo "   stdout: ${OUT:0:600}"; fi; }
expect_err() { if grep -Eq -- "$1" <<<"$ERR"; then ok "$2"; else not_ok "$2: stderr lacks /$1/"; echo "   stderr: ${ERR:0:600}"; fi; }

# ends_on_term PID: whether that process, stopped, is ending by a SIGTERM:
# ended already (a stopped process whose SIGTERM takes the default action
# is killed at once; gone, or a zombie no one reaps) or with SIGTERM waiting
# on it (a handler runs once it continues), from /proc: its state, and its
# pending sets, process-wide and the thread's, in hex. Asked again for up
# to 10 s, a bound against the moment a handler runs (neither stopped nor
# pending then), not a timing: one that never gets the signal stays
# stopped with nothing pending.
ends_on_term() {
	local state pnd m
	for _ in $(seq 100); do
		state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
		case $state in "" | Z | X) return 0 ;; esac
		pnd=$(awk '/^(ShdPnd|SigPnd):/ { print $2 }' "/proc/$1/status" 2>/dev/null)
		for m in $pnd; do (( (16#$m >> 14) & 1 )) && return 0; done
		sleep 0.1
	done
	return 1
}

# killed_alone WHAT PID VICTIM: SIGTERM to PID (a dpusim running in the
# background) alone; it must end by that signal, and its worker VICTIM,
# stopped by a test hook, must be ending by a SIGTERM of its own
# (ends_on_term); the worker is then killed whatever it does.
killed_alone() {
	local st
	kill -TERM "$2"
	wait "$2"
	st=$?
	[ "$st" = 143 ] && ok "the $1 ends by its SIGTERM" || not_ok "the $1: status $st"
	if [ -n "$3" ] && ends_on_term "$3"; then ok "its stopped worker ends by a SIGTERM too"
	else not_ok "worker '$3' lives on: $(grep -E 'State|Pnd' "/proc/$3/status" 2>&1)"; fi
	[ -n "$3" ] && { kill -CONT "$3"; kill -KILL "$3"; } 2>/dev/null
}

# Counts a check script's own "ok - " and "not ok - " lines (its stdout
# and stderr in $1) as this test's; any other line is a failure of the
# script itself.
tally_checks() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${line#ok - }" ;;
		"not ok - "*) not_ok "${line#not ok - }" ;;
		*) not_ok "check script: $line" ;;
		esac
	done <<<"$1"
}

# relay_checks OUTPUT [PREFIX]: counts a check script's "ok - " and
# "not ok - " lines (PREFIX before each description) as this test's; any
# other line is the detail of the check before it, printed indented.
relay_checks() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "${2:-}${line#ok - }" ;;
		"not ok - "*) not_ok "${2:-}${line#not ok - }" ;;
		"") ;;
		*) echo "   $line" ;;
		esac
	done <<<"$1"
}

# py_check DESCRIPTION ARG...: runs the Python program on stdin with ARGs
# as sys.argv[1:]: ok DESCRIPTION when it exits 0, else not ok with what it
# printed (an assert's message and line).
py_check() {
	local what=$1 out
	shift
	if out=$(python3 - "$@" 2>&1); then ok "$what"; else not_ok "$what: $out"; fi
}

finish() {
	echo "$((E2E_COUNT - E2E_FAILS)) of $E2E_COUNT checks passed"
	[ "$E2E_FAILS" -eq 0 ]
}

# MPI_ENV: the environment every mpirun of the tests gets. Open MPI 4.1's
# libraries bind their symbols lazily, and its progress threads make their
# first calls while MPI_Init and MPI_Finalize open and dlclose components: a CI
# run had a process under mpirun crash in ld.so's lazy lookup (_dl_fixup,
# do_lookup_x, "address not mapped") called from libopen-pal's progress engine.
# LD_BIND_NOW binds every symbol when a library loads, under the loader's lock,
# so no lookup races a dlclose; mpirun -np 4 starts as fast with it (1.1 s).
MPI_ENV=(LD_BIND_NOW=1)

# hw_setup [SECONDS]: for the tests of dpusim-hw. HW names it; the sanitizer
# builds' options for MPI programs are exported (Open MPI's own allocations
# live until exit by design: suppressed, and full stacks, slow to unwind, let
# the suppressions see through MPI's plugins); MPIRUN is mpirun as this
# machine runs it (as root, with more ranks than cores) under a timeout
# (SECONDS, 120 by default), to which a script adds its -np.
hw_setup() {
	HW=$BIN/dpusim-hw
	export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/e2e/hw-lsan.supp:print_suppressions=0}
	export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
	MPIRUN=(timeout -k 10 "${1:-120}" env "${MPI_ENV[@]}" mpirun --allow-run-as-root --oversubscribe)
}
