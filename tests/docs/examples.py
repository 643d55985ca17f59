#!/usr/bin/python3
"""The docs match the code (issue 12): run the example commands of README.md,
docs/cli-reference.md and docs/cli-reference.ja.md on the docs fixture and
diff their output against the text shown there. TAP on stdout.

The examples read as the ordinary user cfdocs, home
/var/lib/credfence-docs/home, workspace /var/lib/credfence-docs/work, the
command installed in /usr/local. This test builds exactly that in a private
mount namespace (tmpfs over /var/lib/credfence-docs, /usr/local and /tmp), so
it depends neither on where the checkout is nor on what the machine holds,
and reads no real credential. It needs root (the namespace) and the user
cfdocs; else it skips with the reason.

Usage: examples.py SOURCE_DIR BUILD_DIR
"""
import os, re, subprocess, sys

DOCS = "/var/lib/credfence-docs"
HOME = DOCS + "/home"
WORK = DOCS + "/work"
USER = "cfdocs"

# Examples not run, with the reason (matched against the command text).
SKIP = {
    "git --version": "the version of git on this machine",
    "node": "needs node and an agent transcript",
    "python3 my_agent.py": "an agent's transcript, not one command",
    "python3 env_harness.py": "an agent's transcript, not one command",
    "cat my_agent": "shows a file of the example",
    "cat env_harness.py": "shows a file of the example",
    "cat ~/.config/envharness": "shows a file of the example",
    "read line <": "typed inside a self-mode shell",
    "env -u LD_PRELOAD": "typed inside a self-mode shell",
    "$OLDPWD": "typed inside a self-mode shell",
    "busybox": "busybox may not be installed",
    "/opt/cfdocs": "needs a directory outside the fixture",
    # IPC examples (main after 43c890c): they need servers the fixture does not start.
    "ask.py": "needs the example's key server on /tmp/deputy.sock",
    "tmux -S": "needs a tmux server outside the fence",
    "devserver.py": "needs the example's dev server",
    "ssh-add": "needs an ssh agent",
    "ssh -": "needs an ssh server on port 2222 and an agent",
    "ssh://root@127.0.0.1": "needs an ssh server on port 2222 and an agent "
                            "(tests/tools/test_git_ssh.c runs this recipe end to end)",
    "env -u HOME": "needs a user without a home in the password database (cfdocs has one)",
}
# Commands shown as the output of an agent (after a harness line), not run.
TRANSCRIPT_AFTER = ("credfence harness -- python3", "credfence harness -- node",
                    "python3 env_harness.py")


def tap_skip_all(why):
    """Skip with the reason; under CI=true a test that can not run fails."""
    if os.environ.get("CI") == "true":
        print("1..1\nnot ok 1 - the docs examples can not run: " + why)
        sys.exit(1)
    print("1..0 # SKIP " + why)
    sys.exit(0)


def examples(path):
    """(line number, command, expected output lines) of every '$ ' line in a
    fenced block."""
    out, block, cur, in_transcript = [], False, None, False
    for no, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if line.startswith("```"):
            if cur:
                out.append(cur)
            cur, block, in_transcript = None, not block, False
            continue
        if not block:
            continue
        if line.startswith("$ "):
            if cur:
                out.append(cur)
            cmd = line[2:]
            cur = None if in_transcript else (no, cmd, [])
            if cmd.startswith(TRANSCRIPT_AFTER):
                in_transcript = True
                cur = None
        elif cur:
            cur[2].append(line)
    return out


def normalise(text):
    text = re.sub(r"kernel=\S+", "kernel=RELEASE", text)
    text = re.sub(r"abi=\d+", "abi=N", text)
    text = re.sub(r'"kernel":"[^"]*"', '"kernel":"RELEASE"', text)
    text = re.sub(r'"abi":\d+', '"abi":N', text)
    text = re.sub(r'"pid":\d+', '"pid":N', text)
    # One rule an entry beside the path to a secret: /var/lib's entries differ by machine.
    text = re.sub(r"^rules:( +)\d+$", r"rules:\1N", text, flags=re.M)
    text = re.sub(r'"rules":\d+', '"rules":N', text)
    # The entries of / differ by machine (a CI checkout adds its own top-level directory).
    text = re.sub(r"too many entries under / \(\d+ > ", "too many entries under / (N > ", text)
    return text


ELIDED = re.compile(r"^\s*\[\.\.\. (\d+) more ")


ELIDED_REST = re.compile(r"^\s*\[\.\.\. .*\]$")


def line_matches(want, got):
    """'[...]' inside a line of the docs stands for any text."""
    if "[...]" not in want:
        return want == got
    return re.fullmatch(".*".join(re.escape(p) for p in want.split("[...]")), got) is not None


