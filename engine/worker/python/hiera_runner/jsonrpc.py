"""JSON-RPC 2.0 messages: parsing requests, building responses.

Responses are made safe for strict JSON parsers (nlohmann/json on the engine
side): NaN/Inf become null and strings are valid UTF-8 without lone surrogates.
"""

import json
import math

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class RpcError(Exception):
    """Raised by a handler: becomes a JSON-RPC error response."""

    def __init__(self, code, message, data=None):
        Exception.__init__(self, message)
        self.code = code
        self.message = message
        self.data = data


class Request(object):
    def __init__(self, id, method, params, is_notification):
        self.id = id
        self.method = method
        self.params = params
        self.is_notification = is_notification


def parse(body):
    """bytes -> Request; raises RpcError (with the id, when one could be read)."""
    try:
        msg = json.loads(body.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as e:
        raise RpcError(PARSE_ERROR, "invalid JSON: %s" % e)
    if not isinstance(msg, dict):
        raise RpcError(INVALID_REQUEST, "a request must be a JSON object")
    has_id = "id" in msg
    rid = msg.get("id")
    if has_id and not (rid is None or isinstance(rid, (int, str))) or isinstance(rid, bool):
        raise RpcError(INVALID_REQUEST, "id must be a number or a string")
    err = None
    if msg.get("jsonrpc") != "2.0":
        err = 'missing "jsonrpc": "2.0"'
    elif not isinstance(msg.get("method"), str):
        err = 'missing "method"'
    elif "params" in msg and not isinstance(msg["params"], (dict, list)):
        err = "params must be an object or an array"
    if err:
        e = RpcError(INVALID_REQUEST, err)
        e.id = rid
        raise e
    params = msg.get("params")
    return Request(rid, msg["method"], {} if params is None else params, not has_id)


def clean(value):
    """A copy of value that strict JSON accepts: non-finite floats -> None,
    strings repaired to valid UTF-8, tuples -> lists, other objects -> str."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {clean(str(k)): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    try:  # numpy/torch scalars
        return clean(value.item())
    except Exception:
        return clean(str(value))


def result(rid, value):
    return json.dumps({"jsonrpc": "2.0", "id": rid, "result": clean(value)}, allow_nan=False)


def error(rid, code, message, data=None):
    err = {"code": code, "message": clean(message)}
    if data is not None:
        err["data"] = clean(data)
    return json.dumps({"jsonrpc": "2.0", "id": clean(rid), "error": err}, allow_nan=False)
