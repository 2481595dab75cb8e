# Shipped scenarios: each passes `dpusim check` with a summary saying what it
# holds, each begins with a comment saying what question it answers, and
# `dpusim run --dump` prints YAML that parses, reloads, and dumps identically.
. tests/e2e/lib.sh

count=0
for f in scenarios/*.yaml; do
	count=$((count + 1))
	if head -1 "$f" | grep -q '^# Question: '; then ok "$f begins with its question"
	else not_ok "$f does not begin with a '# Question:' comment"; fi
	run_cmd "$DPUSIM" check "$f"
	expect_rc 0 "check $f"
	expect_out '^[a-z0-9-]+: [0-9]+ nodes x [0-9]+ .* = [0-9]+ GPUs.* Variants \([0-9]+\):.* Sweep: ' "$f summary: cluster, variants, sweep"
	run_cmd "$DPUSIM" run "$f" --dump
	expect_rc 0 "run --dump $f"
	printf '%s\n' "$OUT" >"$E2E_TMP/d1.yaml"
	if python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert isinstance(d, dict) and "cluster" in d and "variants" in d' "$E2E_TMP/d1.yaml" 2>"$E2E_TMP/py"; then
		ok "$f dump parses as YAML (PyYAML)"
	else
		not_ok "$f dump does not parse: $(cat "$E2E_TMP/py")"
	fi
	run_cmd "$DPUSIM" run "$E2E_TMP/d1.yaml" --dump
	expect_rc 0 "the dump of $f loads as a scenario"
	if [ "$OUT" = "$(cat "$E2E_TMP/d1.yaml")" ]; then ok "$f: the dump of the dump is identical"
	else not_ok "$f: the dump of the dump differs"; diff <(echo "$OUT") "$E2E_TMP/d1.yaml" | head; fi
done
if [ "$count" -ge 6 ]; then ok "$count scenarios shipped"; else not_ok "only $count scenarios"; fi

# A collective's ranks not given follow the GPUs: its dump must not pin them,
# or the dump of a sweep over cluster.nodes fails at its smaller points.
run_cmd "$DPUSIM" run tests/data/sweep-small.yaml --dump
printf '%s\n' "$OUT" >"$E2E_TMP/sweep-dump.yaml"
expect_out '^    # ranks: 16 \(all the GPUs the workload gets\)$' "dump: ranks not given stay unpinned"
run_cmd "$DPUSIM" check "$E2E_TMP/sweep-dump.yaml"
expect_rc 0 "the dump of a sweep over cluster.nodes with ranks not given loads"

run_cmd "$DPUSIM" check scenarios/demo.yaml
expect_out '^demo: 4 nodes x 8 H100-SXM5 = 32 GPUs, Xeon-8480C host CPUs, 8 x ConnectX-7-NDR per node; 1-tier single-switch of QM9700-NDR at 400 Gb/s per link\. ' "demo summary: cluster"
expect_out 'Job: training llama2-7b \(bf16\) on 32 GPUs, tp 8 x pp 1 x dp 4, global batch 64 \(micro 2, 8 microbatches\)' "demo summary: job with dp resolved"
expect_out 'Variants \(2\): baseline \(network host-tcp, storage host, crypto none, vswitch none\); rdma-gdr \(network rdma-gdr' "demo summary: variants"
expect_out 'Sweep: none \(1 point\)\. Seed 42, 3 replications\.$' "demo summary: sweep, seed"

run_cmd "$DPUSIM" check scenarios/capacity.yaml
expect_out 'Sweep: 12 points \(cartesian of cluster\.nodes \[4\], cluster\.fabric\.link_rate \[3\]\)' "capacity: 4 x 3 sweep points"
run_cmd "$DPUSIM" check scenarios/allreduce-sweep.yaml
expect_out 'collective benchmark: allreduce \(ring\) over 128 ranks, 11 sizes from 1KiB to 1GiB' "allreduce-sweep: size sweep"
run_cmd "$DPUSIM" check scenarios/multi-tenant-encrypted.yaml
expect_out "Job 'tenant-a-llama70b' on 16 nodes: training llama2-70b" "multi-tenant: jobs listed"

# Dump content: SI units, profiles merged, overrides applied.
run_cmd "$DPUSIM" run scenarios/gpt3-175b-1024xh100.yaml --dump
expect_out '^    port_rate: 5e\+10B/s$' "dump: the NIC's 400Gbps in B/s"
expect_out '^        snap_bw: 5e\+10B/s$' "dump: a variant's override of its own DPU's field"
expect_out '^    peak_bf16_flops: 9\.895e\+14FLOP/s$' "dump: the GPU profile merged"
expect_out '^  gpu_price: 0\.000694444444444444[0-9]*USD/s$' "dump: 2.5USD/h in USD/s"
expect_out '^    dp: 8$' "dump: explicit dp kept"

# Overrides from the command line: a profile file replacing a shipped one.
sed -e 's/^name: H100-SXM5/name: H100-SXM5/' -e 's/hbm_bw: *{ value: 3.35TB\/s/hbm_bw: { value: 2TB\/s/' \
	models/profiles/H100-SXM5.yaml >"$E2E_TMP/h100.yaml"
run_cmd "$DPUSIM" run scenarios/demo.yaml --dump --profile "$E2E_TMP/h100.yaml"
expect_rc 0 "run --dump --profile FILE"
expect_out '^    hbm_bw: 2e\+12B/s$' "--profile FILE replaces the shipped profile"

# --profile-dir and $DPUSIM_PROFILE_DIR choose where names are looked up.
mkdir -p "$E2E_TMP/profiles"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile-dir "$E2E_TMP/profiles"
expect_rc 2 "check with an empty --profile-dir"
expect_err "^scenarios/demo.yaml:13:8: unknown gpu profile 'H100-SXM5' \\(no $E2E_TMP/profiles/H100-SXM5.yaml\\)\$" "profiles are looked up in --profile-dir"
cp models/profiles/*.yaml "$E2E_TMP/profiles/"
run_cmd env DPUSIM_PROFILE_DIR="$E2E_TMP/profiles" "$DPUSIM" check scenarios/demo.yaml
expect_rc 0 "check with DPUSIM_PROFILE_DIR"

# profiles: list and show.
run_cmd "$DPUSIM" profiles
expect_rc 0 "profiles lists"
for p in models/profiles/*.yaml; do
	name=$(basename "$p" .yaml)
	if grep -q "^$name " <<<"$OUT"; then ok "profiles lists $name"; else not_ok "profiles does not list $name"; fi
done
run_cmd "$DPUSIM" profiles H100-SXM5
expect_rc 0 "profiles H100-SXM5"
expect_out '^H100-SXM5 \(gpu\): ' "profile header"
expect_out '^peak_bf16_flops +9\.895e\+14FLOP/s$' "profile value in SI"
expect_out '^    source: ' "profile values cite sources"
expect_out '^    missing: ' "profile absent values say why"
run_cmd "$DPUSIM" profiles H100
expect_rc 2 "unknown profile"
expect_err "no profile 'H100' in 'models/profiles' \(did you mean 'H100-SXM5'\?\)" "unknown profile suggests"

# run --dump runs nothing: it prints only the resolved scenario.
run_cmd "$DPUSIM" run scenarios/demo.yaml --dump
expect_rc 0 "run --dump"
expect_out '^# resolved scenario: profiles merged, every value in SI units$' "run --dump prints the resolved scenario"
if grep -q '"schema"' <<<"$OUT"; then not_ok "run --dump printed a report"; else ok "run --dump prints no report"; fi
run_cmd "$DPUSIM" check --help
expect_rc 0 "check --help"
expect_out 'FILE:LINE:COLUMN' "check --help documents the error format"

finish
