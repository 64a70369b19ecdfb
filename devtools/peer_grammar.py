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
# A C block comment: lark's lazy `/\*[\s\S]*?\*/` ends at the first `*/`, as this greedy form does.
C_COMMENT_REGEX = r"\/\*[^*]*\*+(?:[^\/*][^*]*\*+)*\/"
# syncode's go.lark: `.*?` up to the first closing quote (`.` stops at a newline) is `[^q\n]*`
GO_RAW_STRING_REGEX = r"`[^`\n]*`"
GO_STRING_REGEX = r'"[^"\n]*"'
GO_STRING_PEER = (("RAW_STRING_LIT: /`.*?`/", f"RAW_STRING_LIT: /{GO_RAW_STRING_REGEX}/"),
                  ('INTERPRETED_STRING_LIT: /".*?"/i', f"INTERPRETED_STRING_LIT: /{GO_STRING_REGEX}/i"))
# syncode's java.lark: the same string form, and its block comment
JAVA_PEER = (('string_literal: /".*?"/', f"string_literal: /{GO_STRING_REGEX}/"),
             (r"BLOCK_COMMENT: /\/\*[\s\S]*?\*\//", f"BLOCK_COMMENT: /{C_COMMENT_REGEX}/"))
# lark's python.lark: STRING and LONG_STRING without lookarounds and lazy quantifiers. A string ends at
# the first quote not escaped by a backslash (lark: the shortest `.*?` whose closing quote follows an
# even run of backslashes); a long string's body never ends in its quote character.
PYTHON_STRING = r"""STRING: /([ubf]?r?|r[ubf])("(?!"").*?(?<!\\)(\\\\)*?"|'(?!'').*?(?<!\\)(\\\\)*?')/i"""
PYTHON_LONG_STRING = (r'LONG_STRING: /([ubf]?r?|r[ubf])(""".*?(?<!\\)(\\\\)*?"""|'
                      r"'''.*?(?<!\\)(\\\\)*?''')/is")
PYTHON_STRING_REGEX = r"""([ubf]?r?|r[ubf])("(?:[^"\\\n]|\\[^\n])*"|'(?:[^'\\\n]|\\[^\n])*')"""
PYTHON_LONG_STRING_REGEX = (r'([ubf]?r?|r[ubf])("""(?:"?"?(?:[^"\\]|\\[\s\S]))*"""|'
                            r"'''(?:'?'?(?:[^'\\]|\\[\s\S]))*''')")
# DEC_NUMBER's `0+` form ends in a lookahead `(?![1-9])`: at the end of a lexeme it only limits what may
# follow (`05` is no Python number either way), the terminal's language is the same without it.
PYTHON_ZERO_LOOKAHEAD = '|   "0"             ("_"?  "0"                            )* /(?![1-9])/'
PYTHON_PEER = ((PYTHON_STRING, f"STRING: /{PYTHON_STRING_REGEX}/i"),
               (PYTHON_LONG_STRING, f"LONG_STRING: /{PYTHON_LONG_STRING_REGEX}/is"),
               (PYTHON_ZERO_LOOKAHEAD, PYTHON_ZERO_LOOKAHEAD.removesuffix(" /(?![1-9])/")))


class PeerGrammarError(ValueError):
    """The grammar cannot be rewritten for peers as asked; the message is `where: what`."""


_IMPORT = re.compile(r"^%import\s+common\.([A-Z_][A-Z0-9_]*)\s*(?:->\s*([A-Z_][A-Z0-9_]*))?\s*$")
_IMPORT_LIST = re.compile(r"^%import\s+common\s*\(([^)]*)\)\s*$")
_DEFINITION = re.compile(r"^([A-Z_][A-Z0-9_]*)(?:\.\d+)?\s*:")


@functools.lru_cache(maxsize=1)
def _common_blocks() -> dict[str, str]:
    """lark's common.lark as {terminal name: its definition lines}."""
    import lark

    return _terminal_blocks((Path(lark.__file__).parent / "grammars" / "common.lark").read_text())


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
        if single and single.group(2) and single.group(2) != single.group(1):   # `X -> X` is a plain import
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


_TEMPLATE_DEF = re.compile(r"(\??)(_?[a-z][a-z0-9_]*)\{([^}]*)\}\s*:")


def _blocks(text: str) -> list[str]:
    """The grammar cut before every line that starts at column 0 (a definition, a comment, a directive);
    indented and `|` lines stay with the definition above them."""
    starts = [m.start() for m in re.finditer(r"^(?![ \t|\r\n])", text, re.MULTILINE)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)], strict=True)]


