"""Load an artifact: the container (format.py) -> validated lexer, LR and DWA tables -> `Artifact`.

`load(path)` memory-maps the expanded sections, checks that every section GLRMask needs is there with
the right dtype and shape and that every id stored in one table indexes validly into the others, then
sets up the Python views the hot path reads (DWA edges as dicts), each built on first use (lazy.py). Any problem raises
`ArtifactError`; nothing in the file is ever executed.
"""

from __future__ import annotations

import functools
import os
import weakref
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np

from glrmask_runtime.bounded import BoundedCache
from glrmask_runtime.contextual import ContextualRecognizer, ContextualState
from glrmask_runtime.errors import ArtifactError, TokenizerMismatch
from glrmask_runtime.format import Container, read_container
from glrmask_runtime.glr import GSSNode
from glrmask_runtime.lazy import Lookup, OnFirstUse, csr_lookups, csr_slices, flat
from glrmask_runtime.recognizer import AnyRecognizer, ParseState, Recognizer
from glrmask_runtime.schema import ARTIFACT_KIND as ARTIFACT_KIND
from glrmask_runtime.schema import optional_sections_for, sections_for
from glrmask_runtime.stack_memo import StackMemo
from glrmask_runtime.tables import START, LexerTables, LRTables

if TYPE_CHECKING:
    from glrmask_runtime.matcher import Matcher


COMBINED_MASKS = 256     # row combinations kept per artifact (`matcher._combined`): 3 MB with cl100k's rows
BOOL_ROWS = 256          # pool rows kept unpacked for `mask()` (`bool_row`): 25 MB with cl100k's 100k tokens

# DWA state -> accept id: an int64 `array` (`_int_array`; format 1: a list).
AcceptIds: TypeAlias = "Sequence[int]"


