"""JSON in and out for the hooks through the C accelerator `_json`, without importing `json`.

`import json` pulls in `re` (about as costly as the whole interpreter start), so the hot path
scans with `_json.make_scanner` and writes with `_json.encode_basestring_ascii`.
"""

import _json

_WHITESPACE = " \t\r\n"


class _Context:
    strict = False
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo: dict = {}


_scan = _json.make_scanner(_Context())  # type: ignore[arg-type]


def loads(text: str) -> object:
    """Parse one JSON document; ValueError when it is not exactly one valid value."""
    i, n = 0, len(text)
    while i < n and text[i] in _WHITESPACE:
        i += 1
    try:
        value, end = _scan(text, i)
    except StopIteration:
        raise ValueError("no JSON value") from None
    except Exception as exc:  # _json raises odd errors when `json` itself is not imported
        raise ValueError("invalid JSON") from exc
    while end < n and text[end] in _WHITESPACE:
        end += 1
    if end != n:
        raise ValueError("trailing data after the JSON value")
    return value


def dumps(value: object) -> str:
    """Compact JSON (ASCII, keys in insertion order) for dicts, lists, str, int, float, bool, None."""
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def _write(value: object, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(_json.encode_basestring_ascii(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(str(int(value)))
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError("JSON has no NaN or infinity")
        out.append(repr(value))
    elif isinstance(value, dict):
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(", ")
            first = False
            out.append(_json.encode_basestring_ascii(str(key)))
            out.append(": ")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(", ")
            _write(item, out)
        out.append("]")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")
