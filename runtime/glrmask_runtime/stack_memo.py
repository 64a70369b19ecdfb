"""Masks remembered by what their computation read of the stacks, learned at run time.

A thread's mask is a function of its lexer state and its stacks (a graph-structured stack), and its
computation (the DWA's walks, a runtime close's GLR step, the walks after it) only looks at a few
cells near the tops. The matcher runs a computation it has not seen on *shadows* of the real cells
(`Shadows`): copies made as the computation first asks for a cell's parents, each such cell noted.
What the computation learnt about the stacks is then the states of the cells it saw and the parents
of the cells it asked about; any stacks that agree there get the same mask (the computation is
deterministic).

`StackMemo` keeps such results in a decision tree per (lexer state, the tops' states): a node says
whose parents to look at next (a cell by the order in which the walk down the tree first saw it),
its branches are the possible answers, a leaf holds the result. A lookup answers the tree's
questions from the real stacks until it reaches a leaf (a hit) or an answer without a branch (a
miss). A result is filed where the lookup missed: the tree goes on to ask what the computation
asked and the lookup has not yet, in the order the walk sees the cells. The matcher learns only
where a lookup misses for the second time (`Miss.again`): most stack contexts occur once (go.lark
x cl100k: 68% of those learnt in a pass over 40 functions were never looked up again), and the
first time costs just the computation on the real stacks.

A result is the mask's key and the stacks after each close the computation made, as `Template`s
over the cells the walk saw, so that `commit` gets them without a GLR step.
One memo per artifact (`Artifact.mask_memo`), shared by its matchers; at most `limit` results
(default `MEMO_LEAVES`), emptied when full; `limit = 0` turns it off. `clear` empties it (the
benchmark does before each pass, so that every pass does the same work).
"""

from __future__ import annotations

import weakref
from typing import Any, Union

from glrmask_runtime.glr import GSSNode

MEMO_LEAVES = 20_000      # about 1.5 KB each (go.lark x cl100k): 30 MB
# The answer to "what are this cell's parents?": per parent its state (a cell not seen yet) or
# -1 - k (the k-th cell seen); one parent is the bare int, the bottom ().
Answer = Union[int, tuple[int, ...]]
# New stacks made on top of seen cells (a close's GLR step), as data: per new cell, parents first, its
# state and parents (k >= 0: the k-th cell seen; -1 - j: the j-th new cell), then the tops.
Template = tuple[tuple[tuple[int, tuple[int, ...]], ...], tuple[int, ...]]
Result = tuple[Any, dict[int, Template]]       # (the mask's key, closing term set -> stacks after it)


class _Leaf:
    __slots__ = ("result",)

    def __init__(self, result: Result) -> None:
        self.result = result


class _Ask:
    """A decision node: look at the parents of the `cell`-th cell seen (`length` 0), or follow
    `length` cells down from it, each expected to have one parent not seen yet (a stretch of linear
    stack: one question instead of `length`); branch on the answer."""

    __slots__ = ("cell", "length", "branches")

    def __init__(self, cell: int, length: int) -> None:
        self.cell = cell
        self.length = length
        self.branches: dict[Answer, _Ask | _Leaf] = {}


