# Output safety (issue 17, items 5, 6, 8, 10): standard output write errors
# are exit 2 for every command; pictures are whole or absent; no temporary
# name can be hijacked by a planted link; no output replaces an input.
. tests/e2e/lib.sh
HWBIN=$BIN/dpusim-hw
T=$E2E_TMP
SMALL=$PWD/tests/data/train-small.yaml
# One variant: --trace FILE is then FILE itself.
printf 'extends: %s\nname: one\nvariants:\n  - { name: only, network: rdma-gdr }\n' "$SMALL" >"$T/one.yaml"
"$DPUSIM" run tests/data/train-small.yaml --json >"$T/rep.json" 2>/dev/null
"$DPUSIM" run "$T/one.yaml" --trace "$T/trace.json" >/dev/null 2>&1

# no_temps DIR DESCRIPTION: nothing named *.tmp.* left in DIR.
no_temps() {
	if ls "$1" | grep -q '\.tmp\.'; then not_ok "$2: left $(ls "$1" | grep '\.tmp\.' | head -3)"
	else ok "$2"; fi
}

# ---- 5: standard output --------------------------------------------------
full_out() { # DESCRIPTION CMD...: CMD > /dev/full must exit 2 and say so
	local what=$1
	shift
	"$@" >/dev/full 2>"$T/err"
	RC=$?
	OUT=
	ERR=$(cat "$T/err")
	expect_rc 2 "$what > /dev/full"
	expect_err 'cannot write to standard output' "$what says its output was lost"
}
full_out "run --json" "$DPUSIM" run tests/data/train-small.yaml --json
full_out "run (table)" "$DPUSIM" run tests/data/train-small.yaml
full_out "run --dump" "$DPUSIM" run tests/data/train-small.yaml --dump
full_out "check" "$DPUSIM" check tests/data/train-small.yaml
full_out "profiles" "$DPUSIM" profiles
full_out "coll" "$DPUSIM" coll --ranks 4 --bytes 1MiB --link 400Gbps
full_out "compare" "$DPUSIM" compare "$T/rep.json" "$T/rep.json"
full_out "compare --json" "$DPUSIM" compare "$T/rep.json" "$T/rep.json" --json
full_out "--help" "$DPUSIM" --help
full_out "run --help" "$DPUSIM" run --help
full_out "--version" "$DPUSIM" --version
full_out "dpusim-hw --help" "$HWBIN" --help
full_out "dpusim-hw --version" "$HWBIN" --version
# compare beyond its tolerance exits 1; a lost table still exits 2
full_out "compare --tolerance" "$DPUSIM" compare "$T/rep.json" tests/data/report-sim.json \
	--tolerance 0%

# ---- 8: planted links at the temporary's old name (PATH.tmp.PID) ---------
# sh -c ... exec keeps the PID, so the link sits where the old writer wrote.
printf 'precious\n' >"$T/victim"
planted() { # TARGET DESCRIPTION CMD...: plants TARGET.tmp.PID -> victim
	local target=$1 what=$2
	shift 2
	sh -c 'ln -sf "$1" "$2.tmp.$$" && shift 2 && exec "$@"' sh "$T/victim" "$target" "$@" \
		>"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	expect_rc 0 "$what with a link planted at its temporary's name"
	if [ "$(cat "$T/victim")" = precious ]; then ok "$what did not write through the link"
	else not_ok "$what overwrote the link's target"; printf 'precious\n' >"$T/victim"; fi
	rm -f "$target".tmp.*
}
mkdir -p "$T/o"
planted "$T/o/report.json" "run -o" "$DPUSIM" run tests/data/train-small.yaml -o "$T/o"
planted "$T/tr.json" "run --trace" "$DPUSIM" run "$T/one.yaml" --trace "$T/tr.json"
planted "$T/pic.png" "plot -o" "$DPUSIM" plot "$T/rep.json" --kind breakdown -o "$T/pic.png"
mkdir -p "$T/sw"
planted "$T/sw/sweep-small.p0.json" "sweep -o" "$DPUSIM" sweep tests/data/sweep-small.yaml \
	--db "$T/sw.db" -o "$T/sw"
mkdir -p "$T/cal"
planted "$T/cal/lab-host-costs.yaml" "calibrate -o" "$DPUSIM" calibrate \
	tests/data/hw-bench-tcp.json -o "$T/cal/lab.yaml" --mtu 65536
