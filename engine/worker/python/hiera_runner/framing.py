"""LSP base-protocol framing: "Content-Length: N\\r\\n\\r\\n" + N bytes of body.

The reader is incremental (bytes may arrive in any chunking, several messages
per chunk) and mirrors protocol/framing.h: header names are case-insensitive,
"\\r\\n" and bare "\\n" both end a line, and after a bad header block it
resynchronises on the next "Content-Length" so one bad frame loses only itself.
"""

import os

MAX_HEADER_BYTES = 8 << 10
DEFAULT_MAX_BODY_BYTES = 64 << 20
_MARKER = b"content-length"


class FramingError(object):
    """A framing problem, handed out by FrameReader.next() in place of a body."""

    def __init__(self, kind, message):
        self.kind = kind        # "missing_content_length", "malformed_content_length", ...
        self.message = message

    def __repr__(self):
        return "FramingError(%r, %r)" % (self.kind, self.message)


class FrameReader(object):
    """feed() bytes, then call next() until it returns None; each item is a
    body (bytes) or a FramingError."""

    def __init__(self, max_body_bytes=DEFAULT_MAX_BODY_BYTES):
        self._max_body = max_body_bytes
        self._buf = bytearray()
        self._body_len = None      # set while waiting for a body
        self._skip = 0             # bytes of an oversized body still to drop
        self._resync = False       # dropping bytes up to the next "Content-Length"
        self._events = []

    def feed(self, data):
        self._buf += data
        self._parse()

    def next(self):
        return self._events.pop(0) if self._events else None

    def buffered(self):
        return len(self._buf)

    def finish(self):
        """At end of stream: an error if a message was cut short, else None."""
        if self._body_len is not None or self._skip:
            return FramingError("truncated_body", "the stream ended inside a message body")
        if not self._resync and self._buf.strip():
            return FramingError("truncated_body", "the stream ended inside a header block")
        return None

    def _error(self, kind, message):
        self._events.append(FramingError(kind, message))
        self._resync = True

    def _parse(self):
        while True:
            if self._skip:
                n = min(self._skip, len(self._buf))
                del self._buf[:n]
                self._skip -= n
                if self._skip:
                    return
            if self._resync:
                at = self._buf.lower().find(_MARKER)
                if at < 0:
                    # Keep a tail that may be the start of a split marker.
                    keep = len(_MARKER) - 1
                    if len(self._buf) > keep:
                        del self._buf[:len(self._buf) - keep]
                    return
                del self._buf[:at]
                self._resync = False
            if self._body_len is not None:
                if len(self._buf) < self._body_len:
                    return
                body = bytes(self._buf[:self._body_len])
                del self._buf[:self._body_len]
                self._body_len = None
                self._events.append(body)
                continue
            if not self._read_header():
                return

    def _read_header(self):
        """Parses one header block if complete; False when more bytes are needed."""
        # Blank lines before a header (a stray CRLF after a body) are noise.
        while self._buf[:2] == b"\r\n" or self._buf[:1] == b"\n":
            del self._buf[:2 if self._buf[:1] == b"\r" else 1]
        end, sep = _header_end(self._buf)
        if end < 0:
            if len(self._buf) > MAX_HEADER_BYTES:
                self._buf = self._buf[MAX_HEADER_BYTES // 2:]
                self._error("header_too_long", "no end of header block within %d bytes" % MAX_HEADER_BYTES)
                return True
            return False
        block = bytes(self._buf[:end])
        del self._buf[:end + sep]
        length = None
        for raw in block.replace(b"\r\n", b"\n").split(b"\n"):
            line = raw.decode("latin-1").strip()
            if not line:
                continue
            name, colon, value = line.partition(":")
            if not colon or not name.strip():
                self._error("malformed_header", "header line without a colon: %r" % line[:80])
                return True
            if name.strip().lower() == "content-length":
                value = value.strip()
                if not value.isdigit():
                    self._error("malformed_content_length", "Content-Length is not a number: %r" % value[:40])
                    return True
                length = int(value)
        if length is None:
            self._error("missing_content_length", "a header block with no Content-Length")
            return True
        if length > self._max_body:
            self._events.append(FramingError(
                "body_too_large", "body of %d bytes is over the limit of %d" % (length, self._max_body)))
            self._skip = length
            return True
        self._body_len = length
        return True


def _header_end(buf):
    """(index of the blank line ending the header block, its length) or (-1, 0)."""
    a = buf.find(b"\r\n\r\n")
    b = buf.find(b"\n\n")
    if a >= 0 and (b < 0 or a <= b):
        return a, 4
    if b >= 0:
        return b, 2
    return -1, 0


def encode(body):
    """Header + body as one bytes object (body: str or bytes)."""
    if isinstance(body, str):
        body = body.encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class FrameWriter(object):
    """Writes whole frames to a file descriptor, looping over short writes."""

    def __init__(self, fd):
        self._fd = fd

    def write(self, body):
        data = memoryview(encode(body))
        while data:
            n = os.write(self._fd, data)
            data = data[n:]
