"""Stage 3: the parser side. cfg (BNF with ids) -> normalize (language-preserving rewrites) -> lr."""