class _Walk:
    """The cells seen so far while answering a tree's questions from real stacks, in order."""

    __slots__ = ("seen", "index")

    def __init__(self, stacks: tuple[GSSNode, ...]) -> None:
        self.seen = list(stacks)
        self.index = {id(cell): k for k, cell in enumerate(stacks)}

    def answer(self, k: int, length: int) -> Answer:
        """The answer to `_Ask(k, length)`; the cells it meets are seen from now on. A stretch of
        `length` linear cells answers with the states below each; where the stack is not linear the
        answer is (-1, the states so far, that cell's parents)."""
        cell = self.seen[k]
        if not length:
            return self._parents(cell)
        seen, index = self.seen, self.index
        states: list[int] = []
        for _ in range(length):
            parents = cell.parents
            if len(parents) != 1 or id(parents[0]) in index:
                return (-1, tuple(states), self._parents(cell))      # type: ignore[return-value]
            cell = parents[0]
            index[id(cell)] = len(seen)
            seen.append(cell)
            states.append(cell.state)
        return tuple(states)

    def run(self, k: int, asked: set[int]) -> int:
        """How many cells from the k-th down one `_Ask` can cover: asked cells, each with one parent
        not seen yet (0: the k-th cell is not such a cell; ask for its parents)."""
        cell, length, index = self.seen[k], 0, self.index
        while True:
            parents = cell.parents
            if len(parents) != 1 or id(parents[0]) in index:
                return length
            length += 1
            cell = parents[0]
            if id(cell) not in asked:
                return length

    def _parents(self, cell: GSSNode) -> Answer:
        parents = cell.parents
        if len(parents) == 1:
            return self._ref(parents[0])
        return tuple(self._ref(parent) for parent in parents)

    def _ref(self, cell: GSSNode) -> int:
        k = self.index.get(id(cell))
        if k is not None:
            return -1 - k
        self.index[id(cell)] = len(self.seen)
        self.seen.append(cell)
        return cell.state


class Miss:
    """Where a lookup found no branch: the walk so far (cells seen, positions asked about), the
    branch to fill, and whether a lookup missed there before (`again`)."""

    __slots__ = ("walk", "done", "branches", "answer", "again")

    def __init__(self, walk: _Walk, done: set[int], branches: dict[Any, _Ask | _Leaf], answer: Any,
                 again: bool) -> None:
        self.walk, self.done, self.branches, self.answer, self.again = walk, done, branches, answer, again


class Shadows:
    """Shadow copies of one set of real stacks, shared by every computation run on them; notes
    which real cells' parents were asked for."""

    __slots__ = ("stacks", "tops", "asked", "made", "ref", "__weakref__")

    def __init__(self, stacks: tuple[GSSNode, ...]) -> None:
        self.stacks = stacks
        self.asked: set[int] = set()             # id() of the real cells whose parents were asked for
        self.made: dict[int, _Copy] = {}         # id(real cell) -> its shadow
        self.ref = weakref.ref(self)
        self.tops = tuple(self.shadow(cell) for cell in stacks)

    def shadow(self, real: GSSNode) -> _Copy:
        made = self.made.get(id(real))
        if made is None:
            made = self.made[id(real)] = _Shadow(real, self.ref)
        return made


class _Copy(GSSNode):
    """A shadow cell: the copy of a real cell (`real`) for one `Shadows` (referred to weakly, so
    that shadows make no reference cycle; the benchmark runs with the garbage collector off)."""

    __slots__ = ("real", "_shadows")

    def __init__(self, real: GSSNode, shadows: weakref.ref[Shadows]) -> None:
        self.state = real.state
        self.real = real
        self._shadows = shadows


class _Shadow(_Copy):
    """A shadow cell whose parents have not been asked for: the first request copies them, notes
    the cell and turns it into a `_Copied` (a plain slot from then on: walks read it at full speed)."""

    __slots__ = ()

    @property
    def parents(self) -> tuple[GSSNode, ...]:  # type: ignore[override]
        shadows = self._shadows()
        assert shadows is not None, "a shadow outlived the walks it was made for"
        real = self.real
        shadows.asked.add(id(real))
        made, ref = shadows.made, shadows.ref
        below: tuple[GSSNode, ...]
        if len(real.parents) == 1:
            parent = real.parents[0]
            copy = made.get(id(parent))
            if copy is None:
                copy = made[id(parent)] = _Shadow(parent, ref)
            below = (copy,)
        else:
            below = tuple(shadows.shadow(parent) for parent in real.parents)
        _SET_PARENTS(self, below)
        self.__class__ = _Copied                 # type: ignore[assignment]
        return below


_SET_PARENTS: Any = vars(GSSNode)["parents"].__set__    # the slot under `_Shadow.parents`


class _Copied(_Copy):
    """A shadow cell whose parents are copied already."""

    __slots__ = ()


