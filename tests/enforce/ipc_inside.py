"""What stays inside the fence and must keep working (issue 10).

    /usr/bin/python3 ipc_inside.py WORKSPACE TMPDIR [SECONDS]

Prints one line "INSIDE <case> ok" or "INSIDE <case> FAIL <why>" per case:
a Unix stream socket bound and connected in the workspace, in TMPDIR and on
an abstract name; a datagram socket in the workspace reached by sendto;
socketpair; TCP on loopback; multiprocessing with the forkserver start
method (a pool, and a manager). Exit 0 when every case is ok. It gives up
after SECONDS (30 unless given; more in a slow VM, meson -Dtest_timeout_scale).
"""
import multiprocessing
import os
import signal
import socket
import sys
import threading


def double(x):
    return 2 * x


def echo_once(srv):
    c, _ = srv.accept()
    c.sendall(c.recv(100))
    c.close()


def stream(family, addr):
    srv = socket.socket(family, socket.SOCK_STREAM)
    srv.bind(addr)
    srv.listen(1)
    if family == socket.AF_INET:
        addr = srv.getsockname()
    t = threading.Thread(target=echo_once, args=(srv,))
    t.start()
    cli = socket.socket(family, socket.SOCK_STREAM)
    cli.settimeout(5)
    cli.connect(addr)
    cli.sendall(b"ping")
    got = cli.recv(100)
    t.join(5)
    cli.close()
    srv.close()
    if got != b"ping":
        raise RuntimeError("echo gave %r" % got)


def unix_path(path):
    if os.path.lexists(path):
        os.unlink(path)
    stream(socket.AF_UNIX, path)


def unix_dgram(path):
    if os.path.lexists(path):
        os.unlink(path)
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(path)
    srv.settimeout(5)
    cli = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    cli.sendto(b"dgram", path)
    got = srv.recv(100)
    if got != b"dgram":
        raise RuntimeError("got %r" % got)


def pair():
    a, b = socket.socketpair()
    a.sendall(b"pair")
    if b.recv(100) != b"pair":
        raise RuntimeError("socketpair")


def forkserver_pool():
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Pool(2) as p:
        got = p.map(double, [1, 2, 3])
    if got != [2, 4, 6]:
        raise RuntimeError("pool gave %r" % got)


def forkserver_manager():
    ctx = multiprocessing.get_context("forkserver")
    with ctx.Manager() as m:
        d = m.dict()
        d["k"] = 7
        if d["k"] != 7:
            raise RuntimeError("manager")


def main():
    signal.alarm(int(sys.argv[3]) if len(sys.argv) > 3 else 30)
    ws, tmp = sys.argv[1], sys.argv[2]
    cases = [
        ("unix_workspace", lambda: unix_path(os.path.join(ws, "py.sock"))),
        ("unix_tmp", lambda: unix_path(os.path.join(tmp, "py.sock"))),
        ("unix_abstract", lambda: stream(socket.AF_UNIX, "\0cf-inside-%d" % os.getpid())),
        ("unix_dgram_workspace", lambda: unix_dgram(os.path.join(ws, "py.dgram"))),
        ("socketpair", pair),
        ("tcp_loopback", lambda: stream(socket.AF_INET, ("127.0.0.1", 0))),
        ("forkserver_pool", forkserver_pool),
        ("forkserver_manager", forkserver_manager),
    ]
    bad = 0
    for name, fn in cases:
        try:
            fn()
            print("INSIDE %s ok" % name, flush=True)
        except Exception as e:  # every failure is a result to report
            bad += 1
            print("INSIDE %s FAIL %r" % (name, e), flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
