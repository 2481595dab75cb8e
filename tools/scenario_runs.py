"""Running scenarios built as dicts through dpusim, for the scripts that
hold its answers to physical properties: tests/e2e/metamorphic.py (fixed
shapes) and tools/fuzz-physics (random ones). One place for what both need:
the memoised run, an iteration time from a report, a scenario changed at
one key, the reference adapter and switch, and the tolerance for max-min
sharing (REL_SHARED, whose measurement metamorphic.py gives)."""
import copy
import json
import os
import subprocess

import yaml

# "Never slower" for a hardware change holds within this (metamorphic.py).
REL_SHARED = 5e-4
CX7 = {"profile": "ConnectX-7-NDR", "rdma_latency": "0.6us"}
QM9700 = {"profile": "QM9700-NDR", "latency": "130ns"}


class Runs:
    """dpusim run --json of scenario dicts, each written once as
    DIR/PREFIXn.yaml and run once (memoised on its text)."""

    def __init__(self, dpusim, tmpdir, prefix="m", timeout=None):
        self.dpusim, self.tmpdir, self.prefix, self.timeout = dpusim, tmpdir, prefix, timeout
        self.reports, self.paths = {}, {}

    def run(self, scn):
        """scn's report, or {"error": why} when dpusim refused or failed it."""
        text = yaml.safe_dump(scn, sort_keys=False)
        if text in self.reports:
            return self.reports[text]
        path = os.path.join(self.tmpdir, "%s%d.yaml" % (self.prefix, len(self.reports)))
        with open(path, "w") as f:
            f.write(text)
        try:
            p = subprocess.run([self.dpusim, "run", path, "--json", "--replications", "1"],
                               capture_output=True, text=True, timeout=self.timeout)
            if p.returncode != 0:
                rep = {"error": "exit %d: %s" % (p.returncode, p.stderr.strip()[:300])}
            else:
                rep = json.loads(p.stdout)
        except subprocess.TimeoutExpired:
            rep = {"error": "over %g s" % self.timeout}
        self.reports[text], self.paths[text] = rep, path
        return rep

    def path(self, scn):
        """The file scn was run from (after run(scn))."""
        return self.paths[yaml.safe_dump(scn, sort_keys=False)]


def iteration(rep, variant, stat="mean"):
    for v in rep.get("variants", []):
        if v["name"] == variant:
            return v["metrics"]["iteration_s"][stat]
    return None


def changed(scn, path, value):
    """A copy of scn with the key at path (a list of keys) set to value."""
    s = copy.deepcopy(scn)
    node = s
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    return s
