#!/usr/bin/python3
"""Real agent harnesses, installed from the npm registry at pinned versions,
driven by the fake model server (fake_model.py) in a fake home with fake keys.

For each harness (Claude Code, Codex, Gemini CLI, opencode) and each way of
running it:

  plain    no credfence: the key's marker MUST reach the server (the test can fail)
  harness  credfence harness --home FAKE --workspace WS -- HARNESS ...
  self     no credfence command: the harness's own shell-environment setting puts
           the shim (self mode) into its shell tool's environment
  nouserns harness mode where no user namespace can be had (issue 33), through the
           test build's switch CF_TEST_USERNS (NOUSERNS below says which way for
           each agent): it must start in the default mode, fence its shell, and
           say in one line what is off

and three scenarios: "shell" (the model asks the shell tool to run COMMAND below),
"read" (the model asks the harness's own file-reading tool for the key) and
"protect" (issue 31: the shell tool plants a git hook, sets core.hooksPath and
writes .vscode/tasks.json, PROTECT_COMMAND below; under credfence harness all
three must fail with no option, and the user's own git status and commit
afterwards must print no marker).

Output is TAP (meson `protocol : 'tap'`). An assertion that fails today for a
known reason is reported `not ok ... # TODO <reason>` (meson: expected fail);
KNOWN below says which and why. When it starts to pass, meson reports an
unexpected pass: remove its entry then.

Each harness runs at its pinned version and at the newest one the registry
has (`@latest`, resolved with `npm view` and printed); when they are the same
it runs once. In harness mode it runs with no option but --home, --workspace
and --log (credfence knows the four agents: common/harness_kinds.c), as a
first-time user (a home where the agent never ran: no ~/.claude, no
~/.local/share/opencode) and as a returning user (the home its plain run
just used).

The harnesses are installed with `npm install --prefix` into a cache of this
user's own: $CREDFENCE_HARNESS_CACHE, else /var/cache/credfence-harnesses/uid-N
(root makes /var/cache/credfence-harnesses sticky and open to all, like /tmp),
else $XDG_CACHE_HOME (or ~/.cache)/credfence-harnesses, outside the checkout,
and reused. Without the registry (or without Landlock) each case is skipped
with the reason, and fails under CI=true.

Environment: CREDFENCE_BIN, CREDFENCE_BUILD (meson sets them), CREDFENCE_TEST_ROOT
(fixture root, default /var/lib/credfence-tests), CI. Options: --only NAME[,NAME]
(harnesses), --mode M[,M], --scenario S[,S], --keep (leave the fixture, print
where), -v (print each run's output).
"""
import argparse
import json
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import fake_model  # noqa: E402

CACHE_ROOT = "/var/cache/credfence-harnesses"
ROOT = os.environ.get("CREDFENCE_TEST_ROOT") or "/var/lib/credfence-tests"
TIMEOUT = 180
PROMPT = "Run the commands the task needs, then say you are done."

