# Every option a command parses appears in its --help: the option strings
# each command's source compares argv with ("--x", "-o") are collected from
# the source, so an option added without documenting it fails here.
. tests/e2e/lib.sh

# check_cmd BINARY COMMAND FILE...: the options in FILEs against the help.
check_cmd() {
	local bin=$1 cmd=$2 help o missing=""
	shift 2
	help=$("$bin" "$cmd" --help 2>&1)
	for o in $(cat "$@" | grep -o '"--*[a-zA-Z][a-zA-Z0-9-]*"' | tr -d '"' | sort -u); do
		grep -qE -- "(^|[^a-zA-Z0-9-])$o([^a-zA-Z0-9-]|\$)" <<<"$help" || missing="$missing $o"
	done
	if [ -z "$missing" ]; then ok "$(basename "$bin") $cmd --help lists every option it parses"
	else not_ok "$(basename "$bin") $cmd --help lacks:$missing"; fi
}

for f in tools/cmd_*.c; do
	c=$(basename "$f" .c)
	c=${c#cmd_}
	files=("$f")
	case $c in bench) files+=(tools/bench_*.c) ;; esac
	grep -q scn_cli_option "$f" && [ "$c" != profiles ] && files+=(tools/scn_cli.c)
	check_cmd "$DPUSIM" "$c" "${files[@]}"
done
check_cmd "$BIN/dpusim-hw" probe backend-hw/probe.c
check_cmd "$BIN/dpusim-hw" bench backend-hw/bench*.c
check_cmd "$BIN/dpusim-hw" replay backend-hw/replay*.c

# plot's options are listed as options, not only inside a kind's text.
run_cmd "$DPUSIM" plot --help
for o in --kind -o --metric --run --tolerance --tracks --scenario --x --where --size; do
	expect_out "^  $o " "plot --help lists $o among its options"
done

finish
