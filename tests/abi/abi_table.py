#!/usr/bin/python3
"""The Landlock ABI table of README.md and SECURITY.md, from the tests (issue 32).

    abi_table.py SOURCE BUILD [--write]

For each Landlock ABI from 1 to 7, runs tests/abi/probe.py under
`credfence run`, as is and without a user namespace (CF_TEST_NO_USERNS=1:
no read-only mounts), in a fake home (a fake key with a marker) beside outside
servers that hand that key to whoever asks: an abstract stream socket, an
abstract and a pathname datagram socket, a loopback TCP listener, and a
process to signal. An ABI below the kernel's is had with the test build's
switch (CF_TEST_LANDLOCK_ABI, meson -Dtest_abi_switch=true); one above it
can not be had on this kernel and is left unchecked (the VM runs Debian
12's 6.1 for the real ABI 2). Each result is worded by the mechanism that
gave it (EACCES from a file call: Landlock; EROFS: the read-only mounts of
the fenced tree; EACCES from a connect: the supervisor; ECONNREFUSED from
a datagram to an outside name: the tree's own network namespace).

TAP: one test per ABI, which fails when the tables between the markers
"<!-- abi-table -->" and "<!-- /abi-table -->" in README.md and
SECURITY.md differ from what was found in that ABI's column, or when a
secret's marker reached the fenced command. A column that can not be run
is skipped with its reason (under CI=true it fails). --write rewrites the
tables (every column must have run)."""
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading

ABIS = range(1, 8)
BEGIN, END = "<!-- abi-table -->", "<!-- /abi-table -->"
DOCS = ("README.md", "SECURITY.md")

# (id, what the fenced command does). The ids are probe.py's.
ROWS = (
    ("read", "read a secret (`~/.ssh/id_ed25519`)"),
    ("write", "create a file outside the writable locations (`~/new.txt`)"),
    ("truncate", "`truncate()` a file outside the writable locations (`~/.bashrc`)"),
    ("hooks", "write `.git/hooks/pre-commit` in the workspace"),
    ("chmod", "`chmod` a file outside the writable locations"),
    ("rename", "rename a file across directories of the workspace"),
    ("link", "hard-link a secret into the workspace"),
    ("abstract_out", "connect to an abstract socket bound outside"),
    ("abstract_dgram_out", "`sendto()` an abstract datagram socket bound outside"),
    ("path_dgram_out", "`sendto()` a pathname datagram socket bound outside"),
    ("abstract_in", "an abstract stream server made inside, reached inside"),
    ("abstract_dgram_in", "an abstract datagram server made inside, reached inside"),
    ("path_in", "a Unix socket server made in the workspace, reached inside"),
    ("tcp", "connect to a TCP server on 127.0.0.1"),
    ("signal", "signal a process outside the fence"),
)
WORKS = {"rename", "abstract_in", "abstract_dgram_in", "path_in"}
SOCKETS = {"abstract_out", "abstract_dgram_out", "path_dgram_out", "abstract_in",
           "abstract_dgram_in", "path_in"}


def cell(rid, res):
    """What was found, worded by the mechanism that gave it."""
    if res == "ok":
        if rid in WORKS:
            return "works"
        if rid == "path_dgram_out":
            return "open (known limit)"
        if rid in ("tcp", "signal"):
            return "open (not fenced)"
        return "**OPEN**"
    dgram = rid in ("abstract_dgram_out", "path_dgram_out", "abstract_dgram_in")
    if res == "EXDEV" and rid == "rename":
        return "refused: Landlock (EXDEV)"
    if res == "EACCES" and dgram:
        # The socket itself was not made: no namespace for the tree's own.
        return ("fails" if rid in WORKS else "refused") + ": supervisor (no datagram sockets)"
    if rid in WORKS:
        return "fails: " + res
    if res == "EROFS":
        return "refused: read-only mounts"
    if res == "EXDEV":
        return "refused: Landlock"
    if res == "EACCES":
        return "refused: supervisor" if rid in SOCKETS or rid == "chmod" else "refused: Landlock"
    if res == "ECONNREFUSED" and rid == "abstract_dgram_out":
        return "refused: own network namespace"
    if res == "EPERM" and rid in SOCKETS:
        return "refused: Landlock scope"
    return "fails: " + res


def table(cols):
    lines = ["| what a command under `credfence run` does | " +
             " | ".join("ABI %d" % a for a in ABIS) + " |",
             "|---|" + "---|" * len(ABIS)]
    for rid, what in ROWS:
        lines.append("| %s | %s |" % (what, " | ".join(cols.get(a, {}).get(rid, "?") for a in ABIS)))
    return "\n".join(lines)


