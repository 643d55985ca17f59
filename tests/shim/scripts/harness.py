# A Python harness: every way Python starts a program. Each case runs
# bash -c 'cat "$CF_T_KEY"' (must fail: status 1) and cat "$CF_T_ALLOWED"
# (must work), and prints "CASE <name> deny=<status> legit=<status>".
import os
import subprocess
import sys

KEY = os.environ["CF_T_KEY"]
OWN = os.environ["CF_T_OWN"]  # its own login: the harness reads it, not KEY
ALLOWED = os.environ["CF_T_ALLOWED"]
DENY = ["/bin/bash", "-c", 'cat "$CF_T_KEY"']
LEGIT = ["/bin/cat", ALLOWED]
DENY_SH = "bash -c 'cat \"$CF_T_KEY\"'"
LEGIT_SH = 'cat "$CF_T_ALLOWED"'


def case(name, deny, legit):
    print(f"CASE {name} deny={deny} legit={legit}", flush=True)


def st(wait_status):
    return os.waitstatus_to_exitcode(wait_status)


def harness_reads():
    with open(OWN) as f:
        print("HARNESS_READ ok" if f.read().startswith("CFMARK-") else "HARNESS_READ bad", flush=True)
    try:
        open(KEY).read()
        print("HARNESS_DENIED bad", flush=True)
    except PermissionError:
        print("HARNESS_DENIED ok", flush=True)


harness_reads()

case("subprocess-shell", subprocess.call(DENY_SH, shell=True), subprocess.call(LEGIT_SH, shell=True))
case("subprocess-default", subprocess.call(DENY), subprocess.call(LEGIT))
# close_fds=False with an absolute path is CPython's posix_spawn path.
print("POSIX_SPAWN_PATH", subprocess._USE_POSIX_SPAWN, flush=True)
case("subprocess-close_fds", subprocess.call(DENY, close_fds=False), subprocess.call(LEGIT, close_fds=False))
case("os.system", st(os.system(DENY_SH)), st(os.system(LEGIT_SH)))


def popen(cmd):
    p = os.popen(cmd)
    sys.stdout.write(p.read())
    sys.stdout.flush()
    rc = p.close()
    return 0 if rc is None else st(rc)


case("os.popen", popen(DENY_SH), popen(LEGIT_SH))
case("os.posix_spawn",
     st(os.waitpid(os.posix_spawn(DENY[0], DENY, os.environ), 0)[1]),
     st(os.waitpid(os.posix_spawn(LEGIT[0], LEGIT, os.environ), 0)[1]))


def fork_exec(argv):
    pid = os.fork()
    if pid == 0:
        try:
            os.execv(argv[0], argv)
        finally:
            os._exit(127)
    return st(os.waitpid(pid, 0)[1])


case("os.fork+os.execv", fork_exec(DENY), fork_exec(LEGIT))

harness_reads()