class Artifact:
    """A loaded, validated artifact. Immutable and shareable; `matcher()` makes per-request state.

    Pickling: an artifact pickles as its absolute path and the sha256 of its file (`fingerprint`),
    a few hundred bytes. Unpickling returns the artifact already loaded in that process with that
    path and fingerprint, or loads the file again and raises `ArtifactError` if its sha256 differs
    (the file was rebuilt or replaced since) or it cannot be loaded.
    """

    def __init__(self, container: Container):
        self.path = container.path
        self.container = container
        self.fingerprint = container.file_sha256
        self._abspath = os.path.abspath(container.path)
        self.metadata: dict[str, Any] = container.metadata
        s = container.sections
        self._sections = s
        self._validate_kind()
        self.vocab_size = int(self.metadata["tokenizer"]["vocab_size"])
        self.eos_token_ids = tuple(int(t) for t in self.metadata["tokenizer"]["eos_ids"])
        self.lexer = LexerTables(
            transitions=s["lexer.transitions"], close_sets=s["lexer.close_sets"],
            viable_sets=s["lexer.viable_sets"], term_set_offsets=s["lexer.term_set_offsets"],
            term_set_items=s["lexer.term_set_items"], ignored=s["lexer.ignored"])
        self.lr = LRTables(
            n_terminals=int(self.metadata["parser"]["n_terminals"]),
            action_offsets=s["lr.action_offsets"], actions=s["lr.actions"], goto=s["lr.goto"],
            rule_lhs=s["lr.rule_lhs"], rule_len=s["lr.rule_len"])
        self.rows = s["rows.bits"]
        self.rows_int32 = self.rows.view(np.int32)
        self._token_offsets = s["vocab.token_offsets"]
        self._token_data = s["vocab.token_data"]
        self._token_cache: dict[int, bytes] = {}
        n_accept = _validate_tables(self)
        # lark's contextual lexer (format 4, both sections or neither): per LR state the START of its
        # context; a basic-lexer artifact has one context, whose START is START.
        self.contextual = "lr.lexer_start" in s
        self.lexer_start: list[int] | None = s["lr.lexer_start"].tolist() if self.contextual else None
        # Error messages name terminals as the grammar wrote them ('"}"', 'STRING'), not by number.
        self.recognizer: AnyRecognizer
        if self.contextual:
            starts = s["lr.lexer_start"]
            is_start = np.zeros(self.lexer.n_states, dtype=bool)
            is_start[starts] = True
            is_start[START] = True
            self.recognizer = ContextualRecognizer(self.lexer, starts, s["lexer.restart"], is_start, self.lr,
                                                   self.terminal_names)
        else:
            self.recognizer = Recognizer(self.lexer, self.lr, self.terminal_names)
        self.n_dwa_states = int(s["dwa.default"].shape[0])
        # Per-state Python views are built on first use (lazy.py): a load costs milliseconds whatever
        # the artifact's size, and a process holds only what its requests reached.
        # per DWA state, compact (a process's own memory: 8 bytes a state) and read as Python ints
        self.dwa_default = _int_array(s["dwa.default"])
        # DWA state -> LR state -> the next state (a missing LR state: the default edge; see `dwa_edge_map`)
        self.dwa_edges = csr_lookups(s["dwa.edge_offsets"], s["dwa.edge_labels"], s["dwa.edge_targets"],
                                     self.lr.n_states, self.dwa_default.__getitem__)
        self.accept_of: AcceptIds
        self.row_maps: OnFirstUse[Lookup]      # lexer state -> accept id -> row (missing: 0, the empty row)
        # per DWA state, 1 where a walk takes its accept id when it passes it, not only where it stops (format 5)
        self.emits = (s["dwa.emits"].astype(np.uint8).tobytes() if "dwa.emits" in s
                      else bytes(self.n_dwa_states))
        # LR state -> the DWA roots a walk from a top in that state starts at
        self.dwa_roots: OnFirstUse[tuple[int, ...]]
        # lexer state -> the roots whose walks can give a non-empty row there
        self.q_roots: OnFirstUse[frozenset[int]]
        # lexer state -> its runtime closes: (term-set id, row of the tokens that close, roots allowed after)
        self.closes: OnFirstUse[tuple[tuple[int, int, frozenset[int]], ...]]
        if self.container.format_version == 1:
            self.dwa_roots = OnFirstUse(lambda _: (0,))
            self.accept_of, self.row_maps = _dense_row_maps(s["dwa.row_by_lexer_state"])
            every = frozenset([0])
            self.q_roots = OnFirstUse(lambda _: every)
            self.closes = OnFirstUse(lambda _: ())
            self.n_runtime_closes = 0
        else:
            self.dwa_roots = csr_slices(s["dwa.root_offsets"], s["dwa.roots"], tuple)
            self.accept_of = _int_array(s["dwa.accept_of"])
            self.row_maps = csr_lookups(s["rows.q_offsets"], s["rows.q_accepts"], s["rows.q_rows"], n_accept,
                                        _no_row)
            every = frozenset(np.unique(s["dwa.roots"]).tolist())
            self.q_roots = _root_sets(s, "dwa.q_root", every)
            self.closes = _closes(s, _root_sets(s, "rows.close_root", every))
            self.n_runtime_closes = int(s["rows.close_sets"].size)   # over every lexer state
        # masks may take several walks and a GLR step (several roots, runtime closes): what was
        # computed on stacks is worth remembering by them (`mask_memo`); one walk is not
        self.several_walks = len(every) > 1 or self.n_runtime_closes > 0
        # (lexer state, LR state) -> the roots a walk from that top takes there (roots_at)
        self._roots_at: dict[int, tuple[int, ...]] = {}
        self._lr_states = self.lr.n_states
        self._bool_rows: BoundedCache[int, np.ndarray] = BoundedCache(BOOL_ROWS)
        # (row ids, closes' row ids) -> the combined mask; filled by matcher._combined
        self.combined_masks: BoundedCache[tuple[Any, ...], np.ndarray] = BoundedCache(COMBINED_MASKS)
        self.mask_memo = StackMemo()
        _prefault(self.rows)
        _LOADED[(self._abspath, self.fingerprint)] = self

    def forget(self) -> None:
        """Empty what masks and commits learnt on this artifact (the stack memo, row combinations,
        the parser's remembered steps); masks stay the same, the next ones are computed afresh.
        For benchmarks that replay the same input and want each pass to do the same work."""
        self.mask_memo.clear()
        self.combined_masks.clear()
        self.recognizer.parser.forget_steps()

    def __reduce__(self) -> tuple[object, ...]:
        return _restore_artifact, (self._abspath, self.fingerprint)

    def _validate_kind(self) -> None:
        if self.metadata.get("kind") != ARTIFACT_KIND:
            raise ArtifactError(self.path, "not a GLRMask Parser DWA artifact", ARTIFACT_KIND,
                                self.metadata.get("kind"))
        version = self.container.format_version
        optional = optional_sections_for(version)
        for name, spec in {**sections_for(version), **optional}.items():
            array = self._sections.get(name)
            if array is None:
                if name in optional:
                    continue
                raise ArtifactError(self.path, f"missing section {name}")
            if array.dtype != spec.dtype or array.ndim != spec.ndim:
                raise ArtifactError(self.path, f"section {name} has the wrong type",
                                    spec.describe(), f"{array.dtype.str} {array.ndim}-D")
        try:
            int(self.metadata["tokenizer"]["vocab_size"])
            [int(t) for t in self.metadata["tokenizer"]["eos_ids"]]
            n_terminals = int(self.metadata["parser"]["n_terminals"])
        except (KeyError, TypeError, ValueError) as err:
            raise ArtifactError(self.path, f"metadata field missing or malformed: {err}") from None
        # grammar.terminals: the display names by terminal id (END, the last id, has none). Optional:
        # without it messages say "terminal 7".
        grammar = self.metadata.get("grammar")
        names = grammar.get("terminals") if isinstance(grammar, dict) else None
        if names is not None and not (isinstance(names, list) and len(names) == n_terminals - 1
                                      and all(isinstance(name, str) for name in names)):
            raise ArtifactError(self.path, "metadata grammar.terminals must list one name per terminal",
                                f"{n_terminals - 1} strings", names if not isinstance(names, list) else
                                f"{len(names)} items")
        self.terminal_names: tuple[str, ...] | None = tuple(names) if names is not None else None

    def roots_at(self, lexer_state: int, top: int) -> tuple[int, ...]:
        """The roots walked from a top in LR state `top` when the open lexeme is in `lexer_state`:
        those the top lists whose walks can give a non-empty row there (cached per pair)."""
        key = lexer_state * self._lr_states + top
        found = self._roots_at.get(key)
        if found is None:
            allowed = self.q_roots[lexer_state]
            found = self._roots_at[key] = tuple(r for r in self.dwa_roots[top] if r in allowed)
        return found

    def threads(self, state: ParseState | ContextualState) -> tuple[ParseState, ...]:
        """The (lexer state, stacks) pairs a recognizer state holds: one for the basic lexer; with
        the contextual lexer one per lexer state its stacks' contexts lex the output in."""
        return state.threads if isinstance(state, ContextualState) else (state,)

    def split_by_start(self, stacks: tuple[GSSNode, ...]) -> list[tuple[int, tuple[GSSNode, ...]]]:
        """`stacks` by the START their tops' lexer contexts lex from, sorted (one part, START, for
        the basic lexer): what a runtime close hands to the walks."""
        if self.lexer_start is None:
            return [(START, stacks)] if stacks else []
        parts: dict[int, list[GSSNode]] = {}
        for node in stacks:
            parts.setdefault(self.lexer_start[node.state], []).append(node)
        return [(start, tuple(nodes)) for start, nodes in sorted(parts.items())]

    def token_bytes(self, token_id: int) -> bytes:
        """The token's bytes (b"" for special tokens); cached per token, since commits repeat them."""
        found = self._token_cache.get(token_id)
        if found is None:
            lo, hi = int(self._token_offsets[token_id]), int(self._token_offsets[token_id + 1])
            found = self._token_cache[token_id] = self._token_data[lo:hi].tobytes()
        return found

    def dwa_edge_map(self, d: int) -> dict[int, int]:
        """DWA state d's explicit edges as stored, LR state -> next state (its default edge apart),
        for tools; walks read `dwa_edges`, whose entries may list every LR state."""
        s = self._sections
        lo, hi = int(s["dwa.edge_offsets"][d]), int(s["dwa.edge_offsets"][d + 1])
        return dict(zip(s["dwa.edge_labels"][lo:hi].tolist(), s["dwa.edge_targets"][lo:hi].tolist(), strict=True))

    def lr_core(self, state: int) -> str | None:
        """LR state `state`'s kernel items as text (`object -> "{" . members "}"`), if the artifact
        has them (the optional lr.core_* sections), for explanations."""
        if "lr.core_text" not in self._sections:
            return None
        offsets = self._sections["lr.core_offsets"]
        lo, hi = int(offsets[state]), int(offsets[state + 1])
        return bytes(self._sections["lr.core_text"][lo:hi]).decode("utf-8", "replace")

    def tokens_starting_with(self, prefix: bytes) -> np.ndarray:
        """bool (vocab_size,): the tokens whose bytes start with `prefix` (all ids for b"")."""
        starts = self._token_offsets[:-1].astype(np.int64)
        ends = self._token_offsets[1:].astype(np.int64)
        found = (ends - starts) >= len(prefix)
        for k, byte in enumerate(prefix):
            candidates = np.flatnonzero(found)
            found[candidates] = self._token_data[starts[candidates] + k] == byte
        return found

    def bool_row(self, row: int) -> np.ndarray:
        """Row `row` of the pool as a read-only bool array of shape (vocab_size,), cached (the last
        `BOOL_ROWS` rows unpacked: a row is 8x its packed size, and a pool may hold tens of thousands)."""
        cached = self._bool_rows.get(row)
        if cached is None:
            bits = np.unpackbits(self.rows[row].view(np.uint8), bitorder="little")[:self.vocab_size]
            cached = bits.view(bool)
            cached.flags.writeable = False
            self._bool_rows.put(row, cached)
        return cached

    @functools.cached_property
    def emitting(self) -> frozenset[int]:
        """The DWA states whose accept id a walk takes when it passes them (`emits`), as a set."""
        return frozenset(np.flatnonzero(np.frombuffer(self.emits, dtype=np.uint8)).tolist())

    def matcher(self) -> Matcher:
        """A fresh matcher at the start of the grammar."""
        from glrmask_runtime.matcher import Matcher

        return Matcher(self)


