"""Code documents for the benchmark: Go functions and Java files from Debian's sources, stdlib expressions.

Input: the cached source trees of devtools.data (`go_library_sources`, `java_base_sources`) and a lark
parser built with the grammar owner's options (syncode: `Lark(grammar, parser="lalr", lexer="basic",
start="start")`, syncode/parsers/__init__.py `create_base_parser`). Output: (id, text) pairs that
parser accepts, chosen deterministically: candidates in sorted order, shuffled by a seeded
random.Random, taken in that order until `limit` are accepted (so a run parses only what it keeps).

Go: syncode's go.lark starts with `package_clause eos` (its `start` rule), so a document is the file's
own `package` line, a blank line, and one top-level function declaration: from `func` at a line start
to the first `}` at a line start (gofmt puts the closing brace of a top-level function there), or a
one-line `func ... { ... }`. Java: a whole compilation unit (syncode's java.lark `start:
compilation_unit`) with the leading license comment (a block comment before `package` that contains
"Copyright") removed, since every OpenJDK file repeats the same one.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

GO_MAX_BYTES = 3_000
JAVA_MAX_BYTES = 6_000


def go_functions(text: str) -> Iterator[tuple[int, str]]:
    """(1-based line, text) of each top-level function declaration with a body; the text ends in a newline."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.startswith("func "):
            i += 1
            continue
        head = line.rstrip()
        if head.endswith("}") and "{" in head:            # one line: func f() int { return 1 }
            yield i + 1, head + "\n"
            i += 1
            continue
        if not head.endswith("{"):                        # a declaration without a body (assembly stub)
            i += 1
            continue
        for j in range(i + 1, len(lines)):
            if lines[j].startswith("}"):
                yield i + 1, "".join(lines[i:j]) + lines[j].rstrip() + "\n"
                i = j
                break
            if lines[j].strip() and lines[j][:1] not in ("\t", " "):
                break                                     # not gofmt's layout: give up on this one
        i += 1


GO_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)


def go_candidates(files: Iterable[tuple[str, str]], max_bytes: int = GO_MAX_BYTES) -> list[tuple[str, str]]:
    """(id, document) for every function of every (name, text) file, in file order: `package p` + blank
    line + the function, up to `max_bytes` UTF-8 bytes."""
    out = []
    for name, text in files:
        package = GO_PACKAGE.search(text)
        if package is None:
            continue
        for line, function in go_functions(text):
            document = f"package {package.group(1)}\n\n{function}"
            if len(document.encode("utf-8")) <= max_bytes:
                out.append((f"go/{name}:{line}", document))
    return out


JAVA_LICENSE = re.compile(r"\A\s*/\*.*?\*/\s*", re.DOTALL)


def java_document(text: str) -> str:
    """The compilation unit without its leading license comment (only one that mentions Copyright)."""
    found = JAVA_LICENSE.match(text)
    if found and "Copyright" in found.group(0):
        return text[found.end():]
    return text


def java_candidates(files: Iterable[tuple[str, str]], max_bytes: int = JAVA_MAX_BYTES) -> list[tuple[str, str]]:
    """(id, document) for the .java files that are compilation units (not package-info / module-info),
    license comment removed, up to `max_bytes` UTF-8 bytes."""
    out = []
    for name, text in files:
        if name.endswith(("package-info.java", "module-info.java")):
            continue
        document = java_document(text)
        if len(document.encode("utf-8")) <= max_bytes:
            out.append((f"java/{name}", document))
    return out


def select(candidates: list[tuple[str, str]], accepts: Callable[[str], bool], limit: int,
           seed: int) -> list[tuple[str, str]]:
    """Up to `limit` accepted candidates: sorted by id, shuffled with `seed`, accepted ones kept in that
    order until `limit`; returned sorted by id (the same set for the same inputs, whatever the order given)."""
    order = sorted(candidates)
    random.Random(seed).shuffle(order)
    kept = []
    for doc_id, text in order:
        if len(kept) == limit:
            break
        if accepts(text):
            kept.append((doc_id, text))
    return sorted(kept)


def read_tree(root: Path, pattern: str) -> list[tuple[str, str]]:
    """(path relative to root, UTF-8 text) of the files matching `pattern`, sorted; undecodable files skipped."""
    out = []
    for path in sorted(root.rglob(pattern)):
        try:
            out.append((str(path.relative_to(root)), path.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return out



def syncode_parser(grammar: Path):
    """lark as syncode builds it (syncode/parsers/__init__.py `create_base_parser`): LALR, basic lexer,
    `start`."""
    import lark

    return lark.Lark(grammar.read_text(encoding="utf-8"), parser="lalr", lexer="basic", start="start")


def _accepted_by(grammar: Path) -> Callable[[str], bool]:
    from devtools.lark_judge import lark_parses

    parser = syncode_parser(grammar)
    return lambda text: lark_parses(parser, text)


def go_documents(limit: int, seed: int = 0) -> list[tuple[str, str]]:
    """`limit` Go standard library functions (Debian golang-1.19-src) that syncode's go.lark accepts."""
    from devtools.data import go_library_sources, syncode_grammar

    candidates = go_candidates(read_tree(go_library_sources(), "*.go"))
    return select(candidates, _accepted_by(syncode_grammar("go.lark")), limit, seed)


def java_documents(limit: int, seed: int = 0) -> list[tuple[str, str]]:
    """`limit` OpenJDK 17 java.base files (Debian openjdk-17-source) that syncode's java.lark accepts."""
    from devtools.data import java_base_sources, syncode_grammar

    candidates = java_candidates(read_tree(java_base_sources(), "*.java"))
    return select(candidates, _accepted_by(syncode_grammar("java.lark")), limit, seed)
