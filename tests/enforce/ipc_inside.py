"""What stays inside the fence and must keep working (issue 10).

    /usr/bin/python3 ipc_inside.py WORKSPACE TMPDIR [SECONDS]

Prints one line "INSIDE <case> ok" or "INSIDE <case> FAIL <why>" per case:
a Unix stream socket bound and connected in the workspace, in TMPDIR and on
an abstract name; a datagram socket in the workspace reached by sendto;
socketpair; TCP on loopback; multiprocessing with the forkserver start
method (a pool, and a manager); a datagram socketpair made with descriptor
0 free. Exit 0 when every case is ok. It gives up
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


def dgram_pair_stdin_closed(ws):
    """The supervisor makes a Unix datagram socketpair (sup_dgram.c) and
    adds it to the caller: with descriptor 0 free, the pair starts there,
    as the kernel's own would, and works. Before each, a connect to a
    socket that is not there fails in the supervisor (its thread's errno
    is not 0 then): a descriptor number 0 must not be taken for an error."""
    saved = os.dup(0)
    os.close(0)
    try:
        for _ in range(20):
            c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                c.connect(os.path.join(ws, "missing.sock"))
            except OSError:
                pass
            c.close()
            a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            try:
                if a.fileno() != 0:
                    raise RuntimeError("the pair is %d %d" % (a.fileno(), b.fileno()))
                a.send(b"d")
                if b.recv(10) != b"d":
                    raise RuntimeError("the pair does not carry")
            finally:
                a.close()
                b.close()
    finally:
        os.dup2(saved, 0)
        os.close(saved)


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
        ("dgram_pair_stdin_closed", lambda: dgram_pair_stdin_closed(ws)),
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
