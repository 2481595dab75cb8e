# The README's commands, as written: every ```sh block of README.md, then the
# blocks of docs/*.md marked with a `<!-- readme-test -->` line just before
# them, run in order in one shell in a fresh clone of this repository (its
# committed state), with this build's binaries first on PATH so nothing is
# rebuilt. A block marked `<!-- readme-test: skip: WHY -->` is not run (the
# build commands: make check runs this very test). Any command that exits
# non-zero fails the test, and the ones after it are not run.
#
# Hardware steps run as they do on any machine without RDMA devices or GPUs:
# dpusim-hw over TCP on loopback, compute on the CPU. Plain build only (about
# 30 s of wall time on 2 quiet cores): the sanitizer build runs the same
# commands' code through the other e2e scripts, and its MPI ranks would push
# this test past a minute.
. tests/e2e/lib.sh

case $BIN in
*asan*)
	echo "# skip: the README's commands run in the plain build only (see the top of $0)"
	exit 0 ;;
esac
case $BIN in /*) BINABS=$BIN ;; *) BINABS=$PWD/$BIN ;; esac

CLONE=$E2E_TMP/clone
if git clone -q "$PWD" "$CLONE"; then ok "fresh clone of $(git -C "$CLONE" log -1 --format=%h)"
else not_ok "git clone of $PWD"; finish; exit; fi

# The blocks, one command a line ("FILE:LINE<TAB>command"); a line ending in
# a backslash continues on the next; comments and blank lines dropped.
python3 - "$CLONE" >"$E2E_TMP/steps" <<'PY'
import glob, os, re, sys
root = sys.argv[1]
def blocks(path, marked_only):
    lines = open(os.path.join(root, path)).read().split("\n")
    i, mark = 0, None
    while i < len(lines):
        m = re.match(r"\s*<!--\s*readme-test(:\s*skip:?\s*(.*?))?\s*-->\s*$", lines[i])
        if m:
            mark = ("skip", m.group(2) or "") if m.group(1) else ("run", "")
            i += 1
            continue
        if lines[i].strip() == "```sh":
            start, i = i + 1, i + 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append((i + 1, lines[i]))
                i += 1
            if mark and mark[0] == "skip":
                print("%s:%d\t#skip %s" % (path, start, mark[1]))
            elif mark or not marked_only:
                cmd, at = "", None
                for n, l in body:
                    at = at or n
                    if l.rstrip().endswith("\\"):
                        cmd += l.rstrip()[:-1] + " "
                        continue
                    cmd += l
                    if cmd.strip() and not cmd.strip().startswith("#"):
                        print("%s:%d\t%s" % (path, at, cmd.strip()))
                    cmd, at = "", None
        elif lines[i].strip():
            mark = None
        i += 1
blocks("README.md", False)
for d in sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
    blocks(os.path.relpath(d, root), True)
PY
n=$(grep -vc $'\t#skip' "$E2E_TMP/steps")
if [ "$n" -ge 10 ]; then ok "$n commands found in README.md and marked docs blocks"
else not_ok "only $n commands found"; cat "$E2E_TMP/steps"; fi

# One shell for all of them, so an export in one block holds for the next.
# Hardware steps on loopback: one machine, no RDMA device needed.
cd "$CLONE" || exit 1
export PATH="$BINABS:$PATH" DPUSIM_HW_TCP_ADDR=127.0.0.1
unset DPUSIM_DATADIR DPUSIM_PROFILE_DIR
LOG=$E2E_TMP/log
while IFS=$'\t' read -r where cmd; do
	case $cmd in "#skip "*) echo "# skip $where: ${cmd#\#skip }"; continue ;; esac
	echo "+ $cmd" >>"$LOG"
	start=$SECONDS
	if { timeout 120 bash -c 'eval "$1"; s=$?; export -p >"$2"; exit $s' _ "$cmd" "$E2E_TMP/env"; } >>"$LOG" 2>&1 </dev/null; then
		ok "$where: $cmd ($((SECONDS - start)) s)"
		# Keep what the command exported for the next ones.
		. "$E2E_TMP/env" 2>/dev/null
	else
		rc=$?
		not_ok "$where: $cmd: exit $rc"
		tail -n 15 "$LOG" | sed 's/^/   /'
		break
	fi
done <"$E2E_TMP/steps"

finish
