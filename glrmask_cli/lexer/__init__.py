"""Stage 2: terminal patterns -> one combined, minimized byte DFA (`LexerTables`)."""

from glrmask_cli.lexer.scanner import LexerBuild as LexerBuild
from glrmask_cli.lexer.scanner import build_lexer as build_lexer
