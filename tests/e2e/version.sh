# The version stamped at build time (tools/version: git describe, else the
# release in VERSION) is what --version prints and what reports and database
# rows record: reports and databases all said 0.1.0 before.
. tests/e2e/lib.sh

release=$(cat VERSION)
run_cmd "$DPUSIM" --version
expect_rc 0 "dpusim --version"
V=$(sed -n 's/^dpusim //p' <<<"$OUT" | head -1)
if [ -e .git ]; then
	# A checkout: RELEASE-gHASH[-dirty] on an untagged commit, the tag else.
	if grep -Eq "^($release-g[0-9a-f]{7,}|[^ ]*\.[^ ]*)(-dirty)?\$" <<<"$V"; then
		ok "the version names the commit: $V"
	else not_ok "version '$V' is not git describe's"; fi
else
	if [ "$V" = "$release" ]; then ok "outside git the version is the release"
	else not_ok "version '$V', expected the release '$release'"; fi
fi

run_cmd "$BIN/dpusim-hw" --version
expect_out "^dpusim-hw $V\$" "dpusim-hw carries the same version"

run_cmd "$DPUSIM" run tests/data/train-small.yaml --json
expect_rc 0 "run --json"
expect_out "^  \"version\": \"$V\",\$" "the report records it"

run_cmd "$DPUSIM" run tests/data/train-small.yaml --db "$E2E_TMP/v.db"
expect_rc 0 "run --db"
row=$(sqlite3 "$E2E_TMP/v.db" "SELECT DISTINCT version FROM runs")
if [ "$row" = "$V" ]; then ok "the database row records it"
else not_ok "database rows say '$row', not '$V'"; fi

# tools/version itself: outside a git checkout the VERSION file, without
# it 'unknown'; a repository around the folder is not this one's.
mkdir -p "$E2E_TMP/tarball/tools"
cp tools/version "$E2E_TMP/tarball/tools/"
echo 9.8.7 >"$E2E_TMP/tarball/VERSION"
git init -q "$E2E_TMP" 2>/dev/null
git -C "$E2E_TMP" -c user.email=t@t -c user.name=t commit -q --allow-empty -m x 2>/dev/null
run_cmd "$E2E_TMP/tarball/tools/version"
expect_out '^9\.8\.7$' "a release tarball (even inside another repository) says its VERSION"
rm "$E2E_TMP/tarball/VERSION"
run_cmd "$E2E_TMP/tarball/tools/version"
expect_out '^unknown$' "no VERSION and no git: 'unknown'"

finish