no_temps "$T/cal" "calibrate leaves no temporary"

# ---- 10: no output replaces an input --------------------------------------
refused() { # FILE DESCRIPTION CMD...: CMD exits 2, FILE unchanged
	local file=$1 what=$2 before
	shift 2
	before=$(cksum <"$file")
	run_cmd "$@"
	expect_rc 2 "$what"
	expect_err 'input of this command' "$what: says the file is an input"
	if [ "$(cksum <"$file")" = "$before" ]; then ok "$what: the input is unchanged"
	else not_ok "$what: the input was overwritten"; fi
}
refused "$T/one.yaml" "run --trace naming the scenario" \
	"$DPUSIM" run "$T/one.yaml" --trace "$T/one.yaml"
ln "$T/one.yaml" "$T/alias.yaml"
refused "$T/one.yaml" "run --trace naming the scenario by another name" \
	"$DPUSIM" run "$T/one.yaml" --trace "$T/alias.yaml"
refused "$T/one.yaml" "run --trace naming the scenario through ./ and .." \
	"$DPUSIM" run "$T/one.yaml" --trace "$T/o/../one.yaml"
cp "$SMALL" "$T/base.yaml"
printf 'extends: base.yaml\nname: child\nvariants:\n  - { name: only, network: rdma-gdr }\n' \
	>"$T/child.yaml"
refused "$T/base.yaml" "run --trace naming the file the scenario extends" \
	"$DPUSIM" run "$T/child.yaml" --trace "$T/base.yaml"
# two variants: FILE.VARIANT.yaml, here the extended file
cp "$SMALL" "$T/c.baseline.yaml"
printf 'extends: c.baseline.yaml\nname: two\n' >"$T/c.yaml"
refused "$T/c.baseline.yaml" "run --trace whose FILE.VARIANT name is an input" \
	"$DPUSIM" run "$T/c.yaml" --trace "$T/c.yaml"
cp models/profiles/H100-SXM5.yaml "$T/gpu.yaml"
refused "$T/gpu.yaml" "run --trace naming a --profile file" \
	"$DPUSIM" run "$T/one.yaml" --profile "$T/gpu.yaml" --trace "$T/gpu.yaml"
