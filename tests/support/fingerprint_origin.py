"""A TLS origin on loopback that fingerprints its clients, as bot walls do.

For each connection it reads the ClientHello before the handshake (JA4, computed here independently of
webfreeze's Rust code), and, over h2, the connection preface (SETTINGS, WINDOW_UPDATE, PRIORITY frames)
and each request's HEADERS frame (pseudo-header order, priority, header order, decoded with `hpack`).
Each request is logged as one JSON line to --log and answered with a page showing what was seen.

With --wall FILE (JSON: {"ja4": ..., "h2": ...}) it is a bot wall: a request whose JA4 or HTTP/2
fingerprint differs from the expected one, or whose User-Agent says Headless, gets a Cloudflare-style
challenge (403, `cf-mitigated: challenge`, "Just a moment...") instead of the page.

Usage: python fingerprint_origin.py --cert C --key K --log L [--wall W]; prints `listening on 127.0.0.1:PORT`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import socket
import ssl
import struct
import sys
import threading
from typing import Any

from hpack import Decoder, Encoder  # type: ignore[import-untyped]


def is_grease(v: int) -> bool:
    return (v & 0x0F0F) == 0x0A0A and (v >> 8) == (v & 0xFF)


def read_exact(sock: socket.socket, n: int) -> bytes:
    """Peek until n bytes are available (the TLS layer must still see them)."""
    while True:
        data = sock.recv(n, socket.MSG_PEEK)
        if len(data) >= n or not data:
            return data
        # Wait for more to arrive without consuming.
        sock.settimeout(10)
        more = sock.recv(n, socket.MSG_PEEK | socket.MSG_WAITALL)
        if len(more) >= n or not more:
            return more


def parse_hello(data: bytes) -> dict[str, Any]:
    # Reassemble the handshake message from records.
    hs = b""
    at = 0
    while at + 5 <= len(data):
        ln = struct.unpack(">H", data[at + 3 : at + 5])[0]
        hs += data[at + 5 : at + 5 + ln]
        at += 5 + ln
        if len(hs) >= 4 and len(hs) >= 4 + int.from_bytes(hs[1:4], "big"):
            break
    body = hs[4:]
    p = 2 + 32
    sid = body[p]
    p += 1 + sid
    (cl,) = struct.unpack(">H", body[p : p + 2])
    ciphers = [struct.unpack(">H", body[p + 2 + i : p + 4 + i])[0] for i in range(0, cl, 2)]
    p += 2 + cl
    p += 1 + body[p]
    (el,) = struct.unpack(">H", body[p : p + 2])
    p += 2
    end = p + el
    exts: list[int] = []
    bodies: dict[str, str] = {}
    sni = None
    alpn: list[str] = []
    sigalgs: list[int] = []
    versions: list[int] = []
    while p < end:
        t, ln = struct.unpack(">HH", body[p : p + 4])
        e = body[p + 4 : p + 4 + ln]
        p += 4 + ln
        exts.append(t)
        if t in (0x5, 0x1B, 0x44CD, 0x4469, 0xCA34, 0x2D, 0xB, 0xA):
            bodies[f"{t:04x}"] = e.hex()
        if t == 0 and len(e) > 5:
            sni = e[5:].decode("ascii", "replace")
        elif t == 0x10:
            q = 2
            while q < len(e):
                n = e[q]
                alpn.append(e[q + 1 : q + 1 + n].decode("ascii", "replace"))
                q += 1 + n
        elif t == 0x0D:
            sigalgs = [struct.unpack(">H", e[2 + i : 4 + i])[0] for i in range(0, len(e) - 2, 2)]
        elif t == 0x2B:
            versions = [struct.unpack(">H", e[1 + i : 3 + i])[0] for i in range(0, e[0], 2)]
    c = [x for x in ciphers if not is_grease(x)]
    x = [y for y in exts if not is_grease(y)]
    vers = [v for v in versions if not is_grease(v)]
    ver = {0x0304: "13", 0x0303: "12"}.get(max(vers) if vers else 0x0303, "00")
    a0 = alpn[0] if alpn else ""
    ja4_a = f"t{ver}{'d' if sni else 'i'}{len(c):02d}{len(x):02d}{(a0[0] + a0[-1]) if a0 else '00'}"

    def h(s: str) -> str:
        return hashlib.sha256(s.encode()).hexdigest()[:12] if s else "000000000000"

    ja4_b = h(",".join(f"{v:04x}" for v in sorted(c)))
    ext_c = ",".join(f"{v:04x}" for v in sorted(y for y in x if y not in (0, 0x10)))
    sig = ",".join(f"{v:04x}" for v in sigalgs if not is_grease(v))
    ja4_c = h(f"{ext_c}_{sig}" if sig else ext_c)
    return {
        "ja4": f"{ja4_a}_{ja4_b}_{ja4_c}",
        "sni": sni,
        "alpn": alpn,
        "ciphers": c,
        "extensions": sorted(x),
        "sigalgs": [v for v in sigalgs if not is_grease(v)],
        "sigalgs_grease": any(is_grease(v) for v in sigalgs),
        "bodies": bodies,
        "grease": any(is_grease(v) for v in ciphers + exts),
    }


CHALLENGE = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    b'<div id="challenge-form"><h1>Verify you are human</h1>'
    b"<p>Checking if the site connection is secure. cf-chl-bypass</p></div></body></html>"
)


def page(fp: dict[str, Any]) -> bytes:
    return (
        "<!DOCTYPE html><html><head><title>Fingerprint</title></head><body><h1>Welcome to the shop</h1>"
        f"<p>Your fingerprint: {fp.get('ja4')}</p><pre id=fp>{json.dumps(fp)}</pre></body></html>"
    ).encode()


class Origin:
    def __init__(self, cert: str, key: str, log: str, wall: dict[str, str] | None) -> None:
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.set_alpn_protocols(["h2", "http/1.1"])
        self.log = open(log, "a", buffering=1)
        self.lock = threading.Lock()
        self.wall = wall

    def record(self, fp: dict[str, Any]) -> None:
        with self.lock:
            self.log.write(json.dumps(fp) + "\n")

    def answer(self, fp: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
        self.record(fp)
        if self.wall is not None:
            ua = fp.get("user_agent") or ""
            h2 = fp.get("h2")
            if fp["tls"]["ja4"] != self.wall["ja4"] or (h2 is not None and h2 != self.wall["h2"]) or "Headless" in ua:
                return 403, [("content-type", "text/html"), ("cf-mitigated", "challenge"), ("server", "cloudflare")], CHALLENGE
        return 200, [("content-type", "text/html; charset=utf-8"), ("cache-control", "no-store")], page(fp)

    def serve(self, conn: socket.socket) -> None:
        try:
            head = read_exact(conn, 5)
            if len(head) < 5 or head[0] != 0x16:
                conn.close()
                return
            total = 5 + struct.unpack(">H", head[3:5])[0]
            tls = parse_hello(read_exact(conn, total))
            conn.settimeout(30)
            s = self.ctx.wrap_socket(conn, server_side=True)
            if s.selected_alpn_protocol() == "h2":
                self.h2(s, tls)
            else:
                self.h1(s, tls)
        except (OSError, ssl.SSLError, ValueError, struct.error, IndexError):
            pass
        finally:
            conn.close()

    def h1(self, s: ssl.SSLSocket, tls: dict[str, Any]) -> None:
        buf = b""
        while True:
            while b"\r\n\r\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    return
                buf += chunk
            head, buf = buf.split(b"\r\n\r\n", 1)
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = [tuple(x.split(":", 1)) for x in lines[1:] if ":" in x]
            names = [k.strip().lower() for k, _ in headers]
            ua = next((v.strip() for k, v in headers if k.strip().lower() == "user-agent"), "")
            ch = next((v.strip() for k, v in headers if k.strip().lower() == "sec-ch-ua"), "")
            fp = {"path": path, "method": method, "tls": tls, "h2": None, "headers": names, "user_agent": ua, "sec_ch_ua": ch}
            status, hdrs, body = self.answer(fp)
            out = f"HTTP/1.1 {status} X\r\ncontent-length: {len(body)}\r\n"
            out += "".join(f"{k}: {v}\r\n" for k, v in hdrs)
            s.sendall(out.encode() + b"\r\n" + body)

    def h2(self, s: ssl.SSLSocket, tls: dict[str, Any]) -> None:
        buf = b""

        def need(n: int) -> bool:
            nonlocal buf
            while len(buf) < n:
                chunk = s.recv(65536)
                if not chunk:
                    return False
                buf += chunk
            return True

        if not need(24) or not buf.startswith(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"):
            return
        buf = buf[24:]
        dec, enc = Decoder(), Encoder()
        settings = ""
        window = 0
        priorities: list[str] = []
        first = True
        s.sendall(struct.pack(">I", 0)[1:] + b"\x04\x00" + struct.pack(">I", 0))
        while need(9):
            ln = int.from_bytes(buf[:3], "big")
            ftype, flags = buf[3], buf[4]
            sid = struct.unpack(">I", buf[5:9])[0] & 0x7FFFFFFF
            if not need(9 + ln):
                return
            payload, buf = buf[9 : 9 + ln], buf[9 + ln :]
            if ftype == 0x4 and not flags & 1:
                if first:
                    settings = ";".join(
                        f"{struct.unpack('>H', payload[i : i + 2])[0]}:{struct.unpack('>I', payload[i + 2 : i + 6])[0]}"
                        for i in range(0, len(payload), 6)
                    )
                s.sendall(b"\x00\x00\x00\x04\x01" + struct.pack(">I", 0))
            elif ftype == 0x8 and sid == 0 and first:
                window = struct.unpack(">I", payload)[0] & 0x7FFFFFFF
            elif ftype == 0x2:
                dep, weight = struct.unpack(">IB", payload)
                priorities.append(f"{sid}:{dep >> 31}:{dep & 0x7FFFFFFF}:{weight + 1}")
            elif ftype == 0x6 and not flags & 1:
                s.sendall(b"\x00\x00\x08\x06\x01" + struct.pack(">I", 0) + payload)
            elif ftype == 0x7:
                return
            elif ftype == 0x1:
                p = payload
                if flags & 0x8:
                    p = p[1 : len(p) - p[0]]
                prio = None
                if flags & 0x20:
                    dep, weight = struct.unpack(">IB", p[:5])
                    prio = {"exclusive": dep >> 31, "depends_on": dep & 0x7FFFFFFF, "weight": weight + 1}
                    p = p[5:]
                fields = [(k if isinstance(k, str) else k.decode(), v if isinstance(v, str) else v.decode()) for k, v in dec.decode(p)]
                pseudo = ",".join(k[1] for k, _ in fields if k.startswith(":"))
                h2 = f"{settings}|{window}|{','.join(priorities) or '0'}|{pseudo}"
                first = False
                hd = dict(fields)
                fp = {
                    "path": hd.get(":path"),
                    "method": hd.get(":method"),
                    "tls": tls,
                    "h2": h2,
                    "h2_settings": f"{settings}|{window}",
                    "pseudo": pseudo,
                    "headers_priority": prio,
                    "headers": [k for k, _ in fields if not k.startswith(":")],
                    "user_agent": hd.get("user-agent", ""),
                    "sec_ch_ua": hd.get("sec-ch-ua", ""),
                }
                status, hdrs, body = self.answer(fp)
                block = enc.encode([(":status", str(status)), ("content-length", str(len(body)))] + hdrs)
                s.sendall(struct.pack(">I", len(block))[1:] + b"\x01\x04" + struct.pack(">I", sid) + block)
                for i in range(0, len(body), 16384):
                    part = body[i : i + 16384]
                    end = 1 if i + 16384 >= len(body) else 0
                    s.sendall(struct.pack(">I", len(part))[1:] + bytes([0, end]) + struct.pack(">I", sid) + part)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cert", required=True)
    ap.add_argument("--key", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--wall")
    a = ap.parse_args()
    wall = json.load(open(a.wall)) if a.wall else None
    origin = Origin(a.cert, a.key, a.log, wall)
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(64)
    print(f"listening on 127.0.0.1:{srv.getsockname()[1]}", flush=True)
    while True:
        c, _ = srv.accept()
        threading.Thread(target=origin.serve, args=(c,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
