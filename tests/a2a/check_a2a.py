"""Check that JSON files hold valid A2A 1.0 `Task` objects, using the official SDK.

Usage: check_a2a.py PATH...   (a PATH may be a directory: every *.json below it)

Each file must hold one A2A 1.0 `Task` in proto-JSON form (package `lf.a2a.v1`
of a2a.proto, as shipped by the `a2a-sdk` PyPI package). We use a third-party
implementation of the spec, not our own reading of it, so a checked file is one
another A2A client will accept. A file passes when all of these hold:

1. It is JSON with no duplicate keys and no NaN/Infinity.
2. `google.protobuf.json_format.ParseDict(obj, a2a.types.Task(),
   ignore_unknown_fields=False)` accepts it: no unknown field, right JSON
   types, valid enum names, at most one `Part` content, RFC 3339 timestamps.
3. The SDK's own `validate_proto_required_fields` finds no missing REQUIRED
   field (Task.id, Task.status, status.state, artifact.artifactId/parts,
   message.messageId/role/parts).
4. Every `Part` sets one content field (`text`, `raw`, `url` or `data`);
   protobuf itself would accept an empty `{}`.
5. Round trip: re-serialising with `MessageToDict` reproduces every key and
   value of the input. ParseDict is lenient in ways a strict check should not
   be, and this catches them: snake_case names (`context_id`), integer enums
   (`"state": 3`), `null` for a field (silently dropped), invalid base64 in
   `raw` (silently decoded to empty). Output keys missing from the input are
   fine (defaults), and `raw`/timestamps are compared by value, not spelling.

Self-test: a file whose name starts with `invalid-` is expected to FAIL; it
counts as passed when it is rejected and as failed when it is accepted.

Prints one line per failing file, then `N passed, M failed`; exits 1 if M > 0
or if no file was found.
"""

import base64
import json
import sys
from pathlib import Path

from a2a.types import Task
from a2a.utils.proto_utils import validate_proto_required_fields
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.timestamp_pb2 import Timestamp


def _no_dupes(pairs):
    keys = [k for k, _ in pairs]
    dupes = {k for k in keys if keys.count(k) > 1}
    if dupes:
        raise ValueError(f'duplicate key(s) {sorted(dupes)}')
    return dict(pairs)


def _reject_constant(name):
    raise ValueError(f'non-JSON number {name}')


def _b64(s):
    s = s.replace('-', '+').replace('_', '/')
    return base64.b64decode(s + '=' * (-len(s) % 4), validate=True)


def _same_string(key, a, b):
    try:
        if key == 'raw':
            return _b64(a) == _b64(b)
        if key == 'timestamp':
            ta, tb = Timestamp(), Timestamp()
            ta.FromJsonString(a)
            tb.FromJsonString(b)
            return ta == tb
    except ValueError:
        pass
    return a == b


def _diff(inp, out, path='$', key=''):
    """First place where `inp` is not reproduced in `out`, or None."""
    if isinstance(inp, dict) and isinstance(out, dict):
        for k, v in inp.items():
            if k not in out:
                return f'{path}.{k} was dropped (non-canonical name or null?)'
            d = _diff(v, out[k], f'{path}.{k}', k)
            if d:
                return d
        return None
    if isinstance(inp, list) and isinstance(out, list) and len(inp) == len(out):
        for i, (a, b) in enumerate(zip(inp, out)):
            d = _diff(a, b, f'{path}[{i}]', key)
            if d:
                return d
        return None
    if isinstance(inp, str) and isinstance(out, str) and _same_string(key, inp, out):
        return None
    if type(inp) is not bool and type(out) is not bool and inp == out:
        return None  # numbers: 1 == 1.0 after Struct's float conversion
    if inp is out:  # True/False/None
        return None
    return f'{path}: {json.dumps(inp)} came back as {json.dumps(out)}'


def check(path):
    """Return None if `path` holds a valid A2A 1.0 Task, else the reason."""
    try:
        obj = json.loads(
            Path(path).read_text(encoding='utf-8'),
            object_pairs_hook=_no_dupes,
            parse_constant=_reject_constant,
        )
        task = ParseDict(obj, Task(), ignore_unknown_fields=False)
        validate_proto_required_fields(task)
    except Exception as e:  # noqa: BLE001 - any failure is the reason
        detail = getattr(e, 'data', None)  # InvalidParamsError carries details
        return f'{type(e).__name__}: {e}' + (f' {detail}' if detail else '')
    for where, msg in [('status.message', task.status.message)] + [
        (f'history[{i}]', m) for i, m in enumerate(task.history)
    ]:
        for j, part in enumerate(msg.parts):
            if not part.WhichOneof('content'):
                return f'{where}.parts[{j}] has no text/raw/url/data'
    for i, art in enumerate(task.artifacts):
        for j, part in enumerate(art.parts):
            if not part.WhichOneof('content'):
                return f'artifacts[{i}].parts[{j}] has no text/raw/url/data'
    out = MessageToDict(task, always_print_fields_with_no_presence=True)
    d = _diff(obj, out)
    return f'round trip: {d}' if d else None


def main(args):
    files = []
    for a in args:
        p = Path(a)
        files += sorted(p.rglob('*.json')) if p.is_dir() else [p]
    passed = failed = 0
    for f in files:
        reason = check(f)
        if f.name.startswith('invalid-'):
            reason = None if reason else 'expected to be rejected, but it was accepted'
        if reason:
            failed += 1
            print(f'FAIL {f}: ' + ' '.join(reason.split()))
        else:
            passed += 1
    print(f'{passed} passed, {failed} failed')
    return 1 if failed or not files else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
