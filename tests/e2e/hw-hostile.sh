# dpusim-hw in a hostile or broken environment (issue 17): a symlink planted
# where bench used to put its storage file.
. tests/e2e/lib.sh
HW=$BIN/dpusim-hw
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/e2e/hw-lsan.supp:print_suppressions=0}
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0
MPIRUN=(timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2)

# --- 9: the storage file is created afresh (O_EXCL) and never followed ------
mkdir "$E2E_TMP/store"
echo precious >"$E2E_TMP/victim"
# One rank without mpirun keeps its PID, so the old predictable name is known.
run_cmd bash -c 'ln -s "$1" "$2/dpusim-hw-storage.$$" && exec "$3" bench --quick --sizes 4K --dir "$2"' \
	sh "$E2E_TMP/victim" "$E2E_TMP/store" "$HW"
expect_rc 0 "bench with a symlink planted at its old storage file name"
expect_out '^  storage_read_bw ' "the storage benchmark ran"
if [ "$(cat "$E2E_TMP/victim")" = precious ]; then ok "the symlink's target is untouched"
else not_ok "bench wrote through a planted symlink"; fi
left=$(ls -A "$E2E_TMP/store")
if [ "$left" = "$(cd "$E2E_TMP/store" && ls -A dpusim-hw-storage.* 2>/dev/null)" ] &&
   [ "$(wc -w <<<"$left")" -eq 1 ] && [ -L "$E2E_TMP/store/$left" ]; then
	ok "only the planted symlink is left in the folder (bench removed its own file)"
else not_ok "folder after bench: $left"; fi
run_cmd "$HW" bench --quick --sizes 4K --dir "$E2E_TMP/no/such/dir"
expect_rc 2 "a missing storage folder fails the run"
expect_err "storage benchmark: cannot create a file in '$E2E_TMP/no/such/dir': No such file" "naming the folder"

finish
