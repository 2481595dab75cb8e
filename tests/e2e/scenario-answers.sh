# The answers a shipped scenario's opening comment quotes are the ones
# dpusim gives now. A line
#   # answer: METRIC VARIANT V1 / V2 / ...
# gives METRIC (a report metric such as iteration_s or tokens_per_usd, or
# speedup: the variant's over the first) of VARIANT at each point of the
# scenario's sweep in its order (one point: one value), each to the digits
# written (a k or M suffix: thousands, millions). The scenario is swept
# into a fresh database and every value held to it: a model change that
# moves an answer fails here until the comment (and the prose around it,
# which reads off these lines) is brought up to date. Scenarios without
# answer lines are not run.
. tests/e2e/lib.sh

cat >"$E2E_TMP/answers.py" <<'EOF'
import re, sqlite3, sys, yaml

ANSWER = re.compile(r'^#\s*answer:\s+(\S+)\s+(\S+)\s+(.+?)\s*$')
SCALE = {'': 1.0, 'k': 1e3, 'M': 1e6}


def quoted(text):
    """The value a quoted figure stands for and half a unit of its last digit."""
    m = re.fullmatch(r'([0-9]+(?:\.([0-9]+))?)([kM]?)', text.strip())
    if not m:
        return None
    digits = len(m.group(2) or '')
    scale = SCALE[m.group(3)]
    return float(m.group(1)) * scale, 0.5 * 10.0 ** -digits * scale


def points(path):
    """The sweep's points as the database names them, in the sweep's order."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    sweep = doc.get('sweep') or {}
    axes = [(k, v) for k, v in sweep.items() if isinstance(v, list)]
    if not axes:
        return [None]
    if len(axes) != 1:
        sys.exit('answer lines need a sweep of one axis (%s has %d)' % (path, len(axes)))
    key, values = axes[0]
    return ['%s=%s' % (key, v) for v in values]


def value(db, point, variant, metric):
    where = 'r.point IS NULL' if point is None else 'r.point = ?'
    args = ([] if point is None else [point]) + [variant]
    if metric == 'speedup':
        row = db.execute('SELECT v.speedup FROM runs r JOIN variants v ON v.run_id = r.id '
                         'WHERE ' + where + ' AND v.name = ?', args).fetchone()
    else:
        row = db.execute('SELECT m.value FROM runs r JOIN variants v ON v.run_id = r.id '
                         'JOIN metrics m ON m.variant_id = v.id WHERE ' + where +
                         ' AND v.name = ? AND m.name = ?', args + [metric]).fetchone()
    return None if row is None or row[0] is None else row[0]


scenario, dbpath = sys.argv[1], sys.argv[2]
pts = points(scenario)
db = sqlite3.connect(dbpath)
lines = [ANSWER.match(l) for l in open(scenario)]
for m in filter(None, lines):
    metric, variant, figures = m.groups()
    figs = [f.strip() for f in figures.split('/')]
    what = '%s: %s %s' % (scenario, metric, variant)
    if len(figs) != len(pts):
        print('not ok - %s: %d figures for %d sweep points' % (what, len(figs), len(pts)))
        continue
    bad = []
    for point, fig in zip(pts, figs):
        q = quoted(fig)
        got = value(db, point, variant, metric)
        if q is None:
            bad.append('%s: %r is not a figure' % (point, fig))
        elif got is None:
            bad.append('%s: no such value in the sweep' % point)
        elif abs(got - q[0]) > q[1] * (1 + 1e-9):
            bad.append('%s: quoted %s, the sweep gives %.6g' % (point, fig, got))
    if bad:
        print('not ok - %s: %s' % (what, '; '.join(bad)))
    else:
        print('ok - %s: %s, as the sweep gives' % (what, ' / '.join(figs)))
EOF

found=0
for f in scenarios/*.yaml; do
	grep -q '^# *answer:' "$f" || continue
	found=$((found + 1))
	db="$E2E_TMP/$(basename "$f" .yaml).db"
	run_cmd "$DPUSIM" sweep "$f" --db "$db"
	expect_rc 0 "sweep $f"
	run_cmd python3 "$E2E_TMP/answers.py" "$f" "$db"
	if [ "$RC" -ne 0 ]; then not_ok "$f: answers not read: $ERR"; fi
	relay_checks "$OUT"
done
if [ "$found" -ge 1 ]; then ok "$found shipped scenario(s) quote answers"
else not_ok "no shipped scenario quotes answers (scenarios/nic-vs-dpu.yaml did)"; fi

# The checker itself: the first answer line with its first figure's last
# digit changed (so this holds whatever the figures are) must fail.
cat >"$E2E_TMP/off.py" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().split('\n')
for i, l in enumerate(lines):
    m = re.match(r'^(#\s*answer:\s+(\S+)\s+(\S+)\s+)([0-9.]*)([0-9])(.*)$', l)
    if m:
        d = str((int(m.group(5)) + 1) % 10)
        lines[i] = m.group(1) + m.group(4) + d + m.group(6)
        print(m.group(2), m.group(3), m.group(4) + d)
        break
open(sys.argv[2], 'w').write('\n'.join(lines))
EOF
python3 "$E2E_TMP/off.py" scenarios/nic-vs-dpu.yaml "$E2E_TMP/off.yaml" >"$E2E_TMP/what"
read -r metric variant fig <"$E2E_TMP/what"
if [ -n "${fig:-}" ] && [ -f "$E2E_TMP/nic-vs-dpu.db" ]; then
	run_cmd python3 "$E2E_TMP/answers.py" "$E2E_TMP/off.yaml" "$E2E_TMP/nic-vs-dpu.db"
	expect_out "^not ok - .*: $metric $variant: [^;]*quoted $fig, the sweep gives" \
		"a quoted figure one digit off is caught ($metric $variant $fig)"
else
	not_ok "the self-check found no answer line in scenarios/nic-vs-dpu.yaml to alter"
fi

finish
