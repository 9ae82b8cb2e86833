"""Hostile and careless HTTP clients for the server_hostile_*.sh tests (issue 13).

Raw sockets, not urllib: these clients send headers without a body, bodies that never end,
bytes one at a time, or nothing at all, and they choose their loopback source address
(127.0.0.2, 127.0.0.3, ...) so that a per-address connection limit can be told from a global one.
"""
import resource
import socket
import time


def raise_nofile():
    """Raises this process's soft fd limit to the hard one; returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def connect(port, source="127.0.0.1", timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def read_response(s, timeout=5.0):
    """Reads one HTTP response (status, headers dict, body bytes); None if none came."""
    s.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get("content-length", "0"))
        while len(body) < n:
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
        return status, headers, body
    except (socket.timeout, ConnectionError, OSError):
        return None


def request_head(method, path, headers):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1"]
    lines += ["%s: %s" % kv for kv in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def vm_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def is_closed(s):
    """True when the peer has closed the connection (EOF or reset), without blocking."""
    try:
        s.setblocking(False)
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except (ConnectionError, OSError):
        return True
    finally:
        s.setblocking(True)


def healthz_latency(port, source="127.0.0.1", timeout=10.0):
    """Seconds from connect to the answer of GET /healthz from a new connection; None if none."""
    t0 = time.monotonic()
    try:
        s = connect(port, source, timeout)
        s.sendall(request_head("GET", "/healthz", {"Connection": "close"}))
        r = read_response(s, timeout)
        s.close()
    except OSError:
        return None
    if not r or r[0] != 200:
        return None
    return time.monotonic() - t0


def open_idle(port, count, sources, per_source):
    """Opens count idle connections (they send nothing), per_source from each address of sources.
    Returns the sockets that connected."""
    socks = []
    for i in range(count):
        src = sources[(i // per_source) % len(sources)]
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.bind((src, 0))
            s.connect_ex(("127.0.0.1", port))
            socks.append(s)
        except OSError:
            break
        if i % 500 == 499:
            time.sleep(0.1)   # in batches, so the listen backlog (somaxconn) does not overflow
    time.sleep(0.5)
    return socks