def expand_templates(text: str, where: str) -> str:
    """lark's rule templates written out: `t{p}: body` and each use `t{arg}` become a rule `t__arg`
    whose body is `body` with `p` replaced by `arg` (what lark does when it loads the grammar).
    Arguments must be rule or terminal names."""
    templates: dict[str, tuple[str, list[str], str]] = {}
    kept = []
    for block in _blocks(text):
        match = _TEMPLATE_DEF.match(block)
        if match:
            templates[match.group(2)] = (match.group(1), [p.strip() for p in match.group(3).split(",")],
                                         block[match.end():].rstrip())
        else:
            kept.append(block)
    if not templates:
        return text
    names = "|".join(sorted(map(re.escape, templates), key=len, reverse=True))
    use = re.compile(rf"(?<![\w.])({names})\{{([^{{}}]*)\}}")
    out = "".join(kept).rstrip("\n") + "\n\n// lark rule templates, written out\n"
    while (found := use.search(out)) is not None:
        name, args = found.group(1), [x.strip() for x in found.group(2).split(",")]
        inline, params, body = templates[name]
        if len(args) != len(params) or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x) for x in args):
            raise PeerGrammarError(f"{where}: template use `{found.group(0)}`: arguments must be "
                                   f"{len(params)} rule or terminal names")
        new_name = "__".join([name, *args]).lower()          # rule names are lowercase
        out = re.sub(rf"(?<![\w.]){re.escape(found.group(0))}", new_name, out)
        for param, arg in zip(params, args, strict=True):
            body = re.sub(rf"(?<![\w.]){re.escape(param)}(?!\w)", arg, body)
        out += f"{inline}{new_name}:{body}\n"
    return out


_RELATIVE_IMPORT = re.compile(r"^%import\s+\.([A-Za-z_][A-Za-z0-9_]*)\.([A-Z_][A-Z0-9_]*)[ \t]*$", re.MULTILINE)


def _terminal_blocks(text: str) -> dict[str, str]:
    """A grammar's terminal definitions {NAME: its lines, `//` comments dropped}."""
    blocks: dict[str, str] = {}
    name = None
    for line in text.splitlines():
        line = re.sub(r"\s*//.*$", "", line)
        match = _DEFINITION.match(line)
        if match:
            name = match.group(1)
            blocks[name] = line
        elif name and line[:1] in (" ", "\t", "|") and line.strip():
            blocks[name] += "\n" + line
        else:
            name = None
    return blocks


def inline_relative_imports(text: str, folder: Path, where: str) -> str:
    """Replace `%import .module.X` by X's definition from folder/module.lark; the terminals X uses come
    along renamed MODULE__NAME (lark namespaces an import's dependencies too)."""
    for match in list(_RELATIVE_IMPORT.finditer(text)):
        module, name = match.group(1), match.group(2)
        path = folder / f"{module}.lark"
        if not path.is_file():
            raise PeerGrammarError(f"{where}: `{match.group(0).strip()}`: {path} not found")
        blocks = _terminal_blocks(path.read_text(encoding="utf-8"))
        if name not in blocks:
            raise PeerGrammarError(f"{where}: `{match.group(0).strip()}`: no terminal {name} in {path.name}")
        wanted, todo = [], [name]
        while todo:
            current = todo.pop()
            if current not in wanted:
                wanted.append(current)
                body = blocks[current].split(":", 1)[1]
                todo.extend(n for n in re.findall(r"\b[A-Z_][A-Z0-9_]*\b", body) if n in blocks)

        def renamed(block: str, module: str = module, name: str = name, blocks: dict = blocks) -> str:
            return re.sub(r"\b[A-Z_][A-Z0-9_]*\b", lambda m: m.group(0) if m.group(0) == name or
                          m.group(0) not in blocks else f"{module.upper()}__{m.group(0)}", block)

        definition = f"// inlined from {path.name}\n" + "\n".join(renamed(blocks[n]) for n in sorted(wanted))
        text = text.replace(match.group(0), definition, 1)
    return text


_RULE_DEF = re.compile(r"([?!]?)(_?[a-z][a-z0-9_]*)(?:\.-?\d+)?\s*:")
_LITERALS = re.compile(r'"(?:[^"\\\n]|\\.)*"i?|/(?:[^/\\\n]|\\.)+/[imslux]*|->\s*\w+|//[^\n]*')


def prune_unreachable(text: str, start: str) -> str:
    """Drop the rules that `start` cannot reach, and `%declare` lines whose terminals nothing kept uses
    (python.lark's `%declare _INDENT _DEDENT` belongs to statements, not to `eval_input`)."""
    blocks = _blocks(text)
    rules = {m.group(2): i for i, b in enumerate(blocks) if (m := _RULE_DEF.match(b))}
    if start not in rules:
        raise PeerGrammarError(f"prune_unreachable: no rule {start!r}")
    seen, todo = set(), [start]
    while todo:
        name = todo.pop()
        if name in seen or name not in rules:
            continue
        seen.add(name)
        body = _LITERALS.sub(" ", blocks[rules[name]].split(":", 1)[1])
        todo.extend(re.findall(r"(?<![\w.])_?[a-z][a-z0-9_]*(?![\w{])", body))
    dropped = {i for name, i in rules.items() if name not in seen}
    kept = [b for i, b in enumerate(blocks) if i not in dropped]
    used = set(re.findall(r"\b[A-Z_][A-Z0-9_]*\b", _LITERALS.sub(" ", "".join(
        b for b in kept if not b.startswith("%declare")))))
    out = []
    for block in kept:
        if block.startswith("%declare"):
            names = [n for n in block.split()[1:] if n in used]
            if not names:
                continue
            block = "%declare " + " ".join(names) + "\n"
        out.append(block)
    return "".join(out)
