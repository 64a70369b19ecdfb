"""The `--lexer` option: which of lark's lexers (its `lexer=` for an LALR parser) masks follow.

Light on purpose (the CLI builds its options from it before importing the compiler): the values
and the one default of the CLI, the Python API, `glrmask check` and the pipeline. docs/semantics.md
says what each one means. The default is lark's own for `parser="lalr"`: the contextual lexer.
"""

from typing import Literal

LexerKind = Literal["basic", "contextual"]
LEXER_KINDS: tuple[LexerKind, ...] = ("basic", "contextual")
DEFAULT_LEXER: LexerKind = "contextual"
