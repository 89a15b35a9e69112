"""Reading JSON and YAML that people wrote: datasets, annotation files, configuration.

``read_json`` and ``read_yaml`` are the package's one way to parse such text. They refuse
what Python's parsers let through or fail on without saying where: a key given twice in one
object (the parsers keep the last one silently), ``NaN``/``Infinity`` (not JSON, and never a
useful value), a number too large to be finite, an integer of more than 4,300 digits, and a
document nested more than 100 levels deep (the parsers' recursion fails near 1,000). Each is
a ``DocumentError`` naming the line, the column and the field (``inputs.messages[2].role``).
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import math
import re
from collections.abc import Iterator
from typing import Any, Final, NoReturn

from .errors import EvalsError

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "DocumentError", "read_csv", "read_json", "read_yaml"]

MAX_DEPTH: Final = 100
"""How deeply objects and arrays may nest in a document."""

MAX_DIGITS: Final = 4300
"""How many digits an integer may have (Python's own limit for turning one into text)."""


class DocumentError(EvalsError, ValueError):
    """A JSON or YAML document is malformed or holds something refused.

    Attributes:
        problem: What is wrong and what was expected.
        line: The line (counted from 1, or from the ``first_line`` given), when known.
        column: The column (counted from 1), when known.
        field: Where in the document, as a path (``cases[3].inputs.q``), when known.
    """

    def __init__(
        self,
        problem: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(f"{field}: {problem}" if field else problem)
        self.problem = problem
        self.line = line
        self.column = column
        self.field = field


class _Refused(Exception):
    """Raised by a parser hook; the offending place is then found by ``_locate``."""


def _refuse(*_: object) -> NoReturn:
    raise _Refused


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Refused
    return result


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _Refused
    return int(text)


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused
    return value


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_refuse, parse_int=_integer, parse_float=_float
)


def read_json(text: str, *, first_line: int = 1) -> Any:
    """The JSON value of ``text``, refusing duplicate keys, ``NaN``/``Infinity``, huge
    numbers and deep nesting.

    Args:
        text: The document (a whole file, or one line of a JSON Lines file).
        first_line: The line ``text`` starts at, for the error's ``line``.

    Raises:
        DocumentError: The text is not valid JSON or holds something refused.

    Example:
        >>> read_json('{"a": 1, "b": [true]}')
        {'a': 1, 'b': [True]}
        >>> read_json('{"a": {"b": 1, "b": 2}}')
        Traceback (most recent call last):
        ...
        langchain_evals_port.core._documents.DocumentError: a.b: key 'b' given twice in one \
object
    """
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as error:
        raise DocumentError(
            f"not valid JSON: {error.msg}",
            line=first_line + error.lineno - 1,
            column=error.colno,
        ) from None
    except (_Refused, RecursionError):
        _locate(text, first_line)
    if (text.count("{") + text.count("[") > MAX_DEPTH) and _too_deep(value):
        _locate(text, first_line)
    return value


def _too_deep(value: Any) -> bool:
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= MAX_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<punct>[{}\[\],:])
      | (?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)
      | (?P<constant>NaN|-?Infinity)
      | (?P<word>true|false|null)
    )""",
    re.VERBOSE | re.DOTALL,
)


class _Frame:
    __slots__ = ("expect_key", "index", "key", "keys", "mapping")

    def __init__(self, mapping: bool) -> None:
        self.mapping = mapping
        self.keys: set[str] = set()
        self.key: str | None = None
        self.index = 0
        self.expect_key = mapping


def _path(stack: list[_Frame]) -> str | None:
    parts: list[str | int] = []
    for frame in stack:
        if frame.mapping and frame.key is not None:
            parts.append(frame.key)
        elif not frame.mapping:
            parts.append(frame.index)
    return _render(parts)


def _render(parts: list[str | int]) -> str | None:
    """``["a", 0, "b"]`` as ``a[0].b``; a deep path keeps its first and last steps."""
    steps = [f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts]
    if len(steps) > 8:
        steps = [*steps[:4], "…", *steps[-3:]]
    return "".join(steps).removeprefix(".") or None


def _locate(text: str, first_line: int) -> NoReturn:
    """Raise the ``DocumentError`` for the first refused thing in ``text``, which parses up
    to it: the walk repeats the parse token by token, this time knowing where it is."""
    stack: list[_Frame] = []
    position = 0

    def fail(problem: str, at: int) -> NoReturn:
        line = first_line + text.count("\n", 0, at)
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        raise DocumentError(problem, line=line, column=column, field=_path(stack))

    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            break
        position, at = match.end(), match.start(match.lastgroup or 0)
        kind, token = match.lastgroup, match.group(match.lastgroup or 0)
        top = stack[-1] if stack else None
        if kind == "punct":
            if token in "{[":
                if len(stack) >= MAX_DEPTH:
                    fail(f"nested more than {MAX_DEPTH} levels deep", at)
                stack.append(_Frame(mapping=token == "{"))
            elif token in "}]":
                stack.pop()
            elif token == "," and top is not None:
                top.index += 1
                top.expect_key = top.mapping
            elif token == ":" and top is not None:
                top.expect_key = False
        elif kind == "string" and top is not None and top.expect_key:
            key = json.loads(token)
            top.key = key
            if key in top.keys:
                fail(f"key {key!r} given twice in one object", at)
            top.keys.add(key)
        elif kind == "constant":
            fail(f"{token} is not a JSON number; write null or a finite number", at)
        elif kind == "number":
            digits = re.match(r"-?(\d+)", token)
            if "." not in token and "e" not in token.lower() and digits:
                if len(digits.group(1)) > MAX_DIGITS:
                    fail(f"an integer of {len(digits.group(1))} digits; at most {MAX_DIGITS}", at)
            elif not math.isfinite(float(token)):
                shown = token if len(token) <= 20 else token[:20] + "…"
                fail(f"the number {shown} is too large to be finite", at)
    raise DocumentError(f"cannot be read (nested more than {MAX_DEPTH} levels deep?)")


_NON_FINITE = re.compile(r"[-+]?\.(?:inf|nan)", re.IGNORECASE)


def read_yaml(text: str) -> Any:
    """The YAML value of ``text`` (safe types only), refusing duplicate keys, ``.nan`` and
    ``.inf``, and deep nesting.

    Raises:
        DocumentError: The text is not valid YAML or holds something refused.

    Example:
        >>> read_yaml("agents:\\n  a: {enabled: true}\\n  a: {enabled: false}\\n")
        Traceback (most recent call last):
        ...
        langchain_evals_port.core._documents.DocumentError: agents.a: key 'a' given twice \
