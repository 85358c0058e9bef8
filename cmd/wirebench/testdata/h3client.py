"""An HTTP/3 client nobody here wrote the stack of: aioquic's (PyPI), for
TestPeerH3Aioquic. It verifies the server against --ca (the certificate
serve --cert-out wrote), sends GET /users/1 N times on one QUIC
connection, K at a time, plus one POST /echo, checks every answer, and
prints one JSON line: {"requests", "statuses", "bad", "alpn", "cert_sha256"}.

usage: h3client.py --ca FILE --n N --k K HOST PORT
"""

import argparse
import asyncio
import hashlib
import json
import ssl
import sys

from aioquic.asyncio.client import connect
from aioquic.asyncio.protocol import QuicConnectionProtocol
from aioquic.h3.connection import H3_ALPN, H3Connection
from aioquic.h3.events import DataReceived, HeadersReceived
from aioquic.quic.configuration import QuicConfiguration
from aioquic.quic.events import QuicEvent


class Client(QuicConnectionProtocol):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.h3 = H3Connection(self._quic)
        self.pending = {}  # stream id -> [future, status, body]

    def quic_event_received(self, event: QuicEvent) -> None:
        for ev in self.h3.handle_event(event):
            st = self.pending.get(ev.stream_id)
            if st is None:
                continue
            if isinstance(ev, HeadersReceived):
                for k, v in ev.headers:
                    if k == b":status":
                        st[1] = int(v)
            elif isinstance(ev, DataReceived):
                st[2] += ev.data
            if getattr(ev, "stream_ended", False):
                del self.pending[ev.stream_id]
                st[0].set_result((st[1], bytes(st[2])))

    async def request(self, authority, method, path, body=b"", ctype=None):
        sid = self._quic.get_next_available_stream_id()
        headers = [(b":method", method.encode()), (b":scheme", b"https"),
                   (b":authority", authority.encode()), (b":path", path.encode()),
                   (b"accept", b"application/json"), (b"user-agent", b"aioquic")]
        if ctype:
            headers.append((b"content-type", ctype.encode()))
        fut = asyncio.get_running_loop().create_future()
        self.pending[sid] = [fut, 0, bytearray()]
        self.h3.send_headers(stream_id=sid, headers=headers, end_stream=not body)
        if body:
            self.h3.send_data(stream_id=sid, data=body, end_stream=True)
        self.transmit()
        return await asyncio.wait_for(fut, 30)


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ca", required=True)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("host")
    ap.add_argument("port", type=int)
    a = ap.parse_args()
    cfg = QuicConfiguration(is_client=True, alpn_protocols=H3_ALPN, verify_mode=ssl.CERT_REQUIRED,
                            server_name="localhost")
    cfg.load_verify_locations(a.ca)
    authority = "localhost:%d" % a.port
    statuses, bad = {}, 0
    async with connect(a.host, a.port, configuration=cfg, create_protocol=Client) as c:
        sem = asyncio.Semaphore(a.k)

        async def one(method, path, body=b"", ctype=None, want=b'"id":1,'):
            nonlocal bad
            async with sem:
                status, data = await c.request(authority, method, path, body, ctype)
            statuses[status] = statuses.get(status, 0) + 1
            if status != 200 or want not in data:
                bad += 1
                print("bad answer: %d %r" % (status, data[:200]), file=sys.stderr)

        await asyncio.gather(*[one("GET", "/users/1") for _ in range(a.n)])
        await one("POST", "/echo", b'{"first_message":"a","second_message":"b"}', "application/json", b'"message":"ab"')
        alpn = c._quic.tls.alpn_negotiated
        cert = c._quic.tls._peer_certificate
        from cryptography.hazmat.primitives.serialization import Encoding
        fp = hashlib.sha256(cert.public_bytes(Encoding.DER)).hexdigest().upper()
    print(json.dumps({"requests": a.n + 1, "statuses": {str(k): v for k, v in statuses.items()},
                      "bad": bad, "alpn": alpn, "cert_sha256": fp}))


if __name__ == "__main__":
    asyncio.run(main())