def same(expected, actual):
    """Compare line by line; an expected '[... N more ...]' line stands for N
    lines, a last '[... ...]' line without a number for the rest."""
    e, a, i, j = expected, actual, 0, 0
    while i < len(e):
        m = ELIDED.match(e[i])
        if m:
            j += int(m.group(1))
            i += 1
            continue
        if i == len(e) - 1 and ELIDED_REST.match(e[i]):
            return True
        if j >= len(a) or not line_matches(e[i], a[j]):
            return False
        i, j = i + 1, j + 1
    return j == len(a)


def fixture(binaries):
    for d in (DOCS, "/usr/local", "/tmp"):
        os.makedirs(d, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", d], check=True)
    os.chmod("/tmp", 0o1777)
    os.makedirs("/usr/local/bin")
    os.makedirs("/usr/local/lib")
    for path, data in binaries.items():
        with open(path, "wb") as f:
            f.write(data)
        os.chmod(path, 0o755)
    files = {
        ".ssh/id_ed25519": "FAKE-SSH-KEY-MARKER\n",
        ".aws/credentials": "[default]\naws_secret_access_key = FAKE-AWS-MARKER\n",
        "notes.txt": "hello\n",
    }
    for d in (".cache", ".npm", ".cargo/registry", ".cargo/git", ".config/autostart"):
        os.makedirs(os.path.join(HOME, d))
    os.makedirs(DOCS + "/home2")  # a second home, for the nested-fence example
    for rel, text in files.items():
        p = os.path.join(HOME, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    os.makedirs(WORK)
    os.chmod(HOME + "/.ssh", 0o700)
    uid, gid = int(subprocess.check_output(["id", "-u", USER])), int(subprocess.check_output(["id", "-g", USER]))
    for top in (HOME, WORK, DOCS + "/home2"):
        for root, dirs, names in os.walk(top):
            for n in [root] + [os.path.join(root, x) for x in dirs + names]:
                os.chown(n, uid, gid)
    return uid, gid


def run(cmd, uid, gid):
    env = {"HOME": HOME, "USER": USER, "LOGNAME": USER, "PATH": "/usr/local/bin:/usr/bin:/bin",
           "LANG": "C.UTF-8", "PWD": WORK, "SHELL": "/bin/bash"}
    p = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid, "--clear-groups",
                        "--", "/bin/bash", "-c", cmd], cwd=WORK, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    return p.stdout.decode("utf-8", "replace")


def main():
    src, build = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        tap_skip_all("needs root: the docs fixture is built in a private mount namespace")
    if subprocess.run(["id", USER], capture_output=True).returncode != 0:
        tap_skip_all("no user %s (useradd -M -d %s %s)" % (USER, HOME, USER))
    if not os.environ.get("CF_DOCS_NS"):
        os.environ["CF_DOCS_NS"] = "1"
        os.execvp("unshare", ["unshare", "-m", "--propagation", "private", sys.executable,
                              os.path.abspath(__file__), src, build])
    # Read all of the checkout first: the tmpfs over /tmp would hide one there.
    cases = []
    for doc in ("README.md", "docs/cli-reference.md", "docs/cli-reference.ja.md"):
        for no, cmd, want in examples(os.path.join(src, doc)):
            why = next((w for k, w in SKIP.items() if k in cmd), None)
            cases.append((doc, no, cmd, want, why))
    binaries = {}
    for path, built in (("/usr/local/bin/credfence", "cli/credfence"),
                        ("/usr/local/lib/libcredfence.so", "shim/libcredfence.so"),
                        ("/usr/local/lib/libcredfence-fenced.so", "shim/libcredfence-fenced.so"),
                        ("/usr/local/lib/libcredfence-judge.so", "shim/libcredfence-judge.so")):
        with open(os.path.join(build, built), "rb") as f:
            binaries[path] = f.read()
    uid, gid = fixture(binaries)
    print("1..%d" % len(cases))
    failed = 0
    for n, (doc, no, cmd, want, why) in enumerate(cases, 1):
        name = "%s:%d %s" % (doc, no, cmd)
        if why:
            print("ok %d - %s # SKIP %s" % (n, name, why))
            continue
        got = normalise(run(cmd, uid, gid)).splitlines()
        want = normalise("\n".join(want)).splitlines()
        if same(want, got):
            print("ok %d - %s" % (n, name))
        else:
            failed += 1
            print("not ok %d - %s" % (n, name))
            for line in want:
                print("#   doc: " + line)
            for line in got:
                print("#   got: " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
