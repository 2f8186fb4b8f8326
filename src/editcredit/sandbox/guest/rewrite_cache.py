"""Reuse pytest's assertion rewriting of identical test files across forked gradings.

The test files of a task are restored from the frozen task before every run, so their bytes
repeat across gradings. The warm server rewrites each distinct file once (an AST transform; no
test code runs) and children reuse the compiled code under their own file name. Installed only
when pytest's internal ``_rewrite_test(fn, config) -> (stat, code)`` has the expected shape;
otherwise pytest's own path runs unchanged.
"""

import ast
import hashlib
import importlib.util
import inspect
import os
import types
from pathlib import Path

try:
    from _pytest.assertion import rewrite as _rewrite
except ImportError:  # pragma: no cover - pytest always has it
    _rewrite = None

_CODE: "dict[str, types.CodeType]" = {}
_ORIGINAL = getattr(_rewrite, "_rewrite_test", None)
SUPPORTED = _ORIGINAL is not None and list(inspect.signature(_ORIGINAL).parameters) == [
    "fn",
    "config",
]
#: pytest 9.2 returns the source's hash (the key of the pyc it may write) where earlier
#: versions return the file's stat: the cached path returns what this pytest expects.
RETURNS_HASH = SUPPORTED and "bytes" in str(inspect.signature(_ORIGINAL).return_annotation)


def _key(source: bytes) -> str:
    return hashlib.sha256(source).hexdigest()


def _rewritten_code(source: bytes, filename: str) -> types.CodeType:
    tree = ast.parse(source, filename=filename)
    _rewrite.rewrite_asserts(tree, source, filename, None)
    return compile(tree, filename, "exec", dont_inherit=True)


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    consts = tuple(
        _with_filename(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


def prewarm(paths) -> None:
    """Rewrite the asserts of each not-yet-seen test file (config-independent defaults)."""
    if not SUPPORTED:
        return
    for path in paths:
        try:
            source = Path(path).read_bytes()
        except OSError:
            continue
        key = _key(source)
        if key not in _CODE:
            try:
                _CODE[key] = _rewritten_code(source, str(path))
            except SyntaxError:
                continue


def _cached_rewrite_test(fn, config):
    stat = os.stat(fn)
    source = Path(fn).read_bytes()
    code = _CODE.get(_key(source))
    if code is None or (config is not None and config.getini("enable_assertion_pass_hook")):
        return _ORIGINAL(fn, config)
    first = importlib.util.source_hash(source) if RETURNS_HASH else stat
    return first, _with_filename(code, str(fn))


if SUPPORTED:
    _rewrite._rewrite_test = _cached_rewrite_test
