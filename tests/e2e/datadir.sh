# Data found beside the binary, from any folder: the source tree the binary
# sits in, $DPUSIM_DATADIR, and an installed PREFIX/share/dpusim (make
# install, then check, validate and profiles run from elsewhere).
. tests/e2e/lib.sh

ROOT=$(pwd)
case $DPUSIM in /*) ABS=$DPUSIM ;; *) ABS=$ROOT/$DPUSIM ;; esac
ELSE=$E2E_TMP/elsewhere
mkdir -p "$ELSE"
# Nothing from the caller's environment may point the binary at its data.
in_else() { env -u DPUSIM_DATADIR -u DPUSIM_PROFILE_DIR sh -c "cd '$ELSE' && $*"; }

run_cmd in_else "'$ABS' check '$ROOT/scenarios/demo.yaml'"
expect_rc 0 "bin/dpusim by absolute path from another folder finds the tree's profiles"
# validate's exit 1 is a finding (a row outside its tolerance), not a case
# it could not find: that is exit 2.
run_cmd in_else "'$ABS' validate --only megatron-1.7b"
if [ "$RC" -le 1 ]; then ok "validate from another folder finds the shipped cases (exit $RC)"
else not_ok "validate from another folder: exit $RC"; fi
expect_out '^megatron-1.7b +tflops_per_gpu' "and runs the case asked for"
run_cmd in_else "'$ABS' --help"
expect_out "^here: $ROOT\$" "--help says which data folder is in effect"

# $DPUSIM_DATADIR wins; a folder that is not there is one clear error.
run_cmd env DPUSIM_DATADIR="$E2E_TMP/none" "$DPUSIM" check scenarios/demo.yaml
expect_rc 2 "check with DPUSIM_DATADIR naming no folder"
expect_err "^no hardware profiles: '$E2E_TMP/none/profiles' is not a folder" "says where it looked, once"
if [ "$(grep -c . <<<"$ERR")" -eq 2 ]; then ok "one error and the closing line, no per-profile errors"
else not_ok "expected 2 lines on stderr"; echo "   stderr: ${ERR:0:600}"; fi

# One too long to be a path is no folder either: never the tree beside the
# binary in its place (which ran the user's scenario on other data).
LONGDIR=/$(printf 'x%.0s' $(seq 4200))
run_cmd env DPUSIM_DATADIR="$LONGDIR" "$DPUSIM" check scenarios/demo.yaml
expect_rc 2 "check with DPUSIM_DATADIR longer than PATH_MAX"
expect_err '^no hardware profiles: \$DPUSIM_DATADIR is longer than the path limit \(PATH_MAX\)$' "says which variable"
run_cmd env DPUSIM_DATADIR="$LONGDIR" "$DPUSIM" --version
expect_out '^data: none \(\$DPUSIM_DATADIR is longer' "--version says there is no data folder"
run_cmd env DPUSIM_PROFILE_DIR="$LONGDIR" "$DPUSIM" check scenarios/demo.yaml
expect_rc 2 "check with DPUSIM_PROFILE_DIR longer than PATH_MAX"
expect_err '^no hardware profiles: \$DPUSIM_PROFILE_DIR is longer' "names the profiles' variable, not ''"
for c in "profiles" "coll --ranks 8 --bytes 1MiB --link 400Gbps" "validate --only megatron-1.7b"; do
	run_cmd env DPUSIM_DATADIR="$LONGDIR" "$DPUSIM" $c
	expect_rc 2 "$c with DPUSIM_DATADIR too long"
	expect_err 'DPUSIM_DATADIR is longer than the path limit' "$c says why"
done
run_cmd "$DPUSIM" check scenarios/demo.yaml --profile-dir "$LONGDIR"
expect_err "is not a folder: File name too long" "--profile-dir too long: stat's reason"

# make install into a temporary prefix (-o all: install what is built, with
# no rebuild: under the sanitizer build BIN names its binaries).
DEST=$E2E_TMP/dest
unset MAKEFLAGS MFLAGS MAKELEVEL   # not the outer make check's jobs or overrides
run_cmd make -s -o all install DESTDIR="$DEST" PREFIX=/opt/dpusim BIN="$BIN"
expect_rc 0 "make install DESTDIR=... PREFIX=..."
INST=$DEST/opt/dpusim
for f in bin/dpusim bin/dpusim-hw share/dpusim/profiles/H100-SXM5.yaml \
	 share/dpusim/validation/cases.yaml share/dpusim/validation/megatron-1.7b.yaml \
	 share/dpusim/scenarios/demo.yaml share/dpusim/scenarios/effects/host-tcp-200g.yaml; do
	if [ -f "$INST/$f" ]; then ok "installed $f"; else not_ok "make install left out $f"; fi
done
cp scenarios/demo.yaml "$ELSE/"
run_cmd in_else "'$INST/bin/dpusim' check demo.yaml"
expect_rc 0 "installed dpusim checks a scenario from another folder"
run_cmd in_else "'$INST/bin/dpusim' validate --only megatron-1.7b"
if [ "$RC" -le 1 ]; then ok "installed dpusim validates with the installed cases (exit $RC)"
else not_ok "installed dpusim validate: exit $RC"; fi
expect_out '^megatron-1.7b +tflops_per_gpu' "the installed case ran"
run_cmd in_else "'$INST/bin/dpusim' profiles"
expect_rc 0 "installed dpusim lists its profiles"
expect_out '^H100-SXM5 ' "the installed profiles"
run_cmd in_else "'$INST/bin/dpusim' --help"
expect_out "^here: $INST/share/dpusim\$" "the installed data folder is the one in effect"
run_cmd in_else "'$INST/bin/dpusim' check '$INST/share/dpusim/scenarios/effects/host-tcp-200g.yaml'"
expect_rc 0 "an installed scenario's extends: resolve"

# The same binary told to use the source tree instead.
run_cmd env DPUSIM_DATADIR="$ROOT" "$INST/bin/dpusim" --help
expect_out "^here: $ROOT\$" "DPUSIM_DATADIR overrides the installed folder"

finish