in one mapping
    """
    # Imported by name: PyYAML ships no type stubs.
    yaml = importlib.import_module("yaml")
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_yaml(node, yaml)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = mark.line + 1 if mark is not None else None
        column = mark.column + 1 if mark is not None else None
        problem = " ".join(str(part) for part in (error.context, error.problem) if part)
        raise DocumentError(
            f"cannot be parsed as YAML: {problem or error}", line=line, column=column
        ) from None
    except yaml.YAMLError as error:
        raise DocumentError(f"cannot be parsed as YAML: {error}") from None
    except RecursionError:
        raise DocumentError(
            f"nested more than {MAX_DEPTH} levels deep", line=loader.line + 1
        ) from None
    finally:
        loader.dispose()


def _check_yaml(root: Any, yaml: Any) -> None:
    seen: set[int] = set()
    stack: list[tuple[Any, list[str | int], int]] = [(root, [], 0)]

    def fail(problem: str, node: Any, path: list[str | int]) -> NoReturn:
        mark: Any = node.start_mark
        raise DocumentError(
            problem,
            line=mark.line + 1,
            column=mark.column + 1,
            field=_render(path),
        )

    while stack:
        node, path, depth = stack.pop()
        if id(node) in seen:  # an alias: already checked where it was defined
            continue
        seen.add(id(node))
        children: list[tuple[Any, list[str | int]]] = []
        if isinstance(node, yaml.MappingNode):
            keys: set[tuple[str, str]] = set()
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                child = [*path, str(name)]
                if name is not None and name != "<<":
                    if (key.tag, name) in keys:
                        fail(f"key {name!r} given twice in one mapping", key, child)
                    keys.add((key.tag, name))
                children.append((value, child))
        elif isinstance(node, yaml.SequenceNode):
            children = [(item, [*path, index]) for index, item in enumerate(node.value)]
        elif node.tag == "tag:yaml.org,2002:float" and _not_finite(node.value):
            fail(f"{node.value} is not a finite number", node, path)
        if children and depth >= MAX_DEPTH:
            fail(f"nested more than {MAX_DEPTH} levels deep", node, path)
        stack.extend((child, child_path, depth + 1) for child, child_path in reversed(children))


def _not_finite(text: str) -> bool:
    if _NON_FINITE.fullmatch(text.strip()):
        return True
    try:
        return not math.isfinite(float(text.replace("_", "")))
    except ValueError:
        return False


def read_csv(text: str) -> Iterator[tuple[int, list[str]]]:
    """The non-empty rows of the CSV ``text``, each with the line it starts at (a quoted
    cell may span several); the first row is the header.

    Raises:
        DocumentError: A cell is longer than the ``csv`` module's limit (131,072
            characters), named by line and column, or the text is not valid CSV.

    Example:
        >>> list(read_csv('q,a\\n\\n"two\\nlines",4\\n'))
        [(1, ['q', 'a']), (3, ['two\\nlines', '4'])]
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    header: list[str] | None = None
    end = 0  # the last line the reader has consumed
    try:
        for cells in reader:
            start, end = end + 1, reader.line_num
            if cells:
                header = cells if header is None else header
                yield start, cells
    except csv.Error as error:
        if "field larger than field limit" not in str(error):
            raise DocumentError(f"not valid CSV: {error}", line=end + 1) from None
        limit = csv.field_size_limit()
        index = _long_cell(text, end + 1, limit)
        column = header[index] if header is not None and index < len(header) else None
        raise DocumentError(
            f"a cell of more than {limit:,} characters; a CSV cell holds at most that "
            "much, put long values in a JSONL file",
            line=end + 1,
            field=column or f"cell {index + 1}",
        ) from None


def _long_cell(text: str, line: int, limit: int) -> int:
    """The index of the first cell over ``limit`` characters in the CSV row at ``line``."""
    position = 0
    for _ in range(line - 1):
        position = text.index("\n", position) + 1
    index = length = 0
    quoted = False
    for char in text[position:]:
        if char == '"':
            quoted = not quoted
        elif not quoted and char == ",":
            index, length = index + 1, 0
            continue
        elif not quoted and char in "\r\n":
            break
        length += 1
        if length > limit:
            break
    return index