# The packages, pinned. The directory in CACHE is <name with / and @ as ->-<version>.
PACKAGES = {
    "claude": ("@anthropic-ai/claude-code", "2.1.197", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini": ("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
}

# Fake secrets: (relative to home, content with {m} for the marker, label).
# The first group is on credfence's secret list; the second group are the
# agents' own credentials (issue 11: not on the list yet; see agent_denied()).
SECRETS = [
    (".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n{m}\n-----END OPENSSH PRIVATE KEY-----\n", "ssh"),
    (".aws/credentials", "[default]\naws_access_key_id = AKIAFAKE\naws_secret_access_key = {m}\n", "aws"),
    (".netrc", "machine example.com login me password {m}\n", "netrc"),
    (".git-credentials", "https://me:{m}@example.com\n", "gitcred"),
]
AGENT_SECRETS = [
    (".claude/.credentials.json", '{{"fakeMarker": "{m}"}}\n', "claude-cred"),
    (".codex/auth.json", '{{"OPENAI_API_KEY": "sk-{m}"}}\n', "codex-cred"),
    (".gemini/oauth_creds.json", '{{"access_token": "{m}", "refresh_token": "{m}-r", "token_type": "Bearer", "expiry_date": 1}}\n', "gemini-cred"),
    (".local/share/opencode/auth.json", '{{"fake-unused": {{"type": "api", "key": "{m}"}}}}\n', "opencode-cred"),
]
COMMAND = ("cat ~/.ssh/id_ed25519; cat ~/.aws/credentials; "
           "cat ~/.claude/.credentials.json ~/.codex/auth.json ~/.gemini/oauth_creds.json "
           "~/.local/share/opencode/auth.json; git --version; echo built > out.txt; "
           "cf_rc_probe 2>/dev/null; true")

# Scenario "protect": the three writes of issue 31, each a file the user's own
# tools run later, unfenced. The hook prints the key's marker at the next commit.
PROTECT_COMMAND = ("mkdir -p .git/hooks; printf '#!/bin/sh\\ncat ~/.ssh/id_ed25519\\n' > "
                   ".git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; "
                   "git config core.hooksPath /tmp/evil; mkdir -p .vscode; "
                   "echo '{\"version\": \"2.0.0\", \"tasks\": []}' > .vscode/tasks.json; true")

# Each harness's own state that its fenced children write, relative to home: passed
# with --harness-state in harness mode (made first: it must exist). Found with -v and
# --strace (tests/harnesses/README.md): Claude Code's Bash tool writes its shell
# snapshot from the shell it starts; opencode runs git, fenced, on its undo snapshots.
# Codex writes its shell snapshots itself, Gemini CLI none of its own state.
HARNESS_STATE = {"claude": [".claude/shell-snapshots"],
                 "opencode": [".local/share/opencode/snapshot"]}
# What a first-time user does not have: the harness's own state roots (issue 19).
NEVER_RAN = {"claude": (".claude/",), "opencode": (".local/share/opencode/",)}
# Harnesses that extract a library to $TMPDIR and load it (a Bun binary): under
# credfence harness it must land in the harness's private TMPDIR instead.
LOADS_FROM_TMPDIR = ("opencode",)
SLOW = False  # --slow

# A function of the user's rc (the fake ~/.bashrc) that COMMAND calls: it prints
# RC_PROBE_OUT only where the shell tool got the user's rc functions (Claude Code:
# through its shell snapshot).
RC_PROBE = "cf_rc_probe"
RC_PROBE_OUT = "rc-probe-" + "ran"

# The harness's own file-reading tool, for the "read" scenario (None: it has none).
READ_TOOL = {"claude": "Read", "codex": None, "gemini": "read_file", "opencode": "read"}
NO_READ_TOOL = {"codex": "Codex 0.171.0 offers no file-reading tool (its tools: exec_command, "
                         "write_stdin, view_image, create_goal, get_goal, update_goal, "
                         "multi_agent_v1, request_user_input): it reads files only through its shell"}

# The way each agent's nouserns run refuses namespaces (CF_TEST_USERNS, a test
# build's switch: enforce/linux/mountns/userns.c). Root passes Debian's sysctl and
# Ubuntu's rule (CAP_SYS_ADMIN): as root every agent gets the container's way.
NOUSERNS = {"claude": "apparmor", "codex": "sysctl", "gemini": "maxns", "opencode": "seccomp"}


def nouserns_way(name):
    return NOUSERNS[name] if os.getuid() != 0 else "seccomp"


def userns_switch_reason(credfence):
    """None when this credfence honours CF_TEST_USERNS (a test build), else why not."""
    env = dict(os.environ, CF_TEST_USERNS="seccomp")
    r = subprocess.run([credfence, "status"], capture_output=True, text=True, env=env)
    if "\nharness guard: off: " in r.stdout:
        return None
    return ("this credfence has no user namespace test switch (meson setup "
            "-Dtest_userns_switch=true, as scripts/test builds)")


# Assertions that fail today, and why: (harness, mode, scenario, check) -> reason.
# Found by running this test on main (see tests/harnesses/README.md).
KNOWN = {}
# Whole cases that fail today, by (harness, "latest"): a check that fails is
# "# TODO reason", one that passes is plain ok; remove the entry once the
# cause is fixed (a diagnostic line says when every check of the case passed).
KNOWN_CASE = {}


# ------------------------------------------------------------------ TAP

class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def line(self, ok, desc, directive=""):
        self.n += 1
        print("%s %d - %s%s" % ("ok" if ok else "not ok", self.n, desc, directive), flush=True)

    case_todo = None  # a reason the whole case fails today (KNOWN_CASE)
    todo_hits = 0

    def check(self, key, ok, desc, detail=""):
        reason = KNOWN.get(key)
        if not reason and not ok and self.case_todo:
            reason = self.case_todo
            self.todo_hits += 1
        directive = " # TODO " + reason if reason else ""
        self.line(ok, desc, directive)
        if not ok:
            if not reason:
                self.failed += 1
            for l in (detail or "").splitlines()[:40]:
                print("#   " + l)

    def skip(self, desc, reason):
        self.n += 1
        print("ok %d - %s # SKIP %s" % (self.n, desc, reason), flush=True)

    def diag(self, text):
        for l in text.splitlines():
            print("# " + l, flush=True)


def ci():
    return os.environ.get("CI") == "true"


# ------------------------------------------------------------------ setup

def cache_dir():
    """This user's cache of npm packages (issue 25: a root-owned cache made every
    subtest of an ordinary user's run skip). Raises RuntimeError when there is none."""
    own = os.environ.get("CREDFENCE_HARNESS_CACHE")
    if own:
        os.makedirs(own, exist_ok=True)
        return own
    uid = "uid-%d" % os.getuid()
    try:
        if os.getuid() == 0:
            os.makedirs(CACHE_ROOT, exist_ok=True)
            os.chmod(CACHE_ROOT, 0o1777)
        d = os.path.join(CACHE_ROOT, uid)
        os.makedirs(d, mode=0o755, exist_ok=True)
        if os.stat(d).st_uid == os.getuid() and os.access(d, os.W_OK):
            return d
    except OSError:
        pass
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg and xdg.startswith("/") else os.path.join(
        pwd.getpwuid(os.getuid()).pw_dir, ".cache")
    d = os.path.join(base, "credfence-harnesses", uid)
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        raise RuntimeError("no cache for the npm packages: %s is not this user's, and %s: %s"
                           % (CACHE_ROOT, d, e))
    return d


def latest_version(name):
    """The newest version of NAME's package on the registry (npm view), or raise
    RuntimeError."""
    pkg = PACKAGES[name][0]
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("npm is not on PATH (run scripts/setup)")
    cache = cache_dir()
    env = dict(os.environ, HOME=os.path.join(cache, ".home"),
               npm_config_cache=os.path.join(cache, ".npm-cache"))
    os.makedirs(env["HOME"], exist_ok=True)
    r = subprocess.run([npm, "view", pkg + "@latest", "version"], env=env, capture_output=True,
                       text=True, timeout=120)
    v = r.stdout.strip().splitlines()[-1:] if r.returncode == 0 else []
    if not v:
        raise RuntimeError("npm view %s@latest version failed (exit %d): %s"
                           % (pkg, r.returncode, r.stderr.strip()[-300:]))
    return v[0].strip()


def install(name, ver=None):
    """The harness's bin path, installed into this user's cache when missing. Raises
    RuntimeError with the reason when it can not be installed."""
    pkg, pinned, binname = PACKAGES[name]
    ver = ver or pinned
    CACHE = cache_dir()
    d = os.path.join(CACHE, "%s-%s" % (pkg.lstrip("@").replace("/", "-"), ver))
    b = os.path.join(d, "node_modules", ".bin", binname)
    if os.access(b, os.X_OK):
        return b
    npm = shutil.which("npm")
    if not npm:
        raise RuntimeError("npm is not on PATH (run scripts/setup)")
    os.makedirs(CACHE, exist_ok=True)
    part = tempfile.mkdtemp(prefix=os.path.basename(d) + ".", dir=CACHE)
    # npm's own home and cache in CACHE: an install script never sees the real home.
    env = dict(os.environ, HOME=os.path.join(CACHE, ".home"),
               npm_config_cache=os.path.join(CACHE, ".npm-cache"))
    os.makedirs(env["HOME"], exist_ok=True)
    r = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", part,
                        "%s@%s" % (pkg, ver)], env=env, capture_output=True, text=True,
                       timeout=900)
    if r.returncode != 0 or not os.access(os.path.join(part, "node_modules", ".bin", binname),
                                          os.X_OK):
        shutil.rmtree(part, ignore_errors=True)
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        raise RuntimeError("npm install %s@%s failed (exit %d): %s"
                           % (pkg, ver, r.returncode, " | ".join(tail)))
    try:
        os.rename(part, d)
    except OSError:  # another run installed it meanwhile
        shutil.rmtree(part, ignore_errors=True)
    return b


