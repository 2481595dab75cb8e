# dpusim-hw in a hostile or broken environment (issue 17 items 9, 11, 13):
# a symlink planted where bench used to put its storage file; a rank that
# publishes a malformed or hostile connection record (the others run the
# unmodified binary and must refuse it at once, quoting it safely); a rank
# stopped in MPI_Init, the first exchange or MPI_Finalize (the others end
# within --timeout, naming the phase). The broken rank is dpusim-hw with
# tests/e2e/data/hw-bad-peer.c preloaded (MPI's profiling interface).
. tests/e2e/lib.sh
hw_setup
MPIRUN+=(-np 2)

# --- 9: the storage file is created afresh (O_EXCL) and never followed ------
mkdir "$E2E_TMP/store"
echo precious >"$E2E_TMP/victim"
# One rank without mpirun keeps its PID, so the old predictable name is known.
run_cmd bash -c 'ln -s "$1" "$2/dpusim-hw-storage.$$" && exec "$3" bench --quick --sizes 4K --dir "$2"' \
	sh "$E2E_TMP/victim" "$E2E_TMP/store" "$HW"
expect_rc 0 "bench with a symlink planted at its old storage file name"
expect_out '^  storage_read_bw ' "the storage benchmark ran"
if [ "$(cat "$E2E_TMP/victim")" = precious ]; then ok "the symlink's target is untouched"
else not_ok "bench wrote through a planted symlink"; fi
left=$(ls -A "$E2E_TMP/store")
if [ "$left" = "$(cd "$E2E_TMP/store" && ls -A dpusim-hw-storage.* 2>/dev/null)" ] &&
   [ "$(wc -w <<<"$left")" -eq 1 ] && [ -L "$E2E_TMP/store/$left" ]; then
	ok "only the planted symlink is left in the folder (bench removed its own file)"
else not_ok "folder after bench: $left"; fi
run_cmd "$HW" bench --quick --sizes 4K --dir "$E2E_TMP/no/such/dir"
expect_rc 2 "a missing storage folder fails the run"
expect_err "storage benchmark: cannot create a file in '$E2E_TMP/no/such/dir': No such file" "naming the folder"

# --- 11: peers' connection records are untrusted input ----------------------
mpicc -shared -fPIC -o "$E2E_TMP/bad-peer.so" tests/e2e/data/hw-bad-peer.c ||
	{ not_ok "cannot build the bad-peer shim"; finish; exit 1; }
