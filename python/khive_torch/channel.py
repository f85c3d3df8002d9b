"""The judge <-> executor channel as the PyTorch executors speak it (src/khive/executor/protocol.hpp): one JSON object
per SOCK_SEQPACKET datagram, descriptors attached with SCM_RIGHTS; a Fault is answered as {"op": "fault", ...}."""
import json
import os
import socket
import sys

PROTOCOL_VERSION = 1
MAX_MESSAGE = 1 << 20
MAX_FDS = 16


class Fault(Exception):
    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


def send(sock, body):
    data = json.dumps(body).encode()
    if len(data) > MAX_MESSAGE:
        data = json.dumps({"op": "fault", "reason": "bad_request", "message": f"an answer of {len(data)} bytes is over the limit"}).encode()
    sock.sendmsg([data])


def receive(sock):
    """One datagram and the descriptors attached to it; None when the judge closed the channel."""
    fds = []
    data, anc, flags, _ = sock.recvmsg(MAX_MESSAGE + 1, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC)
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            n = len(payload) // 4
            fds.extend(int.from_bytes(payload[4 * i:4 * i + 4], sys.byteorder, signed=True) for i in range(n))
    if not data and not fds:
        return None, []
    if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
        for fd in fds:
            os.close(fd)
        raise Fault("bad_request", "a message over the size limit (or with too many descriptors)")
    try:
        body = json.loads(data)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        for fd in fds:
            os.close(fd)
        raise Fault("bad_request", "a message that is not a JSON object")
    return body, fds
