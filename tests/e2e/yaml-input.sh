# YAML the loader reads outside tests/bad/ (which holds scenario and extends
# cases): profiles given with --profile and profiles in a --profile-dir go
# through the same parser, so anchors on keys, aliases and merge keys work
# there, and invalid UTF-8 is refused where it is (file:line:column, exit 2)
# instead of cutting the file short.
. tests/e2e/lib.sh

dir=$E2E_TMP/profiles
mkdir -p "$dir"
cp models/profiles/*.yaml "$dir/"
# The NIC profile rewritten with an anchor on a key (once freed with the
# key: exit 139), an alias to it, and a merge key taking another field's
# source.
cx7=$dir/ConnectX-7-NDR.yaml
sed -i -e 's/^  ports: /  \&k ports: /' \
	-e 's/^  pcie_gen:   {/  pcie_gen: \&gen {/' \
	-e 's/^  pcie_lanes: { value: 16, source: "same manuals: x16 edge connector" }/  pcie_lanes: { <<: *gen, value: 16 }/' \
	"$cx7"
grep -q '&k ports:' "$cx7" && grep -q '<<: \*gen, value: 16' "$cx7" || not_ok "the profile rewrite did not apply"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile-dir "$dir"
expect_rc 0 "a profile folder whose NIC profile uses a key anchor and a merge key"
run_cmd "$DPUSIM" profiles ConnectX-7-NDR --profile-dir "$dir"
expect_out '^pcie_lanes +16$' "the merged field keeps its own value"
if grep -A2 '^pcie_lanes' <<<"$OUT" | grep -q "source: NVIDIA ConnectX-7 Cards for OCP Spec 3.0 User Manual"; then
	ok "the merged field takes the source it merges"
else not_ok "pcie_lanes lacks the merged source"; fi

printf 'kind: nic\nname: &n X\n&k summary: *n\nfields: *k\n' >"$E2E_TMP/key-anchor.yaml"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile "$E2E_TMP/key-anchor.yaml"
expect_rc 2 "--profile whose fields alias a key"
expect_err "^$E2E_TMP/key-anchor.yaml:4:9: 'fields' must be a mapping, not a value\$" "the alias of a key is the key's text, placed at the alias"

# Invalid UTF-8 that libfyaml once stopped at without an error.
printf '# \xed\xa0\x80\nkind: nic\n' >"$E2E_TMP/surrogate.yaml"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile "$E2E_TMP/surrogate.yaml"
expect_rc 2 "--profile holding a UTF-16 surrogate"
expect_err "^$E2E_TMP/surrogate.yaml:1:3: invalid UTF-8: a UTF-16 surrogate \\(byte 0xed at offset 2\\)\$" "--profile: the surrogate is located"
printf '# \xf4\x90\x80\x80 the rest was ignored\n' >>"$cx7"
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile-dir "$dir"
expect_rc 2 "a profile folder holding a code point above U+10FFFF"
expect_err "ConnectX-7-NDR.yaml:[0-9]+:3: invalid UTF-8: a code point above U\\+10FFFF" "profile folder: the bad byte is located"
finish
