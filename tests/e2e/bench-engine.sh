# dpusim bench engine prints one line per size in the documented form.
# (Figures are not judged here: speed is for make bench, never a test.)
. tests/e2e/lib.sh

run_cmd "$DPUSIM" bench engine --events 20000 --reps 1 --pending 10,1000
expect_rc 0 "bench engine runs"
n=$(grep -Ec '^engine hold pending=[0-9]+ events_per_s=[0-9]+$' <<<"$OUT")
if [ "$n" -eq 2 ]; then ok "two lines in the documented form"; else not_ok "expected 2 lines, got: $OUT"; fi
expect_out '^engine hold pending=10 ' "first size first"
finish
