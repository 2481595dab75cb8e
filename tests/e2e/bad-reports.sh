# Every reader of a JSON report or trace (compare, import, calibrate, plot
# from a report, plot --kind timeline) given a file that is not one: empty,
# only whitespace, cut short inside an object, a folder, unreadable (skipped
# as root, who reads anything), binary. Each must exit 2 with the file and a
# place (file:line:col, or the folder named as such) and say what it
# expected; nothing is printed on stdout, no database or picture is left.
. tests/e2e/lib.sh
R=tests/data/report-sim.json
D="$E2E_TMP/in"
mkdir -p "$D/folder.json"
: >"$D/empty.json"
printf ' \n\t\n' >"$D/blank.json"
printf '{"schema": "dpusim-report/1", "source": "sim",\n "variants": [{"name": ' >"$D/cut.json"
printf '\177ELF\002\001\001\000\000\000\000\000\000\000\000\000' >"$D/binary.json"
cp "$R" "$D/unreadable.json"
chmod 000 "$D/unreadable.json"

# The message each case must give, after "dpusim: error: FILE".
want() {
	case "$1:$2" in
	empty:timeline) echo ':1:1: empty, expected a trace' ;;
	empty:*) echo ':1:1: empty, expected a dpusim-report/1 JSON object' ;;
	blank:timeline) echo ':1:1: only whitespace, expected a trace' ;;
	blank:*) echo ':1:1: only whitespace, expected a dpusim-report/1 JSON object' ;;
	cut:*) echo ':3:1: invalid JSON: .* \(the file ends here, before its JSON does: cut short\?\)' ;;
	folder:timeline) echo ': is a directory, expected a trace' ;;
	folder:*) echo ': is a directory, expected a dpusim-report/1 JSON file' ;;
	unreadable:*) echo ': cannot open: Permission denied' ;;
	binary:*) echo ':1:1: invalid JSON: ' ;;
	esac
}

for c in empty blank cut folder unreadable binary; do
	F="$D/$c.json"
	if [ "$c" = unreadable ] && [ "$(id -u)" -eq 0 ]; then
		ok "# skip $c: root reads any file"
		continue
	fi
	for r in compare import calibrate breakdown timeline; do
		rm -f "$E2E_TMP/x.db" "$E2E_TMP/p.svg" "$E2E_TMP/cal.yaml"
		case $r in
		compare) run_cmd "$DPUSIM" compare "$R" "$F" ;;
		import) run_cmd "$DPUSIM" import "$F" --db "$E2E_TMP/x.db" ;;
		calibrate) run_cmd "$DPUSIM" calibrate "$F" -o "$E2E_TMP/cal.yaml" ;;
		breakdown | timeline) run_cmd "$DPUSIM" plot "$F" --kind $r -o "$E2E_TMP/p.svg" ;;
		esac
		w=$(want $c $r)
		expect_rc 2 "$r of a $c file"
		expect_err "^dpusim: error: $F$w" "$r of a $c file is placed and says what it expected"
		if [ -n "$OUT" ]; then not_ok "$r of a $c file printed on stdout: ${OUT:0:200}"; fi
		if ls "$E2E_TMP/x.db" "$E2E_TMP/p.svg" "$E2E_TMP/cal.yaml" 2>/dev/null | grep -q .; then
			not_ok "$r of a $c file left an output behind"
		fi
	done
done
chmod 644 "$D/unreadable.json"

# A database whose stored report no longer reads: the message names the
# database and the run ("run 1:1:2: ..." named neither file nor place as such).
"$DPUSIM" import "$R" --db "$E2E_TMP/c.db" >/dev/null
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("update runs set report = ?", ("{\n  \"schema\": ",)); c.commit()' "$E2E_TMP/c.db"
for r in breakdown compare; do
	rm -f "$E2E_TMP/p.svg"
	run_cmd "$DPUSIM" plot "$E2E_TMP/c.db" $([ $r = compare ] && echo "$R") --kind $r -o "$E2E_TMP/p.svg"
	expect_rc 2 "$r of a database whose report is cut short"
	expect_err "^dpusim: error: $E2E_TMP/c\.db: run 1:[0-9]+:[0-9]+: invalid JSON" "names the database, the run and the place"
	if [ -e "$E2E_TMP/p.svg" ]; then not_ok "$r of a bad stored report left a picture"; fi
done

# A device that never ends (/dev/zero): the trace and bench-text readers
# read it without end (tools/fuzz-cli); they take regular files only, as
# their second pass over the file needs. The guard's 124 would be the hang.
for r in timeline scaling; do
	rm -f "$E2E_TMP/p.svg"
	run_cmd timeout 60 "$DPUSIM" plot /dev/zero --kind $r -o "$E2E_TMP/p.svg"
	expect_rc 2 "$r of /dev/zero"
	expect_err "/dev/zero'?:? (is )?not a regular file" "$r of /dev/zero says what it is"
	if [ -e "$E2E_TMP/p.svg" ]; then not_ok "$r of /dev/zero left a picture"; fi
done
finish
