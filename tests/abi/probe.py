"""What a fenced command tries, one line per row of the ABI table
(tests/abi/abi_table.py runs it under `credfence run`):

    python3 probe.py HOME WS OUTSIDE_ABS OUTSIDE_ABS_DGRAM OUTSIDE_PATH_DGRAM TCP_PORT PID

prints "ROW <id> ok" or "ROW <id> <errno name>" (a reply that holds the
fake key's marker counts as ok: the deputy answered)."""
import errno
import os
import signal
import socket
import sys
import threading


def name(e):
    return errno.errorcode.get(e.errno, "E%d" % e.errno) if e.errno else type(e).__name__


def row(rid, fn):
    try:
        fn()
        print("ROW %s ok" % rid, flush=True)
    except OSError as e:
        print("ROW %s %s" % (rid, name(e)), flush=True)
    except Exception as e:  # a probe that broke is a result too
        print("ROW %s %s" % (rid, type(e).__name__), flush=True)


def abstract(n):
    return "\0" + n


def stream_ask(addr, what=b"key\n"):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    s.connect(addr)
    s.sendall(what)
    got = s.recv(4096)
    s.close()
    if not got:
        raise OSError(errno.ECONNRESET, "no answer")


def dgram_ask(addr, me=""):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(me)  # a name of its own for the answer ("": an abstract one)
    s.settimeout(5)
    s.sendto(b"key", addr)
    s.recv(4096)
    s.close()


def serve_stream_once(srv):
    c, _ = srv.accept()
    c.sendall(c.recv(100))
    c.close()


def stream_inside(addr):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(addr)
    srv.listen(1)
    t = threading.Thread(target=serve_stream_once, args=(srv,))
    t.start()
    stream_ask(addr)
    t.join(5)
    srv.close()


def dgram_inside(addr):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    srv.bind(addr)
    srv.settimeout(5)
    cli = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    cli.bind("")
    cli.settimeout(5)
    cli.sendto(b"ping", addr)
    data, peer = srv.recvfrom(100)
    srv.sendto(data, peer)
    if cli.recv(100) != b"ping":
        raise OSError(errno.EIO, "echo")


def tcp(port):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.close()


def write_new(path):
    with open(path, "w") as f:
        f.write("x\n")


def rename_across(ws):
    os.makedirs(os.path.join(ws, "a"), exist_ok=True)
    os.makedirs(os.path.join(ws, "b"), exist_ok=True)
    src = os.path.join(ws, "a", "f")
    write_new(src)
    os.rename(src, os.path.join(ws, "b", "f"))


def main():
    home, ws, out_abs, out_dgram, out_path_dgram, port, pid = sys.argv[1:8]
    pid = int(pid)
    tag = "%d" % os.getpid()
    row("read", lambda: open(os.path.join(home, ".ssh", "id_ed25519")).read())
    row("write", lambda: write_new(os.path.join(home, "new-by-fenced.txt")))
    row("truncate", lambda: os.truncate(os.path.join(home, ".bashrc"), 0))
    row("hooks", lambda: write_new(os.path.join(ws, ".git", "hooks", "pre-commit")))
    row("chmod", lambda: os.chmod(os.path.join(home, ".bashrc"), 0o600))
    row("rename", lambda: rename_across(ws))
    row("link", lambda: os.link(os.path.join(home, ".ssh", "id_ed25519"), os.path.join(ws, "k")))
    row("abstract_out", lambda: stream_ask(abstract(out_abs)))
    row("abstract_dgram_out", lambda: dgram_ask(abstract(out_dgram)))
    row("path_dgram_out", lambda: dgram_ask(out_path_dgram, os.path.join(ws, "me.dgram")))
    row("abstract_in", lambda: stream_inside(abstract("cf-abi-in-" + tag)))
    row("abstract_dgram_in", lambda: dgram_inside(abstract("cf-abi-ind-" + tag)))
    row("path_in", lambda: stream_inside(os.path.join(ws, "in.sock")))
    row("tcp", lambda: tcp(int(port)))
    row("signal", lambda: os.kill(pid, signal.SIGTERM))


if __name__ == "__main__":
    main()