# Rank 1 runs with the shim; an ASan build must accept a library preloaded first.
BAD=(sh -c 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export LD_PRELOAD="$BAD_SO"
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0; fi; exec "$0" "$@"')
export BAD_SO=$E2E_TMP/bad-peer.so
sed -e 's/nodes: 4/nodes: 2/' -e 's/ranks: 4/ranks: 2/' -e 's/^name: .*/name: hw-allreduce2/' \
	-e 's/sizes: \[.*\]/sizes: [4KiB]/' tests/e2e/data/hw-allreduce4.yaml >"$E2E_TMP/ar2.yaml"
replay_bad() { # replay_bad ENV=VALUE... : the 2-rank replay with rank 1 broken
	t0=$(date +%s)
	run_cmd env "$@" "${MPIRUN[@]}" -x BAD_SO -x DPUSIM_TEST_RECORD -x DPUSIM_TEST_STOP \
		"${BAD[@]}" "$HW" replay "$E2E_TMP/ar2.yaml" --timeout "${TMO:-30}" ${START:+--start-timeout "$START"} -o "$E2E_TMP/r.json"
	secs=$(($(date +%s) - t0))
}

replay_bad DPUSIM_TEST_RECORD= DPUSIM_TEST_STOP=
expect_rc 0 "the shim alone changes nothing (replay of a 2-rank scenario)"

replay_bad DPUSIM_TEST_RECORD=nonul DPUSIM_TEST_STOP=
expect_rc 2 "a record that fills its slot with no NUL is refused"
expect_err "rank 0: error: rank 1 sent connection details this dpusim-hw cannot read: '\\\\x1b\[2J\\\\x1b\]0;pwned\\\\x07%n%s\\\\xff\\\\xfe .*\.\.\.'" \
	"the record is named and quoted with its control bytes escaped, cut short"
if LC_ALL=C grep -q $'[\x01-\x08\x0b-\x1f\x7f-\xff]' "$E2E_TMP/err"; then
	not_ok "a peer's control or non-ASCII bytes reached the terminal"
else ok "no raw control or non-ASCII byte reaches stderr"; fi
if [ "$(grep -c 'sent connection details' "$E2E_TMP/err")" -eq 1 ]; then ok "said once"
else not_ok "the refusal is said $(grep -c 'sent connection details' "$E2E_TMP/err") times"; fi

replay_bad DPUSIM_TEST_RECORD='dpusim-hw/2 tcp host=a addr=127.0.0.1 port=1' DPUSIM_TEST_STOP=
expect_rc 2 "a record of another version is refused"
expect_err "rank 1 sent connection details this dpusim-hw cannot read \(another version of dpusim-hw\): 'dpusim-hw/2 tcp" \
	"and says it is another version"

# Well-formed but unusable (port 0): every rank refuses it together at
# once, instead of the reader alone while the others wait out the timeout.
TMO=60 replay_bad DPUSIM_TEST_RECORD='dpusim-hw/1 tcp host=a addr=127.0.0.1 port=0' DPUSIM_TEST_STOP=
expect_rc 2 "a record with port 0 is refused"
expect_err "cannot read: 'dpusim-hw/1 tcp host=a addr=127.0.0.1 port=0'" "quoted whole"
# At once: a rank that did not refuse with the others would wait for its
# peer until the 60 s timeout and say "timed out" (asked of the messages,
# not of the clock, which a loaded machine slows).
if ! grep -q 'timed out' "$E2E_TMP/err"; then ok "every rank gives up at once, none waits out the timeout ($secs s)"
else not_ok "a rank waited for the timeout: $(grep -m1 'timed out' "$E2E_TMP/err")"; fi
# Repeated and unknown keys, bad characters: tests/unit/test_hw_msg.c.

# --- 13: start-up, the first exchange and shut-down are bounded too ---------
# (--start-timeout for MPI_Init/MPI_Finalize, --timeout for the exchange)
no_leftover() { # no process of this test's runs is left (a stopped rank included)
	for _ in $(seq 1 600); do  # at most 60 s: a bound against a hang, not a timing
		pgrep -f "$E2E_TMP/ar2.yaml" >/dev/null || { ok "$1: no rank left behind"; return; }
		sleep 0.1
	done
	not_ok "$1: ranks left behind: $(pgrep -af "$E2E_TMP/ar2.yaml")"
	pkill -KILL -f "$E2E_TMP/ar2.yaml"
}
# The start-up bound is short only where the test needs it: sanitizer builds
# on a busy machine take seconds to start.
TMO=2
for phase in init exchange finalize; do
	case $phase in
	init) START=3 want='rank 0: error: timed out after 3.0 s in start-up \(MPI_Init' ;;
	exchange) START= want='rank 0: error: timed out after 2.0 s in MPI exchange of connection details' ;;
	finalize) START=10 want='rank 0: error: timed out after 10.0 s in shut-down \(MPI_Finalize' ;;
	esac
	replay_bad DPUSIM_TEST_RECORD= DPUSIM_TEST_STOP=$phase
	# Status 2 is the bound's (MPI_Abort), not the 120 s guard's (124): how
	# long it took is not asked, a loaded machine slows the start-up.
	expect_rc 2 "rank 1 stopped in $phase: the run ends with status 2 ($secs s)"
	expect_err "$want" "rank 0 names the phase ($phase)"
	no_leftover "$phase"
done
TMO= START=
run_cmd "$HW" replay "$E2E_TMP/ar2.yaml" --start-timeout 0
expect_rc 2 "a bad --start-timeout is a usage error"
expect_err "bad --start-timeout '0'" "naming it"

# Names too long to be files: refused before any benchmark runs (a 256-byte
# name went through a full bench and failed at the write), and a message
# longer than its line keeps its end, what went wrong.
LONGNAME=$E2E_TMP/$(printf 'x%.0s' $(seq 300)).json
run_cmd "$HW" bench -o "$LONGNAME" --sizes 4K
expect_rc 2 "bench -o with a 300-byte file name"
expect_err "^dpusim-hw: rank 0: error: -o: cannot create '.*\.json': File name too long$" "refused by name"
if grep -q "memcpy_bw" <<<"$OUT"; then not_ok "a benchmark ran before the refusal"
else ok "no benchmark ran first"; fi
run_cmd "$HW" bench -o "$E2E_TMP/$(printf 'y%.0s' $(seq 9000))/r.json" --sizes 4K
expect_rc 2 "bench -o under a 9,000-byte folder name"
expect_err "bytes left out \.\.\.\] y+/r\.json': File name too long$" "the message keeps its end"

finish
