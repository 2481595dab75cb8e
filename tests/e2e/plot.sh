# dpusim plot: PNG and SVG files of the requested size from reports and a
# database; bad input leaves no file behind.
. tests/e2e/lib.sh
SIM=tests/data/report-sim.json
HW=tests/data/report-hw.json
T=$E2E_TMP

# png_size FILE: "W H" from the IHDR chunk (bytes 16..23, big-endian).
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{ print $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'; }
is_png() { [ "$(od -An -tx1 -N8 "$1" | tr -d ' ')" = 89504e470d0a1a0a ]; }

check_png() { # FILE W H DESCRIPTION
	if [ -s "$1" ] && is_png "$1" && [ "$(png_size "$1")" = "$2 $3" ]; then ok "$4: PNG $2x$3"
	else not_ok "$4: $(ls -l "$1" 2>&1), size $(png_size "$1" 2>/dev/null)"; fi
}
check_svg() { # FILE W H DESCRIPTION
	if [ -s "$1" ] && grep -q '<svg' "$1" && grep -q "viewBox=\"0 0 $2 $3\"" "$1" && grep -q '</svg>' "$1"
	then ok "$4: SVG $2x$3"; else not_ok "$4: $(ls -l "$1" 2>&1)"; fi
}

run_cmd "$DPUSIM" plot "$SIM" --kind breakdown -o "$T/bd.png"
expect_rc 0 "breakdown PNG"
check_png "$T/bd.png" 1000 600 "breakdown"
run_cmd "$DPUSIM" plot "$SIM" --kind breakdown -o "$T/bd.svg" --size 640x480
expect_rc 0 "breakdown SVG"
check_svg "$T/bd.svg" 640 480 "breakdown"
grep -q 'time per iteration (s)' "$T/bd.svg" && ok "breakdown has its axis label with unit" || not_ok "breakdown axis label"
grep -q 'exposed_comm' "$T/bd.svg" && ok "breakdown has a legend" || not_ok "breakdown legend"

run_cmd "$DPUSIM" plot "$SIM" "$HW" --kind compare --tolerance 10% -o "$T/cmp.png" --size 1200x700
expect_rc 0 "compare PNG"
check_png "$T/cmp.png" 1200 700 "compare"
run_cmd "$DPUSIM" plot "$SIM" "$HW" --kind compare -o "$T/cmp.svg"
check_svg "$T/cmp.svg" 1000 600 "compare"
grep -q 'relative error of B against A (%)' "$T/cmp.svg" && ok "compare y label" || not_ok "compare y label"

# A small sweep: the sim fixture at four cluster sizes, stored with import.
for g in 8 16 32 64; do
	sed -e "s/\"seed\": 42/\"seed\": 42, \"point\": \"cluster.gpus=$g,fabric.link=400Gbps\"/" \
	    -e "s/\"samples_per_s\": 2048/\"samples_per_s\": $((2048 * g / 8))/" \
	    -e "s/\"samples_per_s\": 2560/\"samples_per_s\": $((2560 * g / 8 - g))/" \
	    -e "s/\"dpu\": 1.25/\"dpu\": 1.24609375/" \
	    "$SIM" > "$T/p$g.json"
done
run_cmd "$DPUSIM" import "$T"/p8.json "$T"/p16.json "$T"/p32.json "$T"/p64.json --db "$T/s.db"
expect_rc 0 "import a sweep"
run_cmd "$DPUSIM" plot "$T/s.db" --kind capacity -o "$T/cap.png"
expect_rc 0 "capacity PNG from a database"
check_png "$T/cap.png" 1000 600 "capacity"
run_cmd "$DPUSIM" plot "$T/s.db" --kind capacity --metric tokens_per_s --x cluster.gpus -o "$T/cap.svg"
check_svg "$T/cap.svg" 1000 600 "capacity of tokens_per_s"
grep -q 'throughput (tokens/s)' "$T/cap.svg" && grep -q '>gpus<' "$T/cap.svg" \
	&& ok "capacity axes name the metric in words with its unit, and the sweep key" || not_ok "capacity axes"
run_cmd "$DPUSIM" plot "$T/s.db" --kind scaling -o "$T/scal.png" --size 800x500
expect_rc 0 "scaling PNG"
check_png "$T/scal.png" 800 500 "scaling"
run_cmd "$DPUSIM" plot "$T/s.db" --kind breakdown --run 2 -o "$T/bd-db.png"
expect_rc 0 "breakdown of a stored run"
check_png "$T/bd-db.png" 1000 600 "breakdown from the database"

# Timeline of a trace (tests/data/trace-small.json: written by tools/trace.c,
# 2 nodes x 2 GPUs, host CPUs, DPUs and a link group).
run_cmd "$DPUSIM" plot tests/data/trace-small.json --kind timeline -o "$T/tl.png"
expect_rc 0 "timeline PNG"
check_png "$T/tl.png" 1000 600 "timeline"
run_cmd "$DPUSIM" plot tests/data/trace-small.json --kind timeline --tracks 3 -o "$T/tl.svg"
check_svg "$T/tl.svg" 1000 600 "timeline"
grep -q 'node 0 / GPU 0' "$T/tl.svg" && ! grep -q 'node 1 / GPU 3' "$T/tl.svg" \
	&& ok "timeline rows are named tracks, limited by --tracks" || not_ok "timeline rows"
grep -q 'first tracks shown' "$T/tl.svg" && grep -q 'time (ms)' "$T/tl.svg" \
	&& ok "timeline title says rows were dropped; x axis has its unit" || not_ok "timeline labels"

# Bad input: exit 2, nothing written.
run_cmd "$DPUSIM" plot "$SIM" --kind timeline -o "$T/none.png"
expect_rc 2 "timeline of a report"
expect_err 'not a trace' "timeline of a report says why"
printf '{"traceEvents": [\n{"ph": "X",,}]}' > "$T/bad-trace.json"
run_cmd "$DPUSIM" plot "$T/bad-trace.json" --kind timeline -o "$T/none.png"
expect_rc 2 "malformed trace"
expect_err 'bad-trace.json:2:[0-9]+: invalid JSON' "malformed trace error names file:line:col"
run_cmd "$DPUSIM" plot "$HW" --kind breakdown -o "$T/none.png"
expect_rc 2 "breakdown of a report without breakdown"
expect_err 'no variant has a breakdown_s' "says why"
# A two-key sweep (cluster size x link rate): a line per variant and link
# rate, never one line joining points of different link rates; --where pins
# a key; --x on the other key splits by the first. The constant key of the
# one-key sweep above names no line.
grep -q ', link=' "$T/cap.svg" && not_ok "a key with one value split the lines" || ok "a key with one value names no line"
for g in 8 16; do for l in 100 400; do
	sed -e "s/\"seed\": 42/\"seed\": 42, \"point\": \"cluster.gpus=$g,fabric.link=${l}Gbps\"/" \
	    -e "s/\"samples_per_s\": 2048/\"samples_per_s\": $((2048 * g * l / 800))/" \
	    -e "s/\"samples_per_s\": 2560/\"samples_per_s\": $((2560 * g * l / 800))/" \
	    "$SIM" > "$T/q$g-$l.json"
done; done
run_cmd "$DPUSIM" import "$T"/q*.json --db "$T/two.db"
expect_rc 0 "import a two-key sweep"
run_cmd "$DPUSIM" plot "$T/two.db" --kind capacity -o "$T/two.svg"
expect_rc 0 "capacity of a two-key sweep"
n=$(grep -oE '(baseline|dpu), link=(100|400)Gbps' "$T/two.svg" | sort -u | wc -l)
[ "$n" -eq 4 ] && ok "a line per variant and link rate, named in the legend" || not_ok "two-key legend: $n lines named"
run_cmd "$DPUSIM" plot "$T/two.db" --kind capacity --where fabric.link=400Gbps -o "$T/where.svg"
expect_rc 0 "--where pins the link rate"
[ -s "$T/where.svg" ] && ! grep -q ', link=' "$T/where.svg" && ok "--where: one line per variant" || not_ok "--where: a pinned key still names lines"
run_cmd "$DPUSIM" plot "$T/two.db" --kind capacity --x fabric.link --where cluster.gpus=16 -o "$T/x.svg"
expect_rc 0 "--x on the second key with the first pinned"
run_cmd "$DPUSIM" plot "$T/two.db" --kind capacity --where fabric.link=200Gbps -o "$T/none.png"
expect_rc 2 "--where that matches no point"
expect_err "match --where" "the message says --where matched nothing"
run_cmd "$DPUSIM" plot "$T/s.db" --kind capacity --x fabric.nodes -o "$T/none.png"
expect_rc 2 "capacity against a key the sweep lacks"
run_cmd "$DPUSIM" plot "$SIM" --kind capacity -o "$T/none.png"
expect_rc 2 "capacity from a report"
run_cmd "$DPUSIM" plot "$SIM" "$HW" --kind compare --tolerance abc% -o "$T/none.png"
expect_rc 2 "a tolerance that is not a number"
run_cmd "$DPUSIM" plot "$SIM" --kind pie -o "$T/none.png"
expect_rc 2 "unknown kind"
run_cmd "$DPUSIM" plot "$SIM" --kind breakdown -o "$T/none.jpg"
expect_rc 2 "unknown picture format"
[ -z "$(ls "$T" | grep -E '^none|\.tmp\.')" ] && ok "no file or temporary left by failed plots" || not_ok "left: $(ls "$T")"

finish