def doc_table(text):
    """The cells of the table between the markers: {abi: {rid: cell}}, or None."""
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    if not m or not m.group(1).strip():
        return None
    rows = [l for l in m.group(1).splitlines() if l.startswith("|")][2:]
    by_what = {what: rid for rid, what in ROWS}
    cols = {a: {} for a in ABIS}
    for l in rows:
        parts = [p.strip() for p in l.strip().strip("|").split("|")]
        rid = by_what.get(parts[0])
        if rid is None or len(parts) != 1 + len(ABIS):
            continue
        for a, c in zip(ABIS, parts[1:]):
            cols[a][rid] = c
    return cols


def fixture_root():
    if os.environ.get("CREDFENCE_TEST_ROOT"):
        return os.environ["CREDFENCE_TEST_ROOT"]
    shared = "/var/lib/credfence-tests"
    if os.geteuid() == 0:
        os.makedirs(shared, exist_ok=True)
        os.chmod(shared, 0o1777)
    mine = os.path.join(shared, "uid-%d" % os.geteuid())
    try:
        os.makedirs(mine, exist_ok=True)
        return mine
    except OSError:
        run = os.environ.get("XDG_RUNTIME_DIR")
        if not run:
            return None
        mine = os.path.join(run, "credfence-tests")
        os.makedirs(mine, exist_ok=True)
        return mine


def install_machinery(bin_, build, root):
    """credfence and its shims copied to ROOT/bin and ROOT/lib, the installed
    layout, as tests/lib/fixture.c does: credfence refuses to fence with a
    binary that lies in a writable location, and the checkout may lie in
    /tmp (CI clones where it likes). Returns the copy's path."""
    mach = tempfile.mkdtemp(prefix="abi-bin-", dir=root)
    os.chmod(mach, 0o755)
    for d in ("bin", "lib"):
        os.makedirs(os.path.join(mach, d))
    shutil.copy(bin_, os.path.join(mach, "bin", "credfence"))
    for lib in ("libcredfence.so", "libcredfence-fenced.so", "libcredfence-judge.so"):
        p = os.path.join(build, "shim", lib)
        if os.path.exists(p):
            shutil.copy(p, os.path.join(mach, "lib", lib))
    return mach


class Outside:
    """The servers outside every fence: each hands the key to whoever asks."""

    def __init__(self, key, tmp):
        self.key = key
        tag = secrets.token_hex(6)
        self.abs, self.dgram = "cf-abi-out-" + tag, "cf-abi-outd-" + tag
        self.path_dgram = os.path.join(tmp, "outd.sock")
        self.stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.stream.bind("\0" + self.abs)
        self.stream.listen(8)
        self.d1 = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.d1.bind("\0" + self.dgram)
        self.d2 = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.d2.bind(self.path_dgram)
        os.chmod(self.path_dgram, 0o777)
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(8)
        self.port = self.tcp.getsockname()[1]
        for fn in (self.serve_stream, self.serve_tcp):
            threading.Thread(target=fn, daemon=True).start()
        for s in (self.d1, self.d2):
            threading.Thread(target=self.serve_dgram, args=(s,), daemon=True).start()

    def serve_stream(self):
        while True:
            c, _ = self.stream.accept()
            c.settimeout(5)
            try:
                c.recv(100)
                c.sendall(self.key)
            except OSError:
                pass
            c.close()

    def serve_tcp(self):
        while True:
            c, _ = self.tcp.accept()
            c.close()

    def serve_dgram(self, s):
        while True:
            _, peer = s.recvfrom(100)
            try:
                s.sendto(self.key, peer)
            except OSError:
                pass


def fake_home(base, marker):
    home, ws = os.path.join(base, "home"), os.path.join(base, "ws")
    os.makedirs(os.path.join(home, ".ssh"), mode=0o700)
    with open(os.path.join(home, ".ssh", "id_ed25519"), "w") as f:
        f.write("FAKE KEY %s\n" % marker)
    with open(os.path.join(home, ".bashrc"), "w") as f:
        f.write("# not a secret\n")
    os.makedirs(ws)
    subprocess.run(["git", "init", "-q", ws], check=True)
    os.makedirs(os.path.join(ws, ".git", "hooks"), exist_ok=True)
    return home, ws


def abi_of(bin_, home, ws, env):
    out = subprocess.run([bin_, "status", "--home", home, "--workspace", ws], env=env,
                         capture_output=True, text=True).stdout
    m = re.search(r"abi=(\d+)", out)
    return int(m.group(1)) if m else 0


def column(bin_, probe, root, out, abi, real):
    """Run the probe at ABI, as is and with the read-only mounts off (no user
    namespace: CF_TEST_NO_USERNS=1): ({rid: cell}, leak) or (None, reason).
    A cell whose two results differ says both."""
    a, leak = column_once(bin_, probe, root, out, abi, real, False)
    if a is None:
        return a, leak
    b, leak2 = column_once(bin_, probe, root, out, abi, real, True)
    if b is None:
        return b, leak2
    def both(x, y):
        if x == y:
            return x
        return "%s; no user namespace: %s" % (x, y[len("refused: "):] if y.startswith("refused: ") else y)
    return {rid: both(a[rid], b[rid]) for rid in a}, leak or leak2