def load(path: str | os.PathLike[str], *, tokenizer_fingerprint: str | None = None) -> Artifact:
    """Memory-map and validate an artifact.

    Args:
        path: the `.glrm` file written by `glrmask build`.
        tokenizer_fingerprint: if given, the artifact must have been built for exactly this
            vocabulary (`Vocabulary.fingerprint`), else `TokenizerMismatch` is raised.
    Raises:
        ArtifactError (or a subclass) for any missing, truncated, corrupt or mismatched file.
    """
    artifact = Artifact(read_container(path))
    if tokenizer_fingerprint is not None:
        found = artifact.metadata["tokenizer"].get("fingerprint")
        if found != tokenizer_fingerprint:
            raise TokenizerMismatch(str(path), "artifact was built for another tokenizer "
                                    f"({artifact.metadata['tokenizer'].get('name')!r})",
                                    tokenizer_fingerprint, found)
    return artifact


# Artifacts alive in this process by (absolute path, file sha256): unpickling many matchers loads once.
_LOADED: weakref.WeakValueDictionary[tuple[str, str], Artifact] = weakref.WeakValueDictionary()


def _restore_artifact(path: str, fingerprint: str) -> Artifact:
    """Unpickle: the live artifact with this path and fingerprint, else a fresh load that must match."""
    alive = _LOADED.get((path, fingerprint))
    if alive is not None:
        return alive
    artifact = load(path)
    if artifact.fingerprint != fingerprint:
        raise ArtifactError(path, "artifact file changed since it was pickled (sha256 differs); "
                            "the pickled matcher state belongs to the old file", fingerprint, artifact.fingerprint)
    return artifact