def landlock_reason(m):
    """Why a fence can not be applied here, or None. Run in a workspace of the
    machinery's own: from the directory the test was started in (/, as
    tests/lib/as-user.sh starts it) the workspace would hold the credfence
    copy itself, which credfence refuses."""
    ws = tempfile.mkdtemp(prefix="probe-", dir=m.root)
    r = subprocess.run([m.credfence, "run", "--", "/bin/true"], capture_output=True, text=True,
                       cwd=ws)
    shutil.rmtree(ws, ignore_errors=True)
    if r.returncode != 0:
        return "credfence run -- /bin/true failed (%d): %s" % (r.returncode, r.stderr.strip())
    return None


class Machinery:
    """credfence and its shim copied outside every writable location (the
    installed layout), as tests/lib/fixture.c does."""

    def __init__(self):
        bin_ = os.environ.get("CREDFENCE_BIN")
        build = os.environ.get("CREDFENCE_BUILD")
        if not bin_ or not build:
            raise RuntimeError("CREDFENCE_BIN and CREDFENCE_BUILD are not set; run with meson test")
        os.makedirs(ROOT, exist_ok=True)
        self.root = tempfile.mkdtemp(prefix="cfh-", dir=ROOT)
        os.chmod(self.root, 0o755)
        os.makedirs(os.path.join(self.root, "bin"))
        os.makedirs(os.path.join(self.root, "lib"))
        self.credfence = os.path.join(self.root, "bin", "credfence")
        self.shim = os.path.join(self.root, "lib", "libcredfence.so")
        shutil.copy(bin_, self.credfence)
        shutil.copy(os.path.join(build, "shim", "libcredfence.so"), self.shim)
        # What fenced programs load, beside the shim as installed (issue 36).
        # and the judge it loads at a denial.
        for lib in ("libcredfence-fenced.so", "libcredfence-judge.so"):
            p = os.path.join(build, "shim", lib)
            if os.path.exists(p):
                shutil.copy(p, os.path.join(self.root, "lib", lib))
        os.chmod(self.credfence, 0o755)


def safe_path():
    """PATH without the entries that lie in the account's real home (pyenv shims,
    ~/.cargo/bin, ...): a harness must not see the real home at all."""
    real = os.path.realpath(pwd.getpwuid(os.getuid()).pw_dir)
    keep = []
    for d in os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":"):
        r = os.path.realpath(d) if d else ""
        if d and not (real != "/" and (r == real or r.startswith(real + "/"))):
            keep.append(d)
    return ":".join(keep) or "/usr/bin:/bin"