def column_once(bin_, probe, root, out, abi, real, no_userns):
    base = tempfile.mkdtemp(prefix="abi-%d-" % abi, dir=root)
    try:
        marker = "CFMARK-%s" % secrets.token_hex(6)
        out.key = ("FAKE KEY %s\n" % marker).encode()
        home, ws = fake_home(base, marker)
        env = {k: v for k, v in os.environ.items() if k not in ("CF_TEST_LANDLOCK_ABI", "HOME")}
        env["HOME"] = home
        if abi < real:
            env["CF_TEST_LANDLOCK_ABI"] = str(abi)
        if no_userns:
            env["CF_TEST_NO_USERNS"] = "1"
        got = abi_of(bin_, home, ws, env)
        if got != abi:
            return None, ("credfence reports ABI %d with CF_TEST_LANDLOCK_ABI=%d: the build has no "
                          "ABI switch (meson -Dtest_abi_switch=true)" % (got, abi))
        target = subprocess.Popen(["sleep", "60"])
        r = subprocess.run([bin_, "run", "--home", home, "--workspace", ws, "--",
                            "/usr/bin/python3", probe, home, ws, out.abs, out.dgram,
                            out.path_dgram, str(out.port), str(target.pid)],
                           env=env, cwd=ws, capture_output=True, text=True, timeout=300)
        target.kill()
        target.wait()
        res = dict(re.findall(r"^ROW (\S+) (\S+)$", r.stdout, re.M))
        missing = [rid for rid, _ in ROWS if rid not in res]
        if missing:
            return None, "the probe gave no result for %s (exit %d): %s %s" % (
                ", ".join(missing), r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        return {rid: cell(rid, res[rid]) for rid, _ in ROWS}, marker in r.stdout + r.stderr
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    write = "--write" in sys.argv[1:]
    if len(args) != 2:
        print("usage: abi_table.py SOURCE BUILD [--write]", file=sys.stderr)
        return 2
    src, build = (os.path.abspath(a) for a in args)
    bin_ = os.environ.get("CREDFENCE_BIN") or os.path.join(build, "cli", "credfence")
    probe = os.path.join(src, "tests", "abi", "probe.py")
    ci = os.environ.get("CI") == "true"
    print("1..%d" % len(ABIS))
    root = fixture_root()
    if not root:
        for a in ABIS:
            print("%s %d - ABI %d # SKIP no fixture root" % ("not ok" if ci else "ok", a, a))
        return 1 if ci else 0
    tmp = tempfile.mkdtemp(prefix="cf-abi-", dir="/tmp")
    os.chmod(tmp, 0o755)
    mach = install_machinery(bin_, build, root)
    bin_ = os.path.join(mach, "bin", "credfence")
    try:
        out = Outside(b"", tmp)
        probe_home = tempfile.mkdtemp(prefix="abi-real-", dir=root)
        h, w = fake_home(probe_home, "none")
        env = {k: v for k, v in os.environ.items() if k != "CF_TEST_LANDLOCK_ABI"}
        real = abi_of(bin_, h, w, env)
        shutil.rmtree(probe_home, ignore_errors=True)
        docs = {d: doc_table(open(os.path.join(src, d)).read()) for d in DOCS}
        found, bad = {}, 0
        for a in ABIS:
            if a > real:
                why = "this kernel has Landlock ABI %d: ABI %d is not there to run" % (real, a)
                print("ok %d - ABI %d # SKIP %s" % (a, a, why))
                continue
            col, leak = column(bin_, probe, root, out, a, real)
            if col is None:
                print("%s %d - ABI %d # SKIP %s" % ("not ok" if ci else "ok", a, a, leak))
                bad += ci
                continue
            found[a] = col
            diffs = []
            for d, cols in docs.items():
                if cols is None:
                    diffs.append("%s has no table between %s and %s" % (d, BEGIN, END))
                    continue
                for rid, what in ROWS:
                    if cols[a].get(rid) != col[rid]:
                        diffs.append("%s, %s: the table says %r, the test found %r" % (
                            d, what, cols[a].get(rid), col[rid]))
            if leak:
                diffs.append("a secret's marker reached the fenced command")
            if diffs and not write:
                print("not ok %d - ABI %d" % (a, a))
                for l in diffs:
                    print("# " + l)
                bad += 1
            else:
                print("ok %d - ABI %d: the tables hold what the tests found" % (a, a))
        if write:
            if sorted(found) != list(ABIS):
                print("# --write needs every ABI's column; found %s" % sorted(found))
                return 1
            text = table(found)
            for d in DOCS:
                p = os.path.join(src, d)
                t = open(p).read()
                new = re.sub(re.escape(BEGIN) + r"\n.*?" + re.escape(END),
                             lambda m: BEGIN + "\n" + text + "\n" + END, t, flags=re.S)
                if new == t and BEGIN not in t:
                    print("# %s has no markers %s %s: add them where the table goes" % (d, BEGIN, END))
                    return 1
                open(p, "w").write(new)
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(mach, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
