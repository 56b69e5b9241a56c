import json
import math
import os
import unittest

import fixtures  # noqa: F401  (puts hiera_runner on sys.path)
from hiera_runner import framing, jsonrpc


def drain(reader):
    out = []
    while True:
        item = reader.next()
        if item is None:
            return out
        out.append(item)


class FrameReaderTest(unittest.TestCase):
    def test_one_message(self):
        r = framing.FrameReader()
        r.feed(b"Content-Length: 2\r\n\r\n{}")
        self.assertEqual(drain(r), [b"{}"])
        self.assertIsNone(r.finish())

    def test_partial_reads_byte_by_byte(self):
        data = framing.encode('{"a": 1}') + framing.encode('{"b": 22}')
        r = framing.FrameReader()
        got = []
        for i in range(len(data)):
            r.feed(data[i:i + 1])
            got += drain(r)
        self.assertEqual(got, [b'{"a": 1}', b'{"b": 22}'])
        self.assertEqual(r.buffered(), 0)

    def test_several_messages_in_one_chunk_and_split_across_chunks(self):
        data = b"".join(framing.encode('{"n": %d}' % i) for i in range(5))
        r = framing.FrameReader()
        r.feed(data[:37])
        first = drain(r)
        r.feed(data[37:])
        self.assertEqual(first + drain(r), [('{"n": %d}' % i).encode() for i in range(5)])

    def test_header_names_case_insensitive_other_headers_and_bare_newlines(self):
        r = framing.FrameReader()
        r.feed(b"content-length: 3\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\nabc")
        r.feed(b"CONTENT-LENGTH:2\r\n\r\nxy")
        self.assertEqual(drain(r), [b"abc", b"xy"])

    def test_body_may_contain_header_like_bytes(self):
        body = b'{"s": "Content-Length: 99\\r\\n\\r\\n"}'
        r = framing.FrameReader()
        r.feed(framing.encode(body) + framing.encode(b"{}"))
        self.assertEqual(drain(r), [body, b"{}"])

    def test_missing_content_length_is_an_error_then_resynchronises(self):
        r = framing.FrameReader()
        r.feed(b"Content-Type: x\r\n\r\ngarbage" + framing.encode(b"{}"))
        items = drain(r)
        self.assertIsInstance(items[0], framing.FramingError)
        self.assertEqual(items[0].kind, "missing_content_length")
        self.assertEqual(items[1:], [b"{}"])

    def test_malformed_length(self):
        r = framing.FrameReader()
        r.feed(b"Content-Length: abc\r\n\r\n" + framing.encode(b"[1]"))
        items = drain(r)
        self.assertEqual(items[0].kind, "malformed_content_length")
        self.assertIn("abc", items[0].message)
        self.assertEqual(items[1:], [b"[1]"])

    def test_body_too_large_is_skipped(self):
        r = framing.FrameReader(max_body_bytes=4)
        r.feed(b"Content-Length: 10\r\n\r\n0123456789" + framing.encode(b"ok"))
        items = drain(r)
        self.assertEqual(items[0].kind, "body_too_large")
        self.assertEqual(items[1:], [b"ok"])

    def test_header_too_long_then_resynchronises(self):
        r = framing.FrameReader()
        junk = b"x" * (framing.MAX_HEADER_BYTES + 100)
        for i in range(0, len(junk), 1000):
            r.feed(junk[i:i + 1000])
        r.feed(framing.encode(b"{}"))
        items = drain(r)
        self.assertEqual(items[0].kind, "header_too_long")
        self.assertEqual(items[1:], [b"{}"])

    def test_truncated_body_at_end(self):
        r = framing.FrameReader()
        r.feed(b"Content-Length: 10\r\n\r\n0123")
        self.assertEqual(drain(r), [])
        self.assertEqual(r.finish().kind, "truncated_body")

    def test_writer_writes_whole_frames(self):
        rfd, wfd = os.pipe()
        try:
            framing.FrameWriter(wfd).write('{"x": "\u00e9"}')
            os.close(wfd)
            data = os.read(rfd, 1000)
        finally:
            os.close(rfd)
        body = '{"x": "\u00e9"}'.encode()
        self.assertEqual(data, b"Content-Length: %d\r\n\r\n" % len(body) + body)


class JsonRpcTest(unittest.TestCase):
    def test_parse_request_and_notification(self):
        req = jsonrpc.parse(b'{"jsonrpc": "2.0", "id": 7, "method": "hello", "params": {"a": 1}}')
        self.assertEqual((req.id, req.method, req.params, req.is_notification), (7, "hello", {"a": 1}, False))
        note = jsonrpc.parse(b'{"jsonrpc": "2.0", "method": "$/cancelRequest"}')
        self.assertTrue(note.is_notification)
        self.assertEqual(note.params, {})

    def test_parse_errors(self):
        with self.assertRaises(jsonrpc.RpcError) as e:
            jsonrpc.parse(b"{not json")
        self.assertEqual(e.exception.code, jsonrpc.PARSE_ERROR)
        with self.assertRaises(jsonrpc.RpcError) as e:
            jsonrpc.parse(b'{"id": 3, "method": "x"}')
        self.assertEqual(e.exception.code, jsonrpc.INVALID_REQUEST)
        self.assertEqual(e.exception.id, 3)
        with self.assertRaises(jsonrpc.RpcError) as e:
            jsonrpc.parse(b'[1, 2]')
        self.assertEqual(e.exception.code, jsonrpc.INVALID_REQUEST)

    def test_responses_are_strict_json(self):
        text = jsonrpc.result(1, {"a": float("nan"), "b": [float("inf"), 1.5], "s": "bad \udc80 surrogate"})
        msg = json.loads(text)  # would accept NaN; check the text itself
        self.assertNotIn("NaN", text)
        self.assertNotIn("Infinity", text)
        self.assertEqual(msg["result"]["a"], None)
        self.assertEqual(msg["result"]["b"], [None, 1.5])
        text.encode("utf-8")  # no lone surrogates left
        err = json.loads(jsonrpc.error("x", -32602, "bad", {"restart": True}))
        self.assertEqual(err, {"jsonrpc": "2.0", "id": "x", "error": {"code": -32602, "message": "bad",
                                                                     "data": {"restart": True}}})
        self.assertEqual(json.loads(jsonrpc.result(2, None)), {"jsonrpc": "2.0", "id": 2, "result": None})
        self.assertTrue(math.isfinite(json.loads(jsonrpc.result(3, 2.5))["result"]))


if __name__ == "__main__":
    unittest.main()
