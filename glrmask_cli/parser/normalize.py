"""Language-preserving normalization: CFG -> NormalizedGrammar whose reduction chains are bounded.

Phases: drop unproductive/unreachable rules; remove epsilon rules (this also removes hidden left
and right recursion); reject cycles A =>+ A; drop from unit chains the alternatives another rule
derives symbol by symbol (two readings of one string); make repetitions left-recursive lists (a
trailing separator read where the list's is); nest operators without precedence (A -> A op A) to
the left; rewrite right recursion into left recursion per cyclic SCC of the rightmost-symbol graph
(feedback set + right- to left-linear conversion); cut long right-hand sides (left-nested helpers,
at the same places in rules that begin alike). The middle three remove forks of the GLR parser
that the grammar as written would cause; none changes the language. Invariant
(`check_normalized`): no epsilon rule and an acyclic rightmost-symbol graph (A -> B when a rule
A -> ... B ends with B), so LR performs a bounded number of reductions between two shifts. Size is
guarded by the limits max_normalized_symbols and max_epsilon_variants (LimitExceeded;
glrmask_cli/limits.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from glrmask_cli.errors import LimitExceeded, NormalizationError
from glrmask_cli.limits import DEFAULTS
from glrmask_cli.parser.cfg import CFG, Rule

Sym = int | str                                  # terminal id, or nonterminal name
Rules = dict[str, list[tuple[Sym, ...]]]         # lhs name -> right-hand sides, in order


@dataclass(frozen=True)
class NormalizedGrammar:
    cfg: CFG                      # same terminal ids; nonterminal ids renumbered (sorted by name)
    accepts_empty: bool           # the original language contains the empty string
    rewrites: tuple[str, ...]     # human-readable log of what was rewritten (for `glrmask inspect`)


def normalize(cfg: CFG, *, where: str = "<grammar>", max_rhs_length: int = DEFAULTS.max_rhs_length,
              max_normalized_symbols: int = DEFAULTS.max_normalized_symbols,
              max_epsilon_variants: int = DEFAULTS.max_epsilon_variants) -> NormalizedGrammar:
    """Rewrite `cfg` into an equivalent grammar (same language, minus the empty string).

    Raises NormalizationError (empty language, only the empty string, a cycle A =>+ A) naming the
    rules, and LimitExceeded when right-recursion removal would exceed `max_normalized_symbols`
    right-hand-side symbols or epsilon removal make more than `max_epsilon_variants` copies of a
    rule. Right-hand sides longer than `max_rhs_length` are split.
    """
    if max_rhs_length < 2:
        raise ValueError(f"max_rhs_length must be >= 2, got {max_rhs_length}")
    log: list[str] = []
    rules, start = from_cfg(cfg)
    rules = _reduce(rules, start, where, log, "input")
    nullable = nullable_set(rules)
    accepts_empty = start in nullable
    rules = _remove_epsilon(rules, nullable, log, max_epsilon_variants)
    if start not in productive_set(rules):
        raise NormalizationError(where, "the grammar derives only the empty string", rule=start)
    rules = _reduce(rules, start, where, log, "after epsilon removal")
    _reject_cycles(rules, where)
    rules = _covered_unit_alternatives_dropped(rules, log)
    rules = _lists_left_recursive(rules, log)
    rules = _operators_left_nested(rules, log)
    rules = _remove_right_recursion(rules, start, where, max_normalized_symbols, log)
    rules = _reduce(rules, start, where, log, "after right-recursion removal")
    rules = _split_long_rules(rules, max_rhs_length, log)
    out = to_cfg(rules, start, cfg.terminal_names)
    check_normalized(out, where=where)
    return NormalizedGrammar(cfg=out, accepts_empty=accepts_empty, rewrites=tuple(log))


def check_normalized(cfg: CFG, *, where: str = "<grammar>") -> None:
    """Raise NormalizationError unless `cfg` has no epsilon rule, no `$END` in a rule, every
    nonterminal has a rule, and the rightmost-symbol graph is acyclic (bounded reduction chains)."""
    defined = {r.lhs for r in cfg.rules}
    for r in cfg.rules:
        if not r.rhs:
            raise NormalizationError(where, "has an epsilon rule", rule=cfg.name(r.lhs))
        if cfg.end in r.rhs:
            raise NormalizationError(where, "uses $END in a right-hand side", rule=cfg.name(r.lhs))
        missing = [s for s in r.rhs if not cfg.is_terminal(s) and s not in defined]
        if missing:
            raise NormalizationError(where, f"uses {cfg.name(missing[0])}, which has no rule",
                                     rule=cfg.name(r.lhs))
    edges: dict[int, set[int]] = {}
    for r in cfg.rules:
        if not cfg.is_terminal(r.rhs[-1]):
            edges.setdefault(r.lhs, set()).add(r.rhs[-1])
    cycle = find_cycle(edges)
    if cycle is not None:
        names = " -> ".join(cfg.name(s) for s in cycle)
        raise NormalizationError(where, f"unbounded reduction chain (rightmost-symbol cycle {names})",
                                 rule=cfg.name(cycle[0]))


# ---------------------------------------------------------------- phases

def _reduce(rules: Rules, start: str, where: str, log: list[str], when: str) -> Rules:
    """Drop rules with unproductive symbols, then rules unreachable from `start`."""
    productive = productive_set(rules)
    if start not in productive:
        raise NormalizationError(where, "derives no finite string (the language is empty)", rule=start,
                                 hint="every alternative needs a non-recursive way out")
    kept = {a: [rhs for rhs in alts if all(not isinstance(s, str) or s in productive for s in rhs)]
            for a, alts in rules.items() if a in productive}
    reachable = reachable_set(kept, start)
    out = {a: alts for a, alts in kept.items() if a in reachable}
    dropped = sorted(set(rules) - set(out))
    n_before = sum(map(len, rules.values()))
    n_after = sum(map(len, out.values()))
    if n_before != n_after:
        names = ", ".join(dropped[:8]) + (", ..." if len(dropped) > 8 else "")
        log.append(f"{when}: removed {n_before - n_after} unproductive/unreachable rules"
                   + (f" (nonterminals {names})" if dropped else ""))
    return out


def _remove_epsilon(rules: Rules, nullable: set[str], log: list[str], max_variants: int) -> Rules:
    """Every rule gets all variants with nullable occurrences dropped; epsilon rules go.

    Hidden left (right) recursion A -> N A (A -> A N) with N nullable becomes visible here. A variant
    A -> A (e.g. from Lark's `[x ","]*`: a cycle A =>+ A through nullable symbols) only adds
    infinitely many parses of the same strings, so it is dropped and logged; longer cycles
    A => B => A are rejected by `_reject_cycles`."""
    out: Rules = {}
    self_loops = []
    for a, alts in rules.items():
        new: dict[tuple[Sym, ...], None] = {}
        for rhs in alts:
            for variant in drop_nullable_variants(rhs, nullable, max_variants):
                if variant == (a,):     # A => A: a derivation that adds nothing
                    self_loops.append(a)
                elif variant:
                    new.setdefault(variant, None)
        out[a] = list(new)
    if nullable:
        log.append(f"epsilon rules removed; nullable: {', '.join(sorted(nullable))}")
    if self_loops:
        log.append("dropped cyclic unit rules A -> A (the language is unchanged): "
                   + ", ".join(sorted(set(self_loops))))
    return out


def _reject_cycles(rules: Rules, where: str) -> None:
    """A unit-rule cycle A -> B -> ... -> A (after epsilon removal) means A =>+ A in the original."""
    unit = {a: {rhs[0] for rhs in alts if len(rhs) == 1 and isinstance(rhs[0], str)}
            for a, alts in rules.items()}
    cycle = find_cycle(unit)
    if cycle is not None:
        raise NormalizationError(where, f"the grammar is cyclic ({' => '.join(cycle)}), so a string has "
                                 "infinitely many parses", rule=cycle[0],
                                 hint="remove the unit rules (or nullable parts) that close the cycle")


Removal = tuple[str, str, str, tuple[Sym, ...]]   # in A -> B, the rule N -> rhs of B's unit chain goes


def _covered_unit_alternatives_dropped(rules: Rules, log: list[str]) -> Rules:
    """A unit rule A -> B gives A the rules of B and of the unit rules below it. Where another rule
    of A derives one of them symbol by symbol (A -> Y1..Yn against N -> X1..Xn, each Yi deriving Xi
    alone through unit rules), A derives its strings twice, and GLR carries a stack for each
    reading (syncode's go.lark: `primary_expr -> operand -> NAME` and `primary_expr -> type_ ->
    var_or_type_name -> NAME`, 675 of its conflicts). A then reaches a copy of the chain without
    those rules. Removals are taken deepest chain first, each kept only if every kept one is
    still derived so in the grammar with all of them (two readings may each cover the other: one
    stays), so the language is the same."""
    derives = _derives_alone(rules)
    chains = {a: _unit_chain(rules, a) for a in rules}
    candidates: list[tuple[int, str, Removal]] = []
    for a, alts in rules.items():
        for b in [str(rhs[0]) for rhs in alts if _is_unit(rhs)]:
            for n, depth in chains[b].items():
                for rhs in rules[n]:
                    if not _is_unit(rhs) and _covered(rules[a], derives, rhs, skip=(b,)):
                        removal = (a, b, n, rhs)
                        candidates.append((-depth, repr(removal), removal))
    kept: list[Removal] = []
    out = rules
    for *_, removal in sorted(candidates)[:MAX_COVERED_CANDIDATES]:
        trial = kept + [removal]
        grammar = _without(rules, trial, chains)
        derives = _derives_alone(grammar)
        if all(_covered(grammar[a], derives, rhs) for a, _, _, rhs in trial):
            kept, out = trial, grammar
    if kept:
        log.append(f"{len(kept)} alternatives that another rule derives dropped from unit chains in "
                   f"{{{', '.join(sorted({a for a, *_ in kept}))}}} (one parse per string)")
    return out


MAX_COVERED_CANDIDATES = 256     # removals tried (each rebuilds the grammar; real grammars have a few)


def _is_unit(rhs: tuple[Sym, ...]) -> bool:
    return len(rhs) == 1 and isinstance(rhs[0], str)


def _derives_alone(rules: Rules) -> dict[str, set[Sym]]:
    """Per nonterminal, the symbols it derives as a whole sentential form (itself included): in a
    grammar without epsilon rules, through unit rules only."""
    found: dict[str, set[Sym]] = {}

    def visit(a: str) -> set[Sym]:
        if a not in found:
            found[a] = {a}
            for rhs in rules[a]:
                if len(rhs) == 1:
                    found[a].add(rhs[0])
                    if isinstance(rhs[0], str):
                        found[a] |= visit(rhs[0])
        return found[a]
    for a in rules:
        visit(a)
    return found


def _unit_chain(rules: Rules, b: str) -> dict[str, int]:
    """`b` and the nonterminals below it through unit rules, each with its distance from `b`."""
    depth = {b: 0}
    todo = [b]
    for n in todo:
        for rhs in rules[n]:
            if _is_unit(rhs) and rhs[0] not in depth:
                depth[str(rhs[0])] = depth[n] + 1
                todo.append(str(rhs[0]))
    return depth


def _covered(alts: list[tuple[Sym, ...]], derives: dict[str, set[Sym]], target: tuple[Sym, ...],
             skip: tuple[Sym, ...] | None = None) -> bool:
    """Some rule in `alts` (not `skip`) derives `target` symbol for symbol."""
    return any(rhs != skip and len(rhs) == len(target)
               and all(y == x or (isinstance(y, str) and x in derives[y]) for y, x in zip(rhs, target))
               for rhs in alts)


def _without(rules: Rules, removals: list[Removal], chains: dict[str, dict[str, int]]) -> Rules:
    """`rules` where each A of `removals` reaches, instead of B, a copy of B's unit chain without
    the removed rules (copies named N__rest, shared by equal removals; none where nothing is left).
    `chains`: `_unit_chain` of every nonterminal of `rules`."""
    out = {a: list(alts) for a, alts in rules.items()}
    taken = set(rules)
    copies: dict[tuple[str, frozenset[tuple[str, tuple[Sym, ...]]]], str | None] = {}

    def copy(n: str, gone: frozenset[tuple[str, tuple[Sym, ...]]]) -> str | None:
        below = frozenset(item for item in gone if item[0] in chains[n])
        if not below:
            return n
        if (n, below) not in copies:
            alts: list[tuple[Sym, ...]] = []
            for rhs in rules[n]:
                if _is_unit(rhs):
                    target = copy(str(rhs[0]), below)
                    if target is not None:
                        alts.append((target,))
                elif (n, rhs) not in below:
                    alts.append(rhs)
            name = fresh_name(f"{n}__rest", taken) if alts else None
            if name is not None:
                out[name] = alts
            copies[(n, below)] = name
        return copies[(n, below)]
    contexts: dict[tuple[str, str], set[tuple[str, tuple[Sym, ...]]]] = {}
    for a, b, n, rhs in removals:
        contexts.setdefault((a, b), set()).add((n, rhs))
    for (a, b), gone in contexts.items():
        target = copy(b, frozenset(gone))
        out[a] = [rhs for rhs in out[a] if rhs != (b,)]
        if target is not None and (target,) not in out[a]:
            out[a].append((target,))
    return out


def _lists_left_recursive(rules: Rules, log: list[str]) -> Rules:
    """Lark writes `item ("," item)*` as `alpha S | alpha` with a repetition helper S -> x | S x
    (x = `"," item`; after epsilon removal a rule `alpha S beta` has its partner `alpha beta`).
    After alpha with x's first terminal next, the parser must choose between shifting into S and
    reducing towards beta, which one token cannot decide when beta may begin like x (a trailing
    comma): GLR forks there on every call with two arguments. Each such pair becomes `T beta` with
    T -> alpha | T x (one T per (alpha, S)), and then the nonterminal's other rules `alpha S beta`
    become `T x beta`, so that no rule of it reads alpha without T; a nonterminal left with the
    one rule `T` becomes T itself. The list and what follows it then share the state where x is
    read: the same strings (alpha x* beta, alpha x+ beta), without the fork. Only pairs that fork
    (`_forks`) are rewritten: elsewhere the rewrite gains little, and on sympy's latex.lark, whose
    expressions are ambiguous, its lists of expressions took the build x cl100k from 316 to 710 s."""
    helpers: dict[tuple[tuple[Sym, ...], str], str] = {}
    taken = set(rules)
    out: Rules = {}
    first, follow = _first_and_follow(rules)
    for a, alts in rules.items():
        present = set(alts)
        paired: set[tuple[Sym, ...]] = set()
        new: list[tuple[Sym, ...]] = []
        own: dict[tuple[tuple[Sym, ...], str], tuple[str, tuple[Sym, ...]]] = {}   # its lists, and x
        for rhs in alts:
            if rhs in paired:
                continue
            pair = _repetition_pair(rules, rhs, present, paired)
            if pair is None or not _forks(pair, rhs, a, first, follow):
                new.append(rhs)
                continue
            i, partner, x = pair
            key = (rhs[:i], str(rhs[i]))
            helper = helpers.get(key)
            if helper is None:
                helper = helpers[key] = fresh_name(f"{a}__list", taken)
                out[helper] = [rhs[:i], (helper,) + x]
            own[key] = helper, x
            paired.update((rhs, partner))
            new.append((helper,) + rhs[i + 1:])
        out[a] = list(dict.fromkeys(_through_list(rhs, own) for rhs in new if rhs not in paired))
    made = set(helpers.values())
    for a in rules:       # A -> T alone: A is the list (an unused T goes with the next `_reduce`)
        if len(out[a]) == 1 and out[a][0][0] in made and len(out[a][0]) == 1:
            only = str(out[a][0][0])
            out[a] = [tuple(a if s == only else s for s in rhs) for rhs in out[only]]
    if helpers:
        log.append(f"repetitions made left-recursive lists ({len(helpers)} lists)")
    return out


def _through_list(rhs: tuple[Sym, ...], lists: dict[tuple[tuple[Sym, ...], str], tuple[str, tuple[Sym, ...]]]
                  ) -> tuple[Sym, ...]:
    """`alpha S beta` as `T x beta` where `lists` has (T, x) for (alpha, S), else `rhs`."""
    for i in range(1, len(rhs)):
        found = lists.get((rhs[:i], str(rhs[i])))
        if found is not None:
            return (found[0],) + found[1] + rhs[i + 1:]
    return rhs


def _forks(pair: tuple[int, tuple[Sym, ...], tuple[Sym, ...]], rhs: tuple[Sym, ...], a: str,
           first: dict[Sym, set[Sym]], follow: dict[str, set[Sym]]) -> bool:
    """Whether the repetition forks the parser: after alpha, a terminal may begin x (the helper) and
    also what comes after alpha without it (beta's first symbol, or what follows the nonterminal)."""
    i, _, x = pair
    beta = rhs[i + 1:]
    after = first[beta[0]] if beta else follow[a]
    return bool(first[x[0]] & after)


def _first_and_follow(rules: Rules) -> tuple[dict[Sym, set[Sym]], dict[str, set[Sym]]]:
    """FIRST of every symbol and FOLLOW of every nonterminal of a grammar without epsilon rules
    (FOLLOW without the end of input: only terminals a repetition could begin with matter)."""
    first: dict[Sym, set[Sym]] = {a: set() for a in rules}
    for rhs in (rhs for alts in rules.values() for rhs in alts):
        for s in rhs:
            if not isinstance(s, str):
                first.setdefault(s, {s})
    follow: dict[str, set[Sym]] = {a: set() for a in rules}
    changed = True
    while changed:
        changed = False
        for a, alts in rules.items():
            for rhs in alts:
                if not first[rhs[0]] <= first[a]:
                    first[a] |= first[rhs[0]]
                    changed = True
                for j, s in enumerate(rhs):
                    if isinstance(s, str):
                        more = first[rhs[j + 1]] if j + 1 < len(rhs) else follow[a]
                        if not more <= follow[s]:
                            follow[s] |= more
                            changed = True
    return first, follow


def _repetition_pair(rules: Rules, rhs: tuple[Sym, ...], present: set[tuple[Sym, ...]],
                     paired: set[tuple[Sym, ...]]) -> tuple[int, tuple[Sym, ...], tuple[Sym, ...]] | None:
    """(i, partner, x) for the first repetition helper S = rhs[i], i > 0 (S -> x | S x) whose
    partner, rhs without S, is in `present` and not in `paired`; else None."""
    for i in range(1, len(rhs)):
        s = rhs[i]
        x = _repeated(rules, s) if isinstance(s, str) else None
        partner = rhs[:i] + rhs[i + 1:]
        if x is not None and partner in present and partner not in paired:
            return i, partner, x
    return None


def _repeated(rules: Rules, s: str) -> tuple[Sym, ...] | None:
    """x if the rules of `s` are exactly x and S x (a repetition helper, x without S), else None."""
    alts = rules[s]
    if len(alts) != 2:
        return None
    x, rec = alts if alts[0][:1] != (s,) else alts[::-1]
    return x if rec == (s,) + x and s not in x else None


def _operators_left_nested(rules: Rules, log: list[str]) -> Rules:
    """A nonterminal with a rule that has it at both ends (A -> A op A: an operator without
    precedence) is ambiguous: `1-2-3` parses two ways, and a GLR parser carries both stacks to the
    end of the expression. Its language is U (op U)*, where U is its rules without it at either end
    ('(' A ')', literals: A may occur inside), after any of its prefix rules' beginnings (A -> pre A)
    and before any of its postfix rules' ends (A -> A post). So A becomes A -> A op U | U, U -> pre U
    | V, V -> V post | the rest (U or V left out where there are no such rules): the same strings,
    each with one parse as far as A's own rules go (syncode's go.lark: `expression`)."""
    taken = set(rules)
    out: Rules = {}
    rewritten = []
    for a, alts in rules.items():
        infix = [rhs for rhs in alts if len(rhs) >= 2 and rhs[0] == a and rhs[-1] == a]
        prefix = [rhs for rhs in alts if rhs[-1] == a and rhs[0] != a]
        postfix = [rhs for rhs in alts if rhs[0] == a and rhs[-1] != a]
        rest = [rhs for rhs in alts if rhs[0] != a and rhs[-1] != a]
        if not infix or not rest:
            out[a] = alts
            continue
        rewritten.append(a)
        operand = rest
        if postfix:
            atom = fresh_name(f"{a}__atom", taken)
            out[atom] = [(atom,) + rhs[1:] for rhs in postfix] + operand
            operand = [(atom,)]
        if prefix:
            unary = fresh_name(f"{a}__unary", taken)
            out[unary] = [rhs[:-1] + (unary,) for rhs in prefix] + operand
            operand = [(unary,)]
        if len(operand) > 1:
            name = fresh_name(f"{a}__operand", taken)
            out[name] = operand
            operand = [(name,)]
        out[a] = [rhs[:-1] + operand[0] for rhs in infix] + operand
    if rewritten:
        log.append(f"operators without precedence nested to the left in {{{', '.join(rewritten)}}} "
                   "(one parse per string)")
    return out


def _remove_right_recursion(rules: Rules, start: str, where: str, max_symbols: int,
                            log: list[str]) -> Rules:
    """Per cyclic SCC of the rightmost-symbol graph (see `_rewrite_scc`). For one nonterminal this
    is A -> alpha A | beta  =>  A -> beta | R beta, R -> alpha | R alpha."""
    rules = {a: list(alts) for a, alts in rules.items()}
    taken = set(rules)
    for scc in rightmost_cyclic_sccs(rules):
        cut = _feedback_set(rules, scc)
        rules = _rewrite_scc(rules, scc, cut, start, taken)
        _guard_size(rules, max_symbols, scc)
        log.append(f"right recursion rewritten into left recursion in {{{', '.join(scc)}}} "
                   f"(cut at {', '.join(cut)})")
    return rules


def _rewrite_scc(rules: Rules, scc: list[str], cut: list[str], start: str, taken: set[str]) -> Rules:
    """Inside the SCC, A -> gamma B (B a member) is a step A -gamma-> B of a finite automaton and a
    rule not ending in a member is an exit: L(A) = step strings along a path, then an exit.
    Outside the cut C the steps form a DAG, summarized right-recursively but acyclically by
    x__end (paths that exit before reaching C) and x__to_c (paths into c in C); over C the
    automaton is made left-linear (the textbook right- to left-linear conversion):
    Q[A,B] (non-empty paths A ..> B) -> s | Q[A,C] s, and A -> exit(A) | Q[A,B] exit(B)."""
    members, cutset = set(scc), set(cut)
    entries = _entries(rules, members, start)
    steps = {a: [(rhs[:-1], rhs[-1]) for rhs in rules[a] if rhs[-1] in members] for a in scc}
    exits = {a: [rhs for rhs in rules[a] if rhs[-1] not in members] for a in scc}
    out = {a: alts for a, alts in rules.items() if a not in members}
    to: dict[tuple[str, str], str] = {}      # (x, c) -> nonterminal for non-empty paths x ..> c
    unit: set[tuple[str, str]] = set()        # x =>unit* c
    end: dict[str, str] = {}                  # x -> nonterminal for paths that exit before C
    for x in _dag_order(steps, scc, cutset):
        if x in cutset:
            continue
        into, exit_strings = _via_dag(steps[x], exits[x], cut, to, unit, end)
        for c in cut:
            strings = [st for st, target in into if target == c]
            if () in strings:
                unit.add((x, c))
            if any(strings):
                to[x, c] = fresh_name(f"{x}__to_{c}", taken)
                out[to[x, c]] = [st for st in strings if st]
        if exit_strings:
            end[x] = fresh_name(f"{x}__end", taken)
            out[end[x]] = exit_strings
        if x in entries:
            out[x] = exit_strings + [(to[x, c], c) for c in cut if (x, c) in to] + [
                (c,) for c in cut if (x, c) in unit]
    cut_steps, cut_exits = {}, {}
    for a in cut:
        cut_steps[a], cut_exits[a] = _via_dag(steps[a], exits[a], cut, to, unit, end)
    cut_entries = _cut_entries(out, cut_steps, cut_exits, cutset, start)
    out.update(_left_linearize(cut, cut_entries, cut_steps, cut_exits, taken))
    return out


def _via_dag(steps, exits, cut: list[str], to, unit, end):
    """One member's steps and exits with non-cut targets replaced by their summaries: returns
    (string, c) pairs (the strings lead into cut member c) and exit strings."""
    into: list[tuple[tuple[Sym, ...], str]] = []
    exit_strings = list(exits)
    for gamma, y in steps:
        if y in cut:
            into.append((gamma, y))
            continue
        into.extend((gamma + (to[y, c],), c) for c in cut if (y, c) in to)
        into.extend((gamma, c) for c in cut if (y, c) in unit)
        if y in end:
            exit_strings.append(gamma + (end[y],))
    return list(dict.fromkeys(into)), list(dict.fromkeys(exit_strings))


def _cut_entries(out: Rules, cut_steps, cut_exits, cutset: set[str], start: str) -> list[str]:
    """Cut members that something other than the cut automaton's own step targets refers to."""
    used = {start} & cutset
    strings = [rhs for alts in out.values() for rhs in alts]
    strings += [st for a in cut_steps for st, _c in cut_steps[a]] + [e for a in cut_exits for e in cut_exits[a]]
    for rhs in strings:
        used.update(s for s in rhs if s in cutset)
    return sorted(used)


def _entries(rules: Rules, members: set[str], start: str) -> list[str]:
    """SCC members used other than as the last symbol of a member's rule (they keep their name)."""
    used = {start} & members
    for a, alts in rules.items():
        for rhs in alts:
            stop = len(rhs) - 1 if a in members else len(rhs)
            used.update(s for s in rhs[:stop] if s in members)
    return sorted(used)


def _left_linearize(cut: list[str], entries: list[str], steps, exits, taken: set[str]) -> Rules:
    """Rules for the cut entries and their path nonterminals Q[A,B] (unit steps closed over first).
    (A subset construction over the targets was tried: it gave more LR conflicts, not fewer.)"""
    steps, exits = _close_units(cut, steps, exits)
    out: Rules = {}
    for a in entries:
        reach = _reachable_members(steps, a)
        q = {b: fresh_name(f"{a}__rec" if b == a else f"{a}__to_{b}", taken) for b in reach}
        out[a] = list(exits[a]) + [(q[b],) + e for b in reach for e in exits[b]]
        for b in reach:
            out[q[b]] = [st for st, c in steps[a] if c == b]
        for c in reach:
            for st, b in steps[c]:
                out[q[b]].append((q[c],) + st)
    return out


def _close_units(cut: list[str], steps, exits):
    """A member gets the steps and exits of every member it reaches by empty steps (these form
    no cycle: unit cycles were rejected); empty steps are dropped."""
    closed_steps, closed_exits = {}, {}
    for a in cut:
        seen, todo, order = {a}, [a], []
        while todo:
            x = todo.pop()
            order.append(x)
            for st, b in steps[x]:
                if not st and b not in seen:
                    seen.add(b)
                    todo.append(b)
        closed_steps[a] = list(dict.fromkeys(s for x in order for s in steps[x] if s[0]))
        closed_exits[a] = list(dict.fromkeys(e for x in order for e in exits[x]))
    return closed_steps, closed_exits


def _reachable_members(steps, a: str) -> list[str]:
    """Members reachable from `a` by one or more steps, in discovery order."""
    seen: dict[str, None] = {}
    todo = [b for _g, b in steps[a]]
    while todo:
        b = todo.pop(0)
        if b not in seen:
            seen[b] = None
            todo.extend(c for _g, c in steps[b])
    return list(seen)


def _feedback_set(rules: Rules, scc: list[str]) -> list[str]:
    """A small set of members that meets every rightmost cycle of the SCC (greedy: repeatedly the
    member with the largest in-degree x out-degree inside a remaining cyclic SCC, ties by name)."""
    members = set(scc)
    edges = {a: {rhs[-1] for rhs in rules[a] if rhs[-1] in members} for a in scc}
    cut = sorted(a for a in scc if a in edges[a])          # self-loops
    while True:
        rest = {a: edges[a] - set(cut) for a in scc if a not in cut}
        sccs = cyclic_sccs(rest)
        if not sccs:
            return sorted(cut)
        for comp in sccs:
            inside = set(comp)
            indeg = {a: sum(a in rest[b] for b in comp) for a in comp}
            cut.append(max(comp, key=lambda a: (indeg[a] * len(rest[a] & inside), a)))


def _dag_order(steps, scc: list[str], cut: set[str]) -> list[str]:
    """Members such that each comes after the non-cut members it steps to (sinks first)."""
    deps = {a: sorted({b for _g, b in steps[a] if b not in cut}) for a in scc}
    order: list[str] = []
    done: set[str] = set()
    for root in scc:
        stack = [(root, iter(deps[root]))]
        while stack:
            a, it = stack[-1]
            if a in done:
                stack.pop()
                continue
            b = next(it, None)
            if b is None:
                done.add(a)
                order.append(a)
                stack.pop()
            elif b not in done:
                stack.append((b, iter(deps[b])))
    return order


def _guard_size(rules: Rules, max_symbols: int, names: list[str]) -> None:
    if sum(len(rhs) for alts in rules.values() for rhs in alts) > max_symbols:
        raise _limit(max_symbols, names)


def _limit(max_symbols: int, names: list[str]) -> LimitExceeded:
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    return LimitExceeded("max_normalized_symbols", max_symbols,
                         f"normalize (right recursion in rules {shown})",
                         "write these rules left-recursively")


def _split_long_rules(rules: Rules, max_rhs: int, log: list[str]) -> Rules:
    """A -> X1 .. Xn (n > max_rhs) is cut at fixed positions from its left end: P1 -> X1 .. X(max_rhs),
    P2 -> P1 and the next max_rhs - 1 symbols, ..., and A -> the last helper and the rest (fewer
    than max_rhs symbols). Helpers are shared between rules with the same prefix, and every rule is
    cut at the same positions, so a helper is reduced at the same point in every rule that begins
    so: the parser never has to know, before the rest is read, which of those rules it is in. (Cut
    so that each rule keeps its last max_rhs - 1 symbols, helpers end where the rule's length says,
    and the LR(1) automaton of a rule with optional parts forks for every length the rest may have:
    syncode's sql.lark had 1,750 conflicts so and forked stacks at half of its masks' steps.)
    Helpers never end a rule, so no rightmost cycle appears."""
    taken = set(rules)
    prefixes: dict[tuple[Sym, ...], str] = {}
    out: Rules = {a: [] for a in rules}
    n_split = 0

    def helper(head: tuple[Sym, ...], owner: str) -> str:
        if head not in prefixes:
            prefixes[head] = fresh_name(f"{owner}__pre", taken)
            out[prefixes[head]] = [head]
        return prefixes[head]

    def shorten(rhs: tuple[Sym, ...], owner: str) -> tuple[Sym, ...]:
        if len(rhs) <= max_rhs:
            return rhs
        first, rest = helper(rhs[:max_rhs], owner), rhs[max_rhs:]
        while len(rest) >= max_rhs:
            first, rest = helper((first,) + rest[:max_rhs - 1], owner), rest[max_rhs - 1:]
        return (first,) + rest

    for a, alts in list(rules.items()):
        for rhs in alts:
            n_split += len(rhs) > max_rhs
            out[a].append(shorten(rhs, a))
    if n_split:
        log.append(f"split {n_split} right-hand sides longer than {max_rhs} "
                   f"({len(prefixes)} shared prefix nonterminals)")
    return out


# ---------------------------------------------------------------- grammar graphs and sets

def from_cfg(cfg: CFG) -> tuple[Rules, str]:
    rules: Rules = {name: [] for name in cfg.nonterminal_names}
    for r in cfg.rules:
        rhs = tuple(s if cfg.is_terminal(s) else cfg.name(s) for s in r.rhs)
        rules[cfg.name(r.lhs)].append(rhs)
    return rules, cfg.name(cfg.start)


def to_cfg(rules: Rules, start: str, terminal_names: tuple[str, ...]) -> CFG:
    """Nonterminal ids in name order; rules grouped by lhs in that order, duplicates dropped."""
    names = tuple(sorted(rules))
    ids = {name: len(terminal_names) + i for i, name in enumerate(names)}
    out: dict[Rule, None] = {}
    for name in names:
        for rhs in rules[name]:
            out.setdefault(Rule(ids[name], tuple(ids[s] if isinstance(s, str) else s for s in rhs)), None)
    return CFG(terminal_names, names, tuple(out), ids[start])


def productive_set(rules: Rules) -> set[str]:
    return _fixpoint(rules, lambda rhs, done: all(not isinstance(s, str) or s in done for s in rhs))


def nullable_set(rules: Rules) -> set[str]:
    return _fixpoint(rules, lambda rhs, done: all(isinstance(s, str) and s in done for s in rhs))


def _fixpoint(rules: Rules, derives) -> set[str]:
    done: set[str] = set()
    changed = True
    while changed:
        changed = False
        for a, alts in rules.items():
            if a not in done and any(derives(rhs, done) for rhs in alts):
                done.add(a)
                changed = True
    return done


def reachable_set(rules: Rules, start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        for rhs in rules.get(todo.pop(), ()):
            for s in rhs:
                if isinstance(s, str) and s not in seen:
                    seen.add(s)
                    todo.append(s)
    return seen


def drop_nullable_variants(rhs: tuple[Sym, ...], nullable: set[str],
                           max_variants: int = DEFAULTS.max_epsilon_variants) -> list[tuple[Sym, ...]]:
    """All copies of `rhs` with any subset of its nullable occurrences removed (rhs itself first);
    LimitExceeded (limit max_epsilon_variants) if there would be more than `max_variants`."""
    k = sum(isinstance(s, str) and s in nullable for s in rhs)
    if 1 << k > max_variants:
        raise LimitExceeded("max_epsilon_variants", max_variants,
                            f"normalize (a rule with {k} nullable symbols: {rhs!r})",
                            "wrap the optional parts of this rule in fewer optional groups")
    variants: list[tuple[Sym, ...]] = [()]
    for s in rhs:
        if isinstance(s, str) and s in nullable:
            variants = [v + (s,) for v in variants] + variants
        else:
            variants = [v + (s,) for v in variants]
    return variants


def find_cycle(edges: dict) -> list | None:
    """A cycle [a, b, ..., a] in a directed graph (iterative DFS, sorted order), or None."""
    state: dict = {}                         # 1 = on the DFS stack, 2 = finished
    for root in sorted(edges, key=str):
        if root in state:
            continue
        path, iters = [root], [iter(sorted(edges.get(root, ()), key=str))]
        state[root] = 1
        while path:
            nxt = next(iters[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iters.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iters.append(iter(sorted(edges.get(nxt, ()), key=str)))
    return None


def rightmost_edges(rules: Rules) -> dict[str, set[str]]:
    return {a: {rhs[-1] for rhs in alts if isinstance(rhs[-1], str)} for a, alts in rules.items()}


def rightmost_cyclic_sccs(rules: Rules) -> list[list[str]]:
    return cyclic_sccs(rightmost_edges(rules))


def cyclic_sccs(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components that contain a cycle (Tarjan's algorithm, iterative), each
    sorted, in order of their smallest name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    sccs: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1 or v in edges.get(v, ()):
                    sccs.append(sorted(scc))
    return sorted(sccs)


def fresh_name(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}{n}"
    taken.add(name)
    return name


def rules_by_name(cfg: CFG) -> dict[str, list[tuple[str, ...]]]:
    """Readable view for `inspect` and tests: lhs name -> right-hand sides as names."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for r in cfg.rules:
        out.setdefault(cfg.name(r.lhs), []).append(tuple(cfg.name(s) for s in r.rhs))
    return out


__all__ = ["NormalizedGrammar", "check_normalized", "normalize", "rules_by_name"]