class Fixture:
    """A fresh fake home and workspace per run, with a marker per secret."""

    def __init__(self, m, label, first_time=None):
        """FIRST_TIME: a harness name whose own state root is left out (it never
        ran here), its login included."""
        self.m = m
        self.runs = 0
        self.root = tempfile.mkdtemp(prefix=label + "-", dir=m.root)
        os.chmod(self.root, 0o755)
        self.home = os.path.join(self.root, "home")
        self.ws = os.path.join(self.root, "ws")
        self.log = os.path.join(self.root, "credfence-log.jsonl")
        self.record = os.path.join(self.root, "requests.jsonl")
        os.makedirs(self.home)
        os.makedirs(self.ws)
        self.tag = "CFMARK-" + secrets.token_hex(6)
        self.markers = {}
        for rel, text, label_ in SECRETS + AGENT_SECRETS:
            if first_time and any(rel.startswith(r) for r in NEVER_RAN.get(first_time, ())):
                continue
            mk = "%s-%s" % (self.tag, label_)
            self.markers[label_] = mk
            self.write(rel, text.format(m=mk))
        self.write(".bashrc", "# fake bashrc\n%s() { echo %s; }\n" % (RC_PROBE, RC_PROBE_OUT))
        self.write("notes.txt", "plain notes\n")
        for d in (".cache", ".npm", ".config", ".local/share", ".local/state"):
            os.makedirs(os.path.join(self.home, d), exist_ok=True)
        subprocess.run(["git", "init", "-q", self.ws], check=True)

    def next_run(self):
        """A record and a log of their own for each run in this home."""
        self.runs += 1
        self.log = os.path.join(self.root, "credfence-log-%d.jsonl" % self.runs)
        self.record = os.path.join(self.root, "requests-%d.jsonl" % self.runs)
        tmp = os.path.join(self.root, "tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp, exist_ok=True)

    def state_dirs(self, name):
        """HARNESS_STATE of NAME made (each must exist), as a colon list."""
        dirs = [os.path.join(self.home, rel) for rel in HARNESS_STATE.get(name, [])]
        for d in dirs:
            os.makedirs(d, exist_ok=True)
        return ":".join(dirs)

    def write(self, rel, text):
        p = os.path.join(self.home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

    def env(self, extra=None):
        h = self.home
        e = {
            "PATH": safe_path(),
            "HOME": h, "USER": "root", "LOGNAME": "root", "SHELL": "/bin/bash",
            "LANG": "C.UTF-8", "TERM": "dumb", "TMPDIR": self.root + "/tmp",
            "XDG_CONFIG_HOME": h + "/.config", "XDG_CACHE_HOME": h + "/.cache",
            "XDG_DATA_HOME": h + "/.local/share", "XDG_STATE_HOME": h + "/.local/state",
            "XDG_RUNTIME_DIR": self.root + "/run",
            "CLAUDE_CONFIG_DIR": h + "/.claude", "CODEX_HOME": h + "/.codex",
            "GEMINI_CLI_HOME": h, "NO_COLOR": "1", "CI": "true",
        }
        os.makedirs(e["XDG_RUNTIME_DIR"], mode=0o700, exist_ok=True)
        os.makedirs(e["TMPDIR"], exist_ok=True)
        e.update(extra or {})
        return e

    def agent_denied(self):
        """The agents' credential labels that credfence says it denies here."""
        r = subprocess.run([self.m.credfence, "status", "--json", "--home", self.home,
                            "--workspace", self.ws], capture_output=True, text=True)
        try:
            denied = [d["path"] for d in json.loads(r.stdout).get("denied", [])]
        except ValueError:
            return set()
        out = set()
        for rel, _, label in AGENT_SECRETS:
            if label not in self.markers:
                continue
            p = os.path.join(self.home, rel)
            if any(p == d or p.startswith(d + "/") for d in denied):
                out.add(label)
        return out

    def requests(self):
        try:
            with open(self.record) as f:
                return [json.loads(l) for l in f if l.strip()]
        except FileNotFoundError:
            return []


# ------------------------------------------------------------------ harnesses

def setup_claude(fx, port, mode):
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:%d" % port,
           "ANTHROPIC_API_KEY": "sk-ant-fake-key",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1", "DISABLE_ERROR_REPORTING": "1",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "IS_SANDBOX": "1"}
    settings = {}
    if mode == "self":
        settings["env"] = {"LD_PRELOAD": fx.m.shim, "CREDFENCE_WORKSPACE": fx.ws,
                           "CREDFENCE_HARNESS_STATE": fx.state_dirs("claude")}
    fx.write(".claude/settings.json", json.dumps(settings))
    args = ["-p", PROMPT, "--output-format", "text", "--allowedTools", "Bash,Read"]
    return args, env


def setup_codex(fx, port, mode):
    conf = ['model = "fake-model"', 'model_provider = "fake"',
            'approval_policy = "never"', 'sandbox_mode = "danger-full-access"',
            '[model_providers.fake]', 'name = "fake"',
            'base_url = "http://127.0.0.1:%d/v1"' % port, 'wire_api = "responses"',
            'env_key = "FAKE_MODEL_KEY"', 'request_max_retries = 0', 'stream_max_retries = 0']
    if mode == "self":
        # Self mode: the settings are the whole recipe. Harness mode needs none:
        # the default inherit = "all" keeps LD_PRELOAD and the CREDFENCE_*
        # variables, which credfence harness checks.
        conf += ['[shell_environment_policy]',
                 'set = { LD_PRELOAD = "%s", CREDFENCE_WORKSPACE = "%s" }' % (fx.m.shim, fx.ws)]
    fx.write(".codex/config.toml", "\n".join(conf) + "\n")
    args = ["exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
            "--color", "never", PROMPT]
    return args, {"FAKE_MODEL_KEY": "fake-key"}


def setup_gemini(fx, port, mode):
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"},
                             "folderTrust": {"enabled": False}},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
                "privacy": {"usageStatisticsEnabled": False},
                "telemetry": {"enabled": False}}
    fx.write(".gemini/settings.json", json.dumps(settings))
    env = {"GEMINI_API_KEY": "fake-key", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:%d" % port}
    if mode == "self":
        fx.write(".gemini/.env", "LD_PRELOAD=%s\nCREDFENCE_WORKSPACE=%s\n" % (fx.m.shim, fx.ws))
    args = ["-p", PROMPT, "--yolo", "--model", "gemini-2.5-flash", "--output-format", "text"]
    # Its read_file refuses paths outside the workspace by itself; a user who adds a
    # directory (here ~/.ssh) makes it readable to the model, and so to this test.
    args += ["--include-directories", os.path.join(fx.home, ".ssh")]
    return args, env


def setup_opencode(fx, port, mode):
    conf = {"$schema": "https://opencode.ai/config.json",
            "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                                  "options": {"baseURL": "http://127.0.0.1:%d/v1" % port,
                                              "apiKey": "fake-key"},
                                  "models": {"fake-model": {"name": "fake-model",
                                                            "tool_call": True}}}},
            "model": "fake/fake-model", "small_model": "fake/fake-model",
            "autoupdate": False, "share": "disabled",
            "permission": {"bash": "allow", "read": "allow", "edit": "allow",
                           "external_directory": "allow"}}
    fx.write(".config/opencode/opencode.json", json.dumps(conf))
    if mode == "self":
        fx.write(".config/opencode/plugin/credfence.js", (
            "export const Credfence = async () => ({\n"
            "  'shell.env': async (input, output) => {\n"
            "    output.env.LD_PRELOAD = %s;\n"
            "    output.env.CREDFENCE_WORKSPACE = %s;\n"
            "    output.env.CREDFENCE_HARNESS_STATE = %s;\n"
            "  },\n"
            "});\n") % (json.dumps(fx.m.shim), json.dumps(fx.ws),
                         json.dumps(fx.state_dirs("opencode"))))
    env = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
           "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1"}
    args = ["run", "--model", "fake/fake-model", PROMPT]
    return args, env


