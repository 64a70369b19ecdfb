"""Grammar text for peer engines (llguidance, xgrammar): the same language in a form they read.

Used by the benchmark (bench/workloads.py) and by oracle 4 of `make exactness` (devtools/exactness.py).
`inline_common_imports` replaces `%import common.X` by X's definition from lark's common.lark (peers'
Lark importers skip %import); `strip_priorities` drops `name.N:` priorities (llguidance and xgrammar
refuse them). The `*_PEER` values rewrite one grammar's terminal into a form the peers accept, the same
language (tests/unit/bench/test_workloads.py compares the ESCAPED_STRING and verilog comment regexes
with the originals on every short string).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

VERILOG_COMMENT_PEER = r"/\/\*[^*]*\*+(?:[^\/*][^*]*\*+)*\//"
# lark's common.ESCAPED_STRING without its lookbehind and lazy quantifiers
ESCAPED_STRING_REGEX = r'"(?:[^"\\\n]|\\[^\n])*"'
ESCAPED_STRING_PEER = (('ESCAPED_STRING : "\\"" _STRING_ESC_INNER "\\""', f"ESCAPED_STRING: /{ESCAPED_STRING_REGEX}/"),
                       ("_STRING_ESC_INNER: _STRING_INNER /(?<!\\\\)(\\\\\\\\)*?/\n", ""),
                       ("_STRING_INNER: /.*?/\n", ""))
# syncode's sql.lark: lazy `*?` where the class already excludes the closing quote: greedy is the same
SQL_STRING_PEER = ((r'_STRING_INNER: /(?:[^"\\]|\\.)*?/', r'_STRING_INNER: /(?:[^"\\]|\\.)*/'),)


class PeerGrammarError(ValueError):
    """The grammar cannot be rewritten for peers as asked; the message is `where: what`."""


_IMPORT = re.compile(r"^%import\s+common\.([A-Z_][A-Z0-9_]*)\s*(?:->\s*([A-Z_][A-Z0-9_]*))?\s*$")
_IMPORT_LIST = re.compile(r"^%import\s+common\s*\(([^)]*)\)\s*$")
_DEFINITION = re.compile(r"^([A-Z_][A-Z0-9_]*)(?:\.\d+)?\s*:")


@functools.lru_cache(maxsize=1)
def _common_blocks() -> dict[str, str]:
    """lark's common.lark as {terminal name: its definition lines}."""
    import lark

    blocks: dict[str, str] = {}
    name = None
    for line in (Path(lark.__file__).parent / "grammars" / "common.lark").read_text().splitlines():
        match = _DEFINITION.match(line)
        if match:
            name = match.group(1)
            blocks[name] = line
        elif name and line[:1] in (" ", "\t", "|") and line.strip():
            blocks[name] += "\n" + line
        else:
            name = None
    return blocks


def _with_dependencies(names: list[str]) -> list[str]:
    blocks, wanted, todo = _common_blocks(), [], list(names)
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        wanted.append(name)
        body = blocks[name].split(":", 1)[1]
        todo.extend(n for n in re.findall(r"\b[A-Z_][A-Z0-9_]*\b", body) if n in blocks)
    return sorted(wanted)


def inline_common_imports(text: str, where: str) -> str:
    """Replace `%import common.X` (and `%import common (X, Y)`) by X's definition from lark's common.lark."""
    blocks, imported, kept = _common_blocks(), [], []
    for line in text.splitlines():
        single, listed = _IMPORT.match(line.strip()), _IMPORT_LIST.match(line.strip())
        if single and single.group(2):
            raise PeerGrammarError(f"{where}: `{line.strip()}`: renaming imports is not inlined; "
                                   "write the terminal out")
        names = [single.group(1)] if single else [n.strip() for n in listed.group(1).split(",")] if listed else None
        if names is None:
            kept.append(line)
            continue
        for name in names:
            if name not in blocks:
                raise PeerGrammarError(f"{where}: %import common.{name}: not in lark's common.lark")
        imported.extend(names)
    if not imported:
        return text
    defined = {m.group(1) for m in map(_DEFINITION.match, kept) if m}
    extra = [blocks[n] for n in _with_dependencies(imported) if n not in defined]
    return "\n".join(kept + ["", "// inlined from lark's common.lark"] + extra) + "\n"


_PRIORITY = re.compile(r"^(\??[_A-Za-z][_A-Za-z0-9]*)\.-?\d+(\s*:)", re.MULTILINE)


def strip_priorities(text: str) -> str:
    """Drop `name.N:` priorities (llguidance and xgrammar refuse them). Rule priorities only rank
    parse trees; terminal priorities break same-length lexeme ties, which these peers keep ambiguous."""
    return _PRIORITY.sub(r"\1\2", text)
