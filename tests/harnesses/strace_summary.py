#!/usr/bin/python3
"""Summarize the strace -f logs that `test_harnesses.py --strace DIR` writes:
per log, which programs ran (static or not), what was written under the fake
home, which syscalls touched the key ~/.ssh/id_ed25519 and from which program,
whether io_uring was set up, and which files in /tmp were created and mapped.

  strace_summary.py DIR/*.strace
"""
import collections
import os
import re
import sys

LINE = re.compile(r"^(\d+) +(?:<\.\.\. )?(\w+)(?:\(| resumed>)(.*)$")
STR = re.compile(r'"((?:[^"\\]|\\.)*)"')


def prog_kind(path):
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return "?"
    if head[:2] == b"#!":
        return "script"
    if head[:4] != b"\x7fELF":
        return "?"
    return "dynamic" if b"/ld-linux" in head or b"ld-musl" in head else "static"


def summarize(path):
    exe = {}           # pid -> program
    first = None
    writes = collections.defaultdict(set)   # home-relative top -> {(prog, call)}
    key = collections.Counter()             # (prog, call, result)
    uring = collections.Counter()
    tmp = collections.Counter()
    pending = {}
    home = None
    with open(path, errors="replace") as f:
        for raw in f:
            m = LINE.match(raw.rstrip("\n"))
            if not m:
                continue
            pid, call, rest = m.group(1), m.group(2), m.group(3)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = (call, rest)
                continue
            if " resumed>" in raw and pid in pending:
                call, rest0 = pending.pop(pid)
                rest = rest0.replace("<unfinished ...>", "") + rest
            result = rest.rsplit("=", 1)[-1].strip() if "=" in rest else ""
            ok = not result.startswith("-1")
            strs = STR.findall(rest)
            if call == "execve" and ok and strs:
                exe[pid] = strs[0]
                if first is None:
                    first = strs[0]
                continue
            if call in ("clone", "clone3", "vfork", "fork") and ok:
                child = result.split()[0] if result else ""
                if child.isdigit():
                    exe.setdefault(child, exe.get(pid, "?"))
                continue
            prog = os.path.basename(exe.get(pid, "?"))
            if call.startswith("io_uring"):
                uring[(prog, call, "ok" if ok else result)] += 1
            for s in strs:
                if home is None and "/home/" in s and "/credfence-tests/" in s:
                    home = s[:s.index("/home/") + len("/home")]
                if s.endswith(".ssh/id_ed25519"):
                    key[(prog, call, "ok" if ok else result.split()[1] if " " in result else result)] += 1
                if s.startswith("/tmp/") and ("O_CREAT" in rest or ".so" in s or call == "mkdir"):
                    flags = "create" if "O_CREAT" in rest else "read" if "O_RDONLY" in rest else ""
                    tmp[(prog, call + " " + flags, re.sub(r"\d{3,}|[0-9a-f]{8,}", "N", s),
                         "ok" if ok else "err")] += 1
            if home and ok:
                target = None
                if call in ("mkdir", "mkdirat", "rename", "renameat", "renameat2", "unlink",
                            "unlinkat", "creat"):
                    target = [s for s in strs if s.startswith(home + "/")]
                elif call in ("open", "openat", "openat2") and re.search(r"O_WRONLY|O_RDWR|O_CREAT", rest):
                    target = [s for s in strs if s.startswith(home + "/")]
                for t in target or []:
                    rel = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                                 "UUID", t[len(home) + 1:])
                    rel = re.sub(r"\.tmp\.\d+\.[0-9a-f]+$", ".tmp.PID.HEX", rel)
                    rel = re.sub(r"(arg0|codex-arg0)[A-Za-z0-9]{6}", r"\1XXXXXX", rel)
                    parts = rel.split("/")
                    top = "/".join(parts[:3]) if parts[0] in (".local", ".config", ".cache") else "/".join(parts[:2])
                    writes[top].add((prog, call))
    print("== %s" % os.path.basename(path))
    progs = collections.Counter(exe.values())
    print("programs (execve ok):")
    for p, n in sorted(progs.items(), key=lambda x: -x[1]):
        print("  %3d x %s [%s]" % (n, p, prog_kind(p)))
    print("written under ~ (open for write/create, mkdir, rename, unlink):")
    for top in sorted(writes):
        print("  ~/%s  by %s" % (top, ", ".join(sorted("%s:%s" % w for w in writes[top]))))
    print("the key ~/.ssh/id_ed25519:")
    for (p, c, r), n in sorted(key.items()):
        print("  %3d x %s %s -> %s" % (n, p, c, r))
    print("io_uring:", ", ".join("%s %s %s x%d" % (p, c, r, n) for (p, c, r), n in uring.items()) or "none")
    print("/tmp files created or mapped:")
    for (p, c, s, r), n in sorted(tmp.items()):
        print("  %3d x %s %s %s %s" % (n, p, c, s, r))


def main():
    for p in sys.argv[1:]:
        summarize(p)


if __name__ == "__main__":
    main()