def codex_native(binpath):
    """The native binary that Codex's node wrapper (bin/codex.js) starts."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(binpath)))  # @openai/codex
    arch = {"x86_64": "x86_64", "aarch64": "aarch64"}.get(os.uname().machine, os.uname().machine)
    triple = "%s-unknown-linux-musl" % arch
    pkg = "codex-linux-%s" % ("x64" if arch == "x86_64" else "arm64")
    return os.path.join(os.path.dirname(root), pkg, "vendor", triple, "bin", "codex")


def harness_options(name, binpath):
    """What credfence harness needs for this harness besides the common options:
    nothing (issue 19), credfence knows it (common/harness_kinds.c). Codex's
    native program is found there, its state directories made when missing."""
    return []


SETUP = {"claude": setup_claude, "codex": setup_codex, "gemini": setup_gemini,
         "opencode": setup_opencode}


# ------------------------------------------------------------------ a run

class Run:
    pass


EXTRA_ENV = {}  # --env NAME=VALUE, for experiments
STRACE_SET = ("open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,unlink,unlinkat,"
              "stat,lstat,newfstatat,statx,access,faccessat,faccessat2,readlink,readlinkat,"
              "io_uring_setup,io_uring_enter,io_uring_register,mmap,execve,execveat,clone,clone3,"
              "vfork,fork")


def run_case(m, name, binpath, mode, scenario, keep, verbose, strace_dir=None, fx=None,
             first_time=False):
    if fx is None:
        fx = Fixture(m, "%s-%s-%s" % (name, mode, scenario), name if first_time else None)
    fx.next_run()
    cfg = fake_model.Config(fx.record, "shell" if scenario == "protect" else scenario,
                            PROTECT_COMMAND if scenario == "protect" else COMMAND,
                            os.path.join(fx.home, ".ssh/id_ed25519"))
    srv = fake_model.serve(cfg)
    port = srv.server_address[1]
    args, extra = SETUP[name](fx, port, mode)
    if scenario == "protect" and name == "claude":
        # Claude Code asks before a command that writes .git or .vscode,
        # and -p can not answer: the user lets it run them (the attack is
        # the command's, not a question of the harness's own permissions).
        args = args + ["--dangerously-skip-permissions"]
    argv = [binpath] + args
    if mode == "nouserns":
        extra = dict(extra, CF_TEST_USERNS=nouserns_way(name))
    if mode in ("harness", "nouserns"):
        argv = [m.credfence, "harness", "--home", fx.home, "--workspace", fx.ws,
                "--log", fx.log] + harness_options(name, binpath) + ["--"] + argv
    if strace_dir:
        os.makedirs(strace_dir, exist_ok=True)
        argv = ["strace", "-f", "-qq", "-s", "200", "-e", "signal=none", "-e", "trace=" + STRACE_SET,
                "-o", os.path.join(strace_dir, "%s-%s-%s.strace" % (name, mode, scenario))] + argv
    env = fx.env(dict(extra, **EXTRA_ENV))
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=fx.ws, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        timed_out = True
    srv.shutdown()
    srv.server_close()
    r = Run()
    r.fx, r.argv, r.status, r.timed_out = fx, argv, p.returncode, timed_out
    r.seconds = time.monotonic() - t0
    r.out = out.decode("utf-8", "replace")
    r.err = err.decode("utf-8", "replace")
    r.requests = fx.requests()
    r.bodies = "\n".join(q.get("body", "") for q in r.requests)
    seen = []
    for q in r.requests:
        if q.get("api") in ("anthropic", "responses", "chat", "gemini") and q.get("body"):
            for t in fake_model.tool_results(q["api"], json.loads(q["body"])):
                if t not in seen:
                    seen.append(t)
    r.results = "\n".join(seen)
    r.called = [q["answer"][1] for q in r.requests if q.get("answer") and q["answer"][0] == "tool"]
    r.tool_called = bool(r.called)
    try:
        with open(fx.log) as f:
            r.fences = sum(1 for l in f if '"sandbox_status"' in l)
    except FileNotFoundError:
        r.fences = None
    try:
        with open(os.path.join(fx.ws, "out.txt")) as f:
            r.out_txt = f.read()
    except OSError:
        r.out_txt = None
    r.state = harness_state_seen(name, r)
    r.planted = planted(fx) if scenario == "protect" else None
    # What Bun extracts to load (opencode): in the user's TMPDIR only without credfence.
    tmp = os.path.join(fx.root, "tmp")
    r.tmp_libs = sorted(f for f in os.listdir(tmp) if f.endswith((".so", ".node")))
    if verbose:
        print("# argv: %s" % " ".join(argv))
        print("# exit %s in %.1f s; %d requests; fences %s" % (r.status, r.seconds,
                                                             len(r.requests), r.fences))
        for q in r.requests:
            print("#   %s %s %s tools=%s answer=%s" % (q.get("method"), q.get("path"), q.get("api"),
                                                    q.get("tools"), q.get("answer")))
        for l in (r.out + r.err).splitlines()[-30:]:
            print("#   | " + l[:300])
        print("#   tool results: " + r.results[-1500:].replace("\n", " ")[:1500])
    return r


def harness_state_seen(name, r):
    """What the fenced children wrote of the harness's own state, or None when
    this harness has none to check. Claude Code removes its shell snapshot when
    it ends: the shell tool calling the rc's function shows that the snapshot
    was written (and sourced). opencode's undo snapshot repository must hold
    an object that git, fenced, wrote."""
    if name == "claude":
        return ("the Bash tool ran %s() from the user's rc" % RC_PROBE
                if RC_PROBE_OUT in r.results else "")
    if name == "opencode":
        d = os.path.join(r.fx.home, ".local/share/opencode/snapshot")
        for root, _, files in os.walk(d):
            if os.path.basename(os.path.dirname(root)) == "objects" and files:
                return "snapshot repository %s holds objects" % os.path.relpath(root, d)
        return ""
    return None


def state_denied(r, name):
    """The "denied" lines of the run's credfence log for a path under NAME's
    HARNESS_STATE (a write of its own state that the fence refused)."""
    roots = [os.path.join(r.fx.home, rel) for rel in HARNESS_STATE.get(name, [])]
    found = []
    try:
        with open(r.fx.log, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                p = str(ev.get("path", ""))
                if p.startswith("~/"):
                    p = os.path.join(r.fx.home, p[2:])
                if ev.get("event") == "denied" and any(p == x or p.startswith(x + "/") for x in roots):
                    found.append(p)
    except OSError:
        pass
    return found


def planted(fx):
    """What of PROTECT_COMMAND's writes landed, and what the user's own git,
    run afterwards outside every fence, printed: (list of planted things,
    the output of git status and git commit)."""
    got = []
    if os.path.exists(os.path.join(fx.ws, ".git/hooks/pre-commit")):
        got.append(".git/hooks/pre-commit")
    if os.path.exists(os.path.join(fx.ws, ".vscode/tasks.json")):
        got.append(".vscode/tasks.json")
    env = fx.env({"GIT_CONFIG_NOSYSTEM": "1"})
    hp = subprocess.run(["git", "config", "--get", "core.hooksPath"], cwd=fx.ws, env=env,
                        capture_output=True, text=True)
    if hp.stdout.strip():
        got.append("core.hooksPath=" + hp.stdout.strip())
    out = ""
    for cmd in (["git", "status"],
                ["git", "-c", "user.name=u", "-c", "user.email=u@example.invalid", "commit",
                 "--allow-empty", "-qm", "after the agent"]):
        p = subprocess.run(cmd, cwd=fx.ws, env=env, capture_output=True, text=True)
        out += p.stdout + p.stderr
    return got, out


def leaked(r, markers):
    """The labels whose marker reached the server (in a request body)."""
    return sorted(l for l, mk in markers.items() if mk in r.bodies)


def in_output(r, markers):
    """The labels whose marker is in the harness's stdout or stderr."""
    both = r.out + r.err
    return sorted(l for l, mk in markers.items() if mk in both or mk[len("CFMARK-"):] in both)


