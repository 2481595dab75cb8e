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

# A variant with hardware of its own runs on a view of the scenario with
# that variant alone; its trace is still named after it, never written to
# the bare path (where it once went, so a second such variant replaced it),
# in this process and in worker processes alike.
printf 'extends: %s\nname: own-hw\nreplications: 1\nvariants:\n  - { name: tcp, network: host-tcp }\n  - { name: four, network: rdma-gdr, cluster: { nics_per_node: 4 } }\n  - { name: two, network: rdma-gdr, cluster: { nics_per_node: 2 } }\n' \
	"$PWD/tests/data/train-small.yaml" >"$E2E_TMP/own.yaml"
for jobs in 1 2; do
	mkdir -p "$E2E_TMP/o$jobs"
	run_cmd "$DPUSIM" run "$E2E_TMP/own.yaml" --jobs $jobs --trace "$E2E_TMP/o$jobs/o.json"
	expect_rc 0 "variants with hardware of their own, --jobs $jobs"
	there=$(cd "$E2E_TMP/o$jobs" && ls | tr '\n' ' ')
	if [ "$there" = "o.four.json o.tcp.json o.two.json " ]; then ok "one trace per variant, each named after it (--jobs $jobs)"
	else not_ok "--jobs $jobs wrote: $there"; fi
done

finish
