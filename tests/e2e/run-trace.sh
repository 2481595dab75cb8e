# --trace says where every trace file went, and never silently writes
# nothing: a scenario of collective benchmarks only is refused (exit 2,
# nothing written); beside a training job, a benchmark job is named as not
# traced.
. tests/e2e/lib.sh

mkdir -p "$E2E_TMP/t"
run_cmd "$DPUSIM" run scenarios/allreduce-4ranks.yaml --trace "$E2E_TMP/t/c.json"
expect_rc 2 "--trace on a collective benchmark is refused"
expect_err "^dpusim: error: --trace: 'allreduce-4ranks' is a collective benchmark" "saying why"
if [ -z "$(ls -A "$E2E_TMP/t")" ]; then ok "nothing written"; else not_ok "wrote: $(ls "$E2E_TMP/t")"; fi
if [ -z "$OUT" ]; then ok "no table printed"; else not_ok "printed a table"; fi

run_cmd "$DPUSIM" run tests/e2e/data/shared-bench.yaml --trace "$E2E_TMP/t/s.json"
expect_rc 0 "a training job beside a benchmark job"
expect_err "^dpusim: note: --trace: job 'bench' is a collective benchmark, not traced" "the benchmark job is named as not traced"
# Every file written is named on stderr, and every name is a file.
named=$(sed -n 's/^dpusim: wrote trace \([^ ]*\).*/\1/p' <<<"$ERR" | sort)
there=$(ls "$E2E_TMP"/t/*.json | sort)
if [ -n "$named" ] && [ "$named" = "$there" ]; then ok "every trace written is named: $(echo $named | sed "s|$E2E_TMP/t/||g")"
else not_ok "named '$named', written '$there'"; fi

finish