def tail(r):
    return "argv: %s\nexit %s%s after %.1f s\n--- stdout\n%s\n--- stderr\n%s\n--- tool results\n%s" % (
        " ".join(r.argv), r.status, " (timed out)" if r.timed_out else "", r.seconds,
        r.out[-2000:], r.err[-3000:], r.results[-2000:])


def check_case(tap, name, mode, scenario, r, label=None, user=""):
    fx = r.fx
    key = lambda c: (name, mode, scenario, c)
    d = "%s %s %s%s: " % (label or name, mode, scenario, user and " (%s)" % user)
    base = {l: fx.markers[l] for _, _, l in SECRETS}
    agents = {l: fx.markers[l] for _, _, l in AGENT_SECRETS if l in fx.markers}
    tap.diag("%s%s exit %s in %.1f s, %d requests, fences %s, leaked to server %s" % (
        d, "ran" if r.tool_called else "did not reach its tool", r.status, r.seconds,
        len(r.requests), r.fences, leaked(r, fx.markers) or "nothing"))
    want = READ_TOOL[name] if scenario == "read" else None
    if scenario == "protect":
        got, git_out = r.planted
        seen = sorted(l for l, mk in fx.markers.items() if mk in git_out)
        tap.check(key("ran"), r.tool_called and bool(r.results),
                  d + "the model's call of its shell tool ran and the result reached the server "
                  "(called: %s)" % (r.called or "nothing"), tail(r))
        if mode == "plain":
            tap.check(key("planted"), len(got) == 3,
                      d + "without credfence the hook, core.hooksPath and tasks.json land "
                      "(the test can fail; landed: %s)" % (got or "nothing"), tail(r))
            return
        tap.check(key("exit0"), r.status == 0 and not r.timed_out, d + "exits 0", tail(r))
        tap.check(key("refused"), any(w in r.results for w in ("Read-only file system",
                                                                "Device or resource busy")),
                  d + "the tool result shows the writes refused (Read-only file system, "
                  "Device or resource busy)", tail(r))
        tap.check(key("nothing-planted"), not got,
                  d + "the hook, core.hooksPath and tasks.json all fail, with no option "
                  "(landed: %s)" % (got or "nothing"), tail(r))
        tap.check(key("git-clean"), not seen,
                  d + "your own git status and commit afterwards print no marker (found: %s)"
                  % (seen or "none"), tail(r) + "\n--- git\n" + git_out)
        return
    tap.check(key("ran"), r.tool_called and bool(r.results) and (not want or want in r.called),
              d + "the model's call of its %s tool ran and the result reached the server (called: %s)"
              % (want or "shell", r.called or "nothing"), tail(r))
    if mode == "plain":
        if scenario == "shell":
            tap.check(key("leaks"), fx.markers["ssh"] in r.results,
                      d + "without credfence the key's marker reaches the server (the test can fail)",
                      tail(r))
            tap.check(key("exit0"), r.status == 0, d + "exits 0", tail(r))
            if name in LOADS_FROM_TMPDIR:
                tap.check(key("tmp-lib"), bool(r.tmp_libs),
                          d + "without credfence it extracts the library it loads to TMPDIR "
                          "(found: %s)" % (r.tmp_libs or "nothing"), tail(r))
        else:
            tap.check(key("leaks"), fx.markers["ssh"] in r.results,
                      d + "without credfence its Read tool sends the key's marker to the server",
                      tail(r))
        return
    tap.check(key("exit0"), r.status == 0 and not r.timed_out, d + "exits 0", tail(r))
    if mode == "nouserns":
        tap.check(key("says-off"), "credfence: warning: harness: no mount namespace (" in r.err
                  and "off: the guard over the harness's own reads" in r.err,
                  d + "starts in the default mode and says in one line what is off (%s)"
                  % nouserns_way(name), tail(r))
    if mode in ("harness", "nouserns"):
        tap.check(key("tmp-lib"), not r.tmp_libs,
                  d + "nothing it loads lies in the TMPDIR its fenced programs write (found: %s)"
                  % (r.tmp_libs or "nothing"), tail(r))
    lk = leaked(r, base)
    tap.check(key("no-secret-to-server"), not lk,
              d + "no secret's marker reaches the server (leaked: %s)" % (lk or "none"), tail(r))
    lo = in_output(r, base)
    tap.check(key("no-secret-in-output"), not lo,
              d + "no secret's marker in the harness's stdout or stderr (found: %s)" % (lo or "none"),
              tail(r))
    # opencode words EACCES as "PermissionDenied" (its FileSystem error's reason).
    tap.check(key("eacces"), any(w in r.results for w in ("Permission denied", "EACCES",
                                                            "PermissionDenied")),
              d + "the tool result shows EACCES (Permission denied)", tail(r))
    if scenario == "shell":
        denied = fx.agent_denied()
        lka = sorted(set(leaked(r, agents)) | set(in_output(r, agents)))
        reason = None
        if set(agents) - denied:
            reason = ("issue 11: the agents' own credentials are not on the secret list yet "
                      "(credfence status denies %s of %s)" % (sorted(denied) or "none",
                                                              sorted(agents)))
        ok = not lka
        desc = d + "no agent credential's marker reaches the server or the output (leaked: %s)" % (lka or "none")
        if reason and not ok:
            tap.line(False, desc, " # TODO " + reason)
        else:
            tap.check(key("no-agent-cred-to-server"), ok, desc, tail(r))
        tap.check(key("git"), "git version" in r.results, d + "git --version works in the shell tool",
                  tail(r))
        tap.check(key("ws-write"), (r.out_txt or "").strip() == "built",
                  d + "the workspace write (echo built > out.txt) works", tail(r))
        if r.state is not None:
            desc = d + "its fenced children wrote its own state (%s)" % (
                r.state or "nothing: see HARNESS_STATE")
            if not r.state and SLOW and name == "claude" and not state_denied(r, name):
                # Claude Code gives its shell snapshot 10 s (F4n=1e4 in its
                # binary); a fenced bash -l under TCG can take longer. A write
                # the fence refused would be in the log: none was.
                tap.skip(desc, "--slow: no snapshot made and no write under %s denied "
                         "(Claude Code's 10 s snapshot timeout)" % HARNESS_STATE[name])
            else:
                tap.check(key("state"), bool(r.state), desc, tail(r))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=",".join(PACKAGES))
    ap.add_argument("--mode", default="plain,harness,self,nouserns")
    ap.add_argument("--scenario", default="shell,read,protect")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-latest", dest="latest", action="store_false",
                    help="run the pinned versions only (no registry lookup)")
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--slow", action="store_true",
                    help="a slow machine (the 6.1 VM under TCG): Claude Code's shell snapshot, "
                         "which it gives 10 s, not made while no write of it was denied is a skip")
    ap.add_argument("--strace", metavar="DIR", help="run each harness under strace -f, logs in DIR "
                    "(a measurement, not a test: timings change)")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="add to every harness's environment (an experiment, not a test)")
    ap.add_argument("--bin", action="append", default=[], metavar="NAME=PATH",
                    help="run this program for harness NAME instead of the installed one "
                         "(an experiment, e.g. Codex's native binary)")
    a = ap.parse_args()
    global SLOW
    SLOW = a.slow
    bins = dict(kv.split("=", 1) for kv in a.bin)
    EXTRA_ENV.update(kv.split("=", 1) for kv in a.env)
    tap = Tap()
    names = [n for n in a.only.split(",") if n]
    modes = [x for x in a.mode.split(",") if x]
    scenarios = [x for x in a.scenario.split(",") if x]
    print("TAP version 13")
    try:
        m = Machinery()
    except Exception as e:  # noqa: BLE001
        m = None
        problem = str(e)
    else:
        problem = landlock_reason(m)

    def unavailable(desc, why):
        if ci():
            tap.check(None, False, desc + ": can not run under CI=true", why)
        else:
            tap.skip(desc, why)

    for n in names:
        pinned = PACKAGES[n][1]
        versions = [("pinned", pinned)]
        if a.latest and not problem and n not in bins:
            try:
                lv = latest_version(n)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                unavailable("%s@latest" % n, str(e))
                lv = pinned
            tap.diag("%s: pinned %s, @latest is %s%s" % (n, pinned, lv,
                                                         " (the same: run once)" if lv == pinned else ""))
            if lv != pinned:
                versions.append(("latest", lv))
        for tag, ver in versions:
            label = "%s@%s" % (n, ver)
            try:
                binpath = (bins.get(n) or install(n, ver)) if not problem else None
                nproblem = problem
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as e:
                binpath, nproblem = None, str(e)
            tap.case_todo = KNOWN_CASE.get((n, tag))
            # (mode, scenario, user): the plain shell run's home is then the
            # returning user's; a first-time user's home is fresh.
            plan = [("plain", "shell", ""), ("harness", "shell", "returning user"),
                    ("harness", "shell", "first-time user"), ("plain", "read", ""),
                    ("harness", "read", "first-time user"), ("self", "shell", ""),
                    ("plain", "protect", ""), ("harness", "protect", ""),
                    ("nouserns", "shell", "namespaces refused")]
            if tag == "latest":
                plan = [c for c in plan if c[0] not in ("self", "nouserns")
                        and c[:2] not in (("plain", "read"), ("plain", "protect"))]
            plain_fx = None
            for mo, sc, user in plan:
                if mo not in modes or sc not in scenarios:
                    continue
                desc = "%s %s %s%s" % (label, mo, sc, user and " (%s)" % user)
                if sc == "read" and not READ_TOOL[n]:
                    tap.skip(desc, NO_READ_TOOL[n])
                    continue
                if nproblem:
                    unavailable(desc, nproblem)
                    continue
                if mo == "nouserns" and userns_switch_reason(m.credfence):
                    unavailable(desc, userns_switch_reason(m.credfence))
                    continue
                reuse = plain_fx if user == "returning user" else None
                if user == "returning user" and not reuse:
                    continue  # its plain run was not selected
                r = run_case(m, n, binpath, mo, sc, a.keep, a.v, a.strace, fx=reuse,
                             first_time=user == "first-time user")
                check_case(tap, n, mo, sc, r, label, user)
                if mo == "plain" and sc == "shell":
                    plain_fx = r.fx
                    continue
                if not a.keep:
                    shutil.rmtree(r.fx.root, ignore_errors=True)
            if plain_fx and not a.keep:
                shutil.rmtree(plain_fx.root, ignore_errors=True)
            if tap.case_todo and not tap.todo_hits:
                tap.diag("every check of %s passed: remove its KNOWN_CASE entry" % label)
            tap.case_todo, tap.todo_hits = None, 0
    if m and not a.keep:
        shutil.rmtree(m.root, ignore_errors=True)
    elif m:
        tap.diag("kept: %s" % m.root)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