def _check(condition: bool, path: str, what: str) -> None:
    if not condition:
        raise ArtifactError(path, what)


def _in_range(array: np.ndarray, low: int, high: int) -> bool:
    return array.size == 0 or (int(array.min()) >= low and int(array.max()) < high)


def _validate_tables(art: Artifact) -> int:
    """Cross-check every id against the table it indexes, so the hot path can trust them; returns
    the number of accept ids the row tables were checked against (0 for format 1, which has none)."""
    p, s = art.path, art._sections
    lexer, lr = art.lexer, art.lr
    n_lex, n_sets = lexer.transitions.shape[0], lexer.term_set_offsets.shape[0] - 1
    _check(lexer.transitions.shape == (n_lex, 256) and n_lex >= 2, p, "lexer transition table shape")
    _check(_in_range(lexer.transitions, 0, n_lex), p, "lexer transition out of range")
    _check(lexer.close_sets.shape == (n_lex, 257) and _in_range(lexer.close_sets, 0, n_sets), p, "lexer close sets")
    _check(lexer.viable_sets.shape == (n_lex,) and _in_range(lexer.viable_sets, 0, n_sets), p, "lexer viable sets")
    _check(n_sets >= 1 and _monotone(lexer.term_set_offsets, lexer.term_set_items.size), p, "lexer term-set offsets")
    _check(_in_range(lexer.term_set_items, 0, lr.n_terminals - 1), p, "lexer terminal id out of range")
    _check(_in_range(lexer.ignored, 0, lr.n_terminals - 1), p, "ignored terminal out of range")
    n_lr, n_rules = lr.goto.shape[0], lr.rule_lhs.shape[0]
    _check(n_lr >= 1 and lr.action_offsets.shape == (n_lr * lr.n_terminals + 1,), p, "LR action table shape")
    _check(_monotone(lr.action_offsets, lr.actions.size), p, "LR action offsets")
    kinds, args = lr.actions & 3, lr.actions >> 2
    shifts, reduces = args[kinds == 0], args[kinds == 1]
    _check(bool(np.all(kinds <= 2)) and _in_range(shifts, 0, n_lr) and _in_range(reduces, 0, n_rules), p, "LR actions")
    _check(_in_range(lr.goto, -1, n_lr), p, "LR goto out of range")
    _check(lr.rule_len.shape == (n_rules,) and _in_range(lr.rule_lhs, 0, lr.goto.shape[1]), p, "LR rules")
    _check(_in_range(lr.rule_len, 1, 1 << 16), p, "LR rule length")
    n_dwa = s["dwa.default"].shape[0]
    _check(n_dwa >= 1 and _monotone(s["dwa.edge_offsets"], s["dwa.edge_labels"].size)
           and s["dwa.edge_offsets"].shape == (n_dwa + 1,), p, "DWA edge offsets")
    _check(s["dwa.edge_targets"].shape == s["dwa.edge_labels"].shape, p, "DWA edge targets")
    _check(_in_range(s["dwa.edge_targets"], 0, n_dwa) and _in_range(s["dwa.default"], -1, n_dwa), p,
           "DWA edge target out of range")
    _check(_in_range(s["dwa.edge_labels"], 0, n_lr), p, "DWA edge label out of range")
    n_rows = art.rows.shape[0]
    if "dwa.roots" in s:
        _check(s["dwa.root_offsets"].shape == (n_lr + 1,) and _monotone(s["dwa.root_offsets"], s["dwa.roots"].size)
               and _in_range(s["dwa.roots"], 0, n_dwa), p, "DWA roots")
        accept_of = s["dwa.accept_of"]
        n_accept = int(accept_of.max()) + 1 if accept_of.size else 0
        _check(accept_of.shape == (n_dwa,) and _in_range(accept_of, 0, n_dwa), p, "DWA accept ids")
        _check(s["rows.q_offsets"].shape == (n_lex + 1,)
               and _monotone(s["rows.q_offsets"], s["rows.q_accepts"].size)
               and s["rows.q_rows"].shape == s["rows.q_accepts"].shape, p, "row table offsets")
        _check(_in_range(s["rows.q_accepts"], 0, n_accept) and _in_range(s["rows.q_rows"], 0, n_rows), p, "row table")
        _check(s["rows.close_offsets"].shape == (n_lex + 1,)
               and _monotone(s["rows.close_offsets"], s["rows.close_sets"].size)
               and s["rows.close_rows"].shape == s["rows.close_sets"].shape, p, "close table offsets")
        _check(_in_range(s["rows.close_sets"], 1, n_sets) and _in_range(s["rows.close_rows"], 0, n_rows), p,
               "close table")
        for kind, n in (("dwa.q_root", n_lex), ("rows.close_root", s["rows.close_sets"].size)):
            if f"{kind}s" in s or f"{kind}_offsets" in s:
                offsets, roots = s.get(f"{kind}_offsets"), s.get(f"{kind}s")
                _check(offsets is not None and roots is not None and offsets.shape == (n + 1,)
                       and _monotone(offsets, roots.size) and _in_range(roots, 0, n_dwa), p,
                       f"walk filter {kind}s")
        if "dwa.emits" in s:
            _check(s["dwa.emits"].shape == (n_dwa,) and _in_range(s["dwa.emits"], 0, 2), p, "DWA emitting states")
        if "lr.lexer_start" in s or "lexer.restart" in s:
            starts, restart = s.get("lr.lexer_start"), s.get("lexer.restart")
            _check(starts is not None and restart is not None, p, "contextual lexer: both sections or neither")
            assert starts is not None and restart is not None
            _check(starts.shape == (n_lr,) and restart.shape == (n_lex,) and _in_range(starts, 1, n_lex)
                   and _in_range(restart, 0, n_lex), p, "contextual lexer sections")
            _check(bool(np.isin(restart[restart != 0], starts).all()) and int(starts[0]) == START, p,
                   "contextual lexer: a restart or the first state's START is not a context's START")
        if "lr.core_offsets" in s or "lr.core_text" in s:
            offsets, text = s.get("lr.core_offsets"), s.get("lr.core_text")
            _check(offsets is not None and text is not None and offsets.shape == (art.lr.n_states + 1,)
                   and _monotone(offsets, text.size), p, "LR state cores")
    else:
        row_table = s["dwa.row_by_lexer_state"]
        _check(row_table.shape == (n_lex, n_dwa) and _in_range(row_table, 0, n_rows), p, "DWA row table")
        n_accept = 0
    _check(art.rows.shape[1] == (art.vocab_size + 31) // 32 and art.rows.shape[0] >= 1, p, "row pool shape")
    _check(art._token_offsets.shape == (art.vocab_size + 1,)
           and _monotone(art._token_offsets, art._token_data.size), p, "token byte offsets")
    _check(all(0 <= t < art.vocab_size for t in art.eos_token_ids), p, "EOS id out of range")
    return n_accept


def _root_sets(s: Any, kind: str, every: frozenset[int]) -> OnFirstUse[frozenset[int]]:
    """The optional walk filter `kind` (CSR: one set of roots per entry) as frozensets; every root
    for each entry when the artifact has no filter."""
    if f"{kind}s" not in s:
        return OnFirstUse(lambda _: every)
    return csr_slices(s[f"{kind}_offsets"], s[f"{kind}s"], frozenset)


def _closes(s: Any, close_roots: OnFirstUse[frozenset[int]]) -> OnFirstUse[tuple[tuple[int, int, frozenset[int]], ...]]:
    """Lexer state -> its runtime closes, from the `rows.close_*` CSR sections."""
    bounds, sets, rows = (flat(s[f"rows.close_{n}"]) for n in ("offsets", "sets", "rows"))

    def build(q: int) -> tuple[tuple[int, int, frozenset[int]], ...]:
        lo, hi = bounds[q], bounds[q + 1]
        return tuple(zip(sets[lo:hi].tolist(), rows[lo:hi].tolist(), [close_roots[j] for j in range(lo, hi)],
                         strict=True))
    return OnFirstUse(build)


def _monotone(offsets: np.ndarray, total: int) -> bool:
    return (offsets.size >= 1 and int(offsets[0]) == 0 and int(offsets[-1]) == total
            and bool(np.all(np.diff(offsets) >= 0)))


def _int_array(values: np.ndarray) -> array[int]:
    """Integers as an `array` of int64: 8 bytes each (a list takes 36), indexed as Python ints
    (a numpy array's items are numpy scalars, slower to index and to hash)."""
    out = array("q")
    out.frombytes(np.ascontiguousarray(values, dtype="=i8").tobytes())
    return out


def _dense_row_maps(table: np.ndarray) -> tuple[list[int], OnFirstUse[Lookup]]:
    """Format 1's dense (n_lexer_states, n_dwa_states) row table as format 2's accept ids and maps."""
    n_lex, n_dwa = table.shape
    offsets = np.arange(n_lex + 1, dtype=np.int64) * n_dwa
    return list(range(n_dwa)), csr_lookups(offsets, np.tile(np.arange(n_dwa), n_lex), table.reshape(-1), n_dwa,
                                           _no_row)


def _no_row(_: int) -> int:
    """The row of an accept id a lexer state lists none for: 0, the empty row."""
    return 0


def _prefault(array: np.ndarray) -> None:
    """Touch one word per page so that the first mask() of a rarely used row does not page-fault."""
    flat = array.reshape(-1).view(np.uint8)
    int(flat[::4096].sum())