class StackMemo:
    """(lexer state, the tops' states) -> decision tree over what lies below -> result."""

    def __init__(self, limit: int = MEMO_LEAVES) -> None:
        self.limit = limit
        self._roots: dict[tuple[int, tuple[int, ...]], _Ask | _Leaf] = {}
        self._leaves = 0
        self._missed: set[tuple[int, Any]] = set()    # (id(branches), answer) of the misses so far

    def clear(self) -> None:
        self._roots = {}
        self._leaves = 0
        self._missed = set()

    def __len__(self) -> int:
        return self._leaves

    def lookup(self, lexer_state: int, stacks: tuple[GSSNode, ...]) -> tuple[Result, list[GSSNode]] | Miss:
        """The result remembered for `stacks` at `lexer_state` and the cells its templates number;
        or, where the tree has no branch for an answer, a `Miss` to `file` the result at."""
        if self._leaves >= self.limit or len(self._missed) >= 4 * self.limit:
            self.clear()
        walk = _Walk(stacks)
        done: set[int] = set()
        branches: dict[Any, _Ask | _Leaf] = self._roots
        answer: Any = (lexer_state, stacks[0].state) if len(stacks) == 1 else \
            (lexer_state, tuple(cell.state for cell in stacks))
        node = branches.get(answer)
        while type(node) is _Ask:
            branches, answer = node.branches, self._ask(walk, node, done)
            node = branches.get(answer)
        if node is not None:
            return node.result, walk.seen       # type: ignore[union-attr]
        where = (id(branches), answer)
        again = where in self._missed
        self._missed.add(where)
        return Miss(walk, done, branches, answer, again)

    def file(self, miss: Miss, shadows: Shadows, key: Any,
             closes: dict[int, tuple[GSSNode, ...]]) -> tuple[Result, list[GSSNode]]:
        """Remember, where `lookup` missed, a result computed on `shadows` of the same stacks (the
        mask's key, and the stacks after each close as made on the shadows): the tree asks on from
        there what the computation asked, in the order the walk sees the cells. Returns the result
        as `lookup` will."""
        walk, done, branches, answer = miss.walk, miss.done, miss.branches, miss.answer
        asked = shadows.asked
        k = 0
        while k < len(walk.seen):
            if k not in done and id(walk.seen[k]) in asked:
                branches[answer] = ask = _Ask(k, walk.run(k, asked))
                branches, answer = ask.branches, self._ask(walk, ask, done)
            k += 1
        result = (key, {set_id: _template(after, walk) for set_id, after in closes.items() if after})
        branches[answer] = _Leaf(result)
        self._leaves += 1
        return result, walk.seen

    @staticmethod
    def _ask(walk: _Walk, ask: _Ask, done: set[int]) -> Answer:
        """`walk`'s answer to `ask`, noting the positions of the cells it asked about in `done`."""
        before = len(walk.seen)
        answer = walk.answer(ask.cell, ask.length)
        done.add(ask.cell)
        if ask.length > 1:      # the cells of the stretch above its last (the deeper ones are new)
            stopped = isinstance(answer, tuple) and answer and answer[0] == -1
            reached = len(answer[1]) if stopped else ask.length - 1      # type: ignore[arg-type,index]
            done.update(range(before, before + reached))
        return answer


def _template(stacks: tuple[GSSNode, ...], walk: _Walk) -> Template:
    """Stacks made on shadows as a template over the cells `walk` saw."""
    cells: list[tuple[int, tuple[int, ...]]] = []
    refs: dict[int, int] = {}

    def ref(node: GSSNode) -> int:
        if isinstance(node, _Copy):
            return walk.index[id(node.real)]
        found = refs.get(id(node))
        if found is None:
            parents = tuple(ref(parent) for parent in node.parents)
            cells.append((node.state, parents))
            found = refs[id(node)] = -len(cells)
        return found

    tops = tuple(ref(node) for node in stacks)
    return tuple(cells), tops


def realize(template: Template, seen: list[GSSNode]) -> tuple[GSSNode, ...]:
    """The stacks a template describes, over the real cells `seen`."""
    cells, tops = template
    made: list[GSSNode] = []
    for state, parents in cells:
        made.append(GSSNode(state, tuple(seen[k] if k >= 0 else made[-1 - k] for k in parents)))
    return tuple(seen[k] if k >= 0 else made[-1 - k] for k in tops)
