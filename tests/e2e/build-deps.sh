# `make` before `make deps`: one message naming the missing Debian packages
# and how to get them, before any compiler runs; and `make deps` never runs
# mpicc while parsing the Makefile (on a machine without Open MPI it printed
# "mpicc: not found" four times). Fake dpkg/mpicc/pkg-config on PATH stand in
# for a fresh machine; nothing is installed or compiled.
. tests/e2e/lib.sh

FAKE=$E2E_TMP/fake
mkdir -p "$FAKE"
# make inside make check must not join the outer make's jobs.
unset MAKEFLAGS MFLAGS MAKELEVEL

# dpkg: Open MPI's headers and liburing missing, everything else present.
cat >"$FAKE/dpkg" <<'EOF'
#!/bin/sh
case "$2" in libopenmpi-dev|liburing-dev) exit 1 ;; esac
exit 0
EOF
# mpicc absent (as before `make deps`), every call recorded.
cat >"$FAKE/mpicc" <<EOF
#!/bin/sh
echo "mpicc \$*" >>"$E2E_TMP/mpicc.log"
echo "mpicc: not found" >&2
exit 127
EOF
# pkg-config knows no ompi (no libopenmpi-dev); the rest as installed.
cat >"$FAKE/pkg-config" <<'EOF'
#!/bin/sh
for a; do [ "$a" = ompi ] && exit 1; done
exec /usr/bin/pkg-config "$@"
EOF
chmod +x "$FAKE"/*

run_cmd env PATH="$FAKE:$PATH" make BUILD="$E2E_TMP/build" BIN="$E2E_TMP/bin"
if [ "$RC" -ne 0 ]; then ok "make with packages missing fails (exit $RC)"
else not_ok "make with packages missing succeeded"; fi
expect_err '^  libopenmpi-dev liburing-dev$' "names the missing packages"
expect_err "make deps" "says how to get them"
expect_err "sudo apt-get install libopenmpi-dev liburing-dev" "and the apt-get line"
n=$(grep -c "packages are missing" <<<"$ERR")
if [ "$n" -eq 1 ]; then ok "said once"; else not_ok "said $n times"; fi
if grep -q "mpi.h\|error:" <<<"$ERR"; then not_ok "a compiler ran: ${ERR:0:400}"
else ok "no compiler error"; fi
if [ -z "$(find "$E2E_TMP/build" -name '*.o' 2>/dev/null)" ]; then ok "nothing compiled"
else not_ok "objects were compiled before the check"; fi

# make deps: every package present (the fake dpkg says so), mpicc absent.
printf '#!/bin/sh\nexit 0\n' >"$FAKE/dpkg"
rm -f "$E2E_TMP/mpicc.log"
run_cmd env PATH="$FAKE:$PATH" make deps BUILD="$E2E_TMP/build" BIN="$E2E_TMP/bin"
expect_rc 0 "make deps"
expect_out "^install-deps: all [0-9]+ packages present$" "make deps says what it found"
if grep -q "not found" <<<"$ERR$OUT"; then not_ok "make deps printed: ${ERR:0:300}"
else ok "make deps prints no 'mpicc: not found'"; fi
if [ -s "$E2E_TMP/mpicc.log" ]; then not_ok "make deps ran mpicc: $(cat "$E2E_TMP/mpicc.log")"
else ok "make deps does not run mpicc"; fi

# With the packages there the check passes silently (real dpkg).
run_cmd make "$E2E_TMP/build/.deps-ok" BUILD="$E2E_TMP/build" BIN="$E2E_TMP/bin"
expect_rc 0 "the check passes where the packages are installed"
if [ -z "$OUT$ERR" ]; then ok "and says nothing"; else not_ok "it printed: ${OUT:0:200}${ERR:0:200}"; fi

finish