mkdir -p "$T/profiles"
cp models/profiles/*.yaml "$T/profiles/"
refused "$T/profiles/H100-SXM5.yaml" "run --trace naming a file of the profile folder" \
	"$DPUSIM" run "$T/one.yaml" --profile-dir "$T/profiles" --trace "$T/profiles/H100-SXM5.yaml"
"$DPUSIM" run "$T/one.yaml" --db "$T/in.db" >/dev/null 2>&1
refused "$T/in.db" "run --trace naming the --db database" \
	"$DPUSIM" run "$T/one.yaml" --db "$T/in.db" --trace "$T/in.db"
mkdir -p "$T/o2"
cp "$T/one.yaml" "$T/o2/report.json"
refused "$T/o2/report.json" "run -o whose report.json is the scenario" \
	"$DPUSIM" run "$T/o2/report.json" -o "$T/o2"
no_temps "$T/o2" "a refused run -o leaves no temporary"
no_temps "$T" "refused traces leave no temporary"
# refused before the simulation, not after it
run_cmd "$DPUSIM" run "$T/one.yaml" --trace "$T/one.yaml" --replications 10000
expect_rc 2 "the refusal comes before the simulation (10,000 replications)"
"$DPUSIM" import "$T/rep.json" --db "$T/db.png" >/dev/null 2>&1
refused "$T/db.png" "plot -o naming its source database" \
	"$DPUSIM" plot "$T/db.png" --kind breakdown -o "$T/db.png"
cp tests/data/hw-bench-tcp.json "$T/cal/lab2-host-costs.yaml"
refused "$T/cal/lab2-host-costs.yaml" "calibrate -o whose profile would be a bench file" \
	"$DPUSIM" calibrate "$T/cal/lab2-host-costs.yaml" -o "$T/cal/lab2.yaml" --mtu 65536
# dpusim-hw replay -o naming its scenario: refused at once, on every rank
if command -v mpirun >/dev/null; then
	cp tests/e2e/data/hw-allreduce4.yaml "$T/hw.yaml"
	# Open MPI's own allocations, as in hw-replay.sh
	refused "$T/hw.yaml" "dpusim-hw replay -o naming its scenario" \
		env "${MPI_ENV[@]}" LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$PWD/tests/e2e/hw-lsan.supp:print_suppressions=0}" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" timeout -k 10 120 mpirun --allow-run-as-root --oversubscribe -np 4 "$HWBIN" replay \
		"$T/hw.yaml" -o "$T/hw.yaml"
	expect_err "rank 0: error: refusing to write '$T/hw.yaml'" "before the replay, from rank 0"
else
	ok "# skip dpusim-hw replay -o: no mpirun"
fi
# two variants whose trace names collide
printf 'extends: %s\nname: clash\nvariants:\n  - { name: a-b, network: rdma-gdr }\n  - { name: a/b, network: host-tcp }\n' \
	"$SMALL" >"$T/clash.yaml"
if "$DPUSIM" check "$T/clash.yaml" >/dev/null 2>&1; then
	run_cmd "$DPUSIM" run "$T/clash.yaml" --trace "$T/clash.json"
	expect_rc 2 "two variants whose traces would be one file"
	expect_err 'two outputs of this run lead to one file' "and says so"
else ok "variant names with '/' are refused by check: no trace name clash possible"; fi

# which files were written, on stderr; a replaced one is said to be replaced
run_cmd "$DPUSIM" run tests/data/train-small.yaml --trace "$T/w.json" -o "$T/o"
expect_rc 0 "run with --trace and -o"
expect_err "^dpusim: wrote trace $T/w\\.baseline\\.json\$" "names the first trace written"
expect_err "^dpusim: wrote trace $T/w\\.gdr\\.json\$" "names the second trace written"
expect_err "^dpusim: wrote report $T/o/report\\.json \\(replaced the file there\\)\$" \
	"names the report, and that it replaced one"
run_cmd "$DPUSIM" run tests/data/train-small.yaml --trace "$T/w.json"
expect_err "^dpusim: wrote trace $T/w\\.gdr\\.json \\(replaced the file there\\)\$" \
	"an existing trace is not replaced silently"

# ---- 6: pictures are whole or absent ---------------------------------------
# A stand-in gnuplot that does what gnuplot does on a full disk: the
# picture cut short, exit status 0, not a word.
"$DPUSIM" plot "$T/rep.json" --kind breakdown -o "$T/whole.svg" >/dev/null 2>&1
mkdir -p "$T/fakebin" "$T/pics"
cat >"$T/fakebin/gnuplot" <<'SH'
#!/bin/sh
out=$(sed -n "s/^set output '\(.*\)'\$/\1/p" "$1")
case $FAKE in
short) head -c 300 "$WHOLE" >"$out" ;;
whole-but-error) cat "$WHOLE" >"$out"; echo '"plot.gp" line 9: x range is invalid' >&2 ;;
whole-warning) cat "$WHOLE" >"$out"; echo '"plot.gp" line 9: warning: Skipping data file' >&2 ;;
whole-warning-2) cat "$WHOLE" >"$out"
	printf '"plot.gp" line 15: warning: Terminal canvas area too small to hold plot.\n\t    Check plot boundary and font sizes.\n' >&2 ;;
esac
exit 0
SH
chmod +x "$T/fakebin/gnuplot"
fake_plot() { # MODE WHOLE OUT
	FAKE=$1 WHOLE=$2 PATH="$T/fakebin:$PATH" run_cmd "$DPUSIM" plot "$T/rep.json" \
		--kind breakdown -o "$3"
}
for ext in png svg; do
	whole=$T/pic.png
	[ $ext = svg ] && whole=$T/whole.svg
	fake_plot short "$whole" "$T/pics/cut.$ext"
	expect_rc 2 "a $ext cut short while gnuplot exits 0"
	expect_err "cut\.$ext: gnuplot left the picture incomplete" "says the $ext is incomplete"
	if [ ! -e "$T/pics/cut.$ext" ]; then ok "no truncated $ext reported as written"
	else not_ok "a truncated $ext was put in place"; fi
	fake_plot whole-warning "$whole" "$T/pics/warn.$ext"
	expect_rc 0 "a whole $ext with a gnuplot warning"
	expect_err "^dpusim: gnuplot: .*warning: Skipping data file" "the warning is passed on"
done
# gnuplot continues some warnings on an indented line: still a warning
fake_plot whole-warning-2 "$T/whole.svg" "$T/pics/warn2.svg"
expect_rc 0 "a whole picture with a two-line gnuplot warning (fuzz-cli seed 1204)"
expect_err "^dpusim: gnuplot: .*Check plot boundary and font sizes" "its second line passed on too"
fake_plot whole-but-error "$T/pic.png" "$T/pics/err.png"
expect_rc 2 "gnuplot's error message fails the plot even with exit status 0"
expect_err 'gnuplot failed \(exit status 0\): "plot.gp" line 9: x range is invalid' \
	"and quotes gnuplot"
no_temps "$T/pics" "failed pictures leave no temporary"
FAKE=short WHOLE=$T/pic.png PATH="$T/fakebin:$PATH" run_cmd "$DPUSIM" calibrate \
	tests/data/hw-bench-tcp.json -o "$T/cal/cut.yaml" --mtu 65536 --plot "$T/pics"
expect_err 'gnuplot left the picture incomplete' "calibrate --plot checks its pictures too"
if ! ls "$T/pics" | grep -q '^cut-'; then ok "calibrate put no truncated picture in place"
else not_ok "calibrate put a truncated picture in place: $(ls "$T/pics")"; fi
no_temps "$T/pics" "calibrate --plot leaves no temporary"

# ---- a real full disk (root only: a small tmpfs) --------------------------
FULL=$T/full
if [ "$(id -u)" = 0 ] && mkdir -p "$FULL" && mount -t tmpfs -o size=64k tmpfs "$FULL" 2>/dev/null
then
	trap 'umount "$FULL" 2>/dev/null; rm -rf "$E2E_TMP"' EXIT
	# leave 8 KiB: the start of each file fits, the rest does not
	head -c $((56 * 1024)) /dev/zero >"$FULL/fill" 2>/dev/null
	mkdir -p "$FULL/o"
	run_cmd "$DPUSIM" run tests/data/train-small.yaml -o "$FULL/o" --trace "$FULL/t.json"
	expect_rc 2 "run -o and --trace on a full disk"
	expect_err 'No space left on device' "says why"
	if [ -z "$(ls "$FULL/o")" ] && ! ls "$FULL" | grep -q 't\.'; then
		ok "no report, trace or temporary left on the full disk"
	else not_ok "left on the full disk: $(ls -R "$FULL")"; fi
	run_cmd "$DPUSIM" plot "$T/rep.json" --kind breakdown -o "$FULL/p.png"
	expect_rc 2 "plot onto a full disk (real gnuplot)"
	if [ -z "$(ls "$FULL" | grep -v '^fill$\|^o$')" ]; then
		ok "no truncated picture or temporary left on the full disk"
	else not_ok "left on the full disk: $(ls "$FULL")"; fi
	# and no room at all: stdout's file stays empty, which is an error
	head -c $((64 * 1024)) /dev/zero >>"$FULL/fill" 2>/dev/null
	"$DPUSIM" run tests/data/train-small.yaml --json >"$FULL/stdout.json" 2>"$T/err"
	RC=$? OUT= ERR=$(cat "$T/err")
	expect_rc 2 "run --json > FILE on a full disk"
	expect_err 'cannot write to standard output: No space left on device' "says why"
	rm -f "$FULL/stdout.json"
	umount "$FULL"
else
	ok "# skip full-disk checks: need root to mount a small tmpfs"
fi

# A --db that cannot be made is said before the work: run and plan open
# the database after simulating, and a name past the folder's limit, a
# folder two levels missing or a text file was found only then (run
# wrote its report first, plan simulated every finalist).
echo "not a database" >"$T/text.db"
for bad in "$T/$(printf 'd%.0s' $(seq 250)).db" "$T/no/such/x.db" "$T/text.db" "$T"; do
	rm -rf "$T/early"
	run_cmd "$DPUSIM" run tests/data/train-small.yaml -o "$T/early" --db "$bad"
	expect_rc 2 "run --db ${bad:0:60}... is refused"
	if [ -e "$T/early" ]; then not_ok "run wrote $T/early before refusing its --db"
	else ok "nothing simulated or written first"; fi
	run_cmd "$DPUSIM" plan tests/data/train-small.yaml --db "$bad"
	expect_rc 2 "plan --db ${bad:0:60}... is refused"
	if grep -q "finalist" <<<"$ERR"; then not_ok "plan simulated finalists before refusing its --db"
	else ok "plan refuses it before its finalists"; fi
done
if [ -e "$T/no" ]; then not_ok "a refused --db made a folder"; else ok "no folder made for a refused --db"; fi

finish
