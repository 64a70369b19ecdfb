"""`glrmask inspect --why TOKEN` and `--trace`: how the current mask was made, in the grammar's names.

Input: a loaded `Artifact` and a matcher after a prefix. `trace` re-walks the Parser DWA the way
`Matcher` does (runtime/glrmask_runtime/matcher.py: one walk per root a top lists at the lexer
state, down every stack path; then, per runtime close, the close on the stacks and the walks from
START), recording each walk's DWA states, the LR states it read, the row it ended on and the rows
of the emitting states it passed (`rows`: all of them).
`why` adds, for one token: how its bytes lex from the current lexer state, which walk or close let
it through, and for a masked token the recognizer's own rejection. Both are checked against the
mask in tests (tests/unit/cli/test_explain.py), so an explanation never disagrees with `mask()`.
"""

from __future__ import annotations

from typing import Any

from glrmask_runtime.artifact import Artifact
from glrmask_runtime.contextual import ContextualRecognizer, ContextualState
from glrmask_runtime.errors import InputRejected
from glrmask_runtime.glr import GSSNode
from glrmask_runtime.matcher import Matcher
from glrmask_runtime.recognizer import Recognizer
from glrmask_runtime.tables import DEAD, START

NO_STATE = -1
MAX_PATHS = 16          # stack paths shown per mask (a graph-structured stack can have many)


def trace(art: Artifact, matcher: Matcher) -> dict[str, Any]:
    """Every walk and close of the current mask, with the rows they contributed (with the contextual
    lexer, of every (lexer state, stacks) thread: the mask is their OR)."""
    threads = art.threads(matcher.parse_state)
    walks: list[dict[str, Any]] = []
    closes: list[dict[str, Any]] = []
    for q, stacks in threads:
        walks += _walks(art, stacks, q, None)
        for set_id, closing_row, allowed in art.closes[q]:
            after = art.recognizer.close_lexeme(stacks, set_id)
            closes.append({"closes_as": _terms(art, set_id), "set_id": set_id, "closing_tokens_row": closing_row,
                           "stacks_after": len(after),
                           "walks": [w for start, part in art.split_by_start(after)
                                     for w in _walks(art, part, start, allowed)]})
    rows = {r for w in walks for r in w["rows"]} | {r for c in closes for w in c["walks"] for r in w["rows"]}
    q = threads[0].lexer_state
    can_become = _terms(art, int(art.lexer.viable_sets[q])) if q != START else []
    return {"lexer_state": q, "threads": [t.lexer_state for t in threads], "open_lexeme_can_become": can_become,
            "tops": [_top(art, node) for _, stacks in threads for node in stacks], "walks": walks,
            "closes": closes,
            "cost": {"walks": len(walks) + sum(len(c["walks"]) for c in closes), "runtime_closes": len(closes),
                     "rows_combined": len(rows) + len(closes)}}


def why(art: Artifact, matcher: Matcher, token_id: int) -> dict[str, Any]:
    """Why `token_id` is allowed or masked after what `matcher` has committed."""
    data = art.token_bytes(token_id)
    allowed = bool(matcher.is_allowed(token_id))
    result: dict[str, Any] = {"token": token_id, "bytes": _text(data), "allowed": allowed}
    if token_id in art.eos_token_ids:
        result["eos"] = True
        result["reason"] = ("the output is a complete sentence here" if allowed
                            else "the output is not a complete sentence here")
        return result
    if not data:
        result["reason"] = "a special token: never allowed"
        return result
    walked = trace(art, matcher)
    state = matcher.parse_state
    result["lexing"] = (_contextual_lexing(art, state, data) if isinstance(state, ContextualState)
                        else _lexing(art, walked["lexer_state"], data))
    result["tops"] = walked["tops"]
    through = [dict(w, via="walk") for w in walked["walks"] if _has_any(art, w["rows"], token_id)]
    for close in walked["closes"]:
        if _has(art, close["closing_tokens_row"], token_id):
            through += [dict(w, via="close", closes_as=close["closes_as"]) for w in close["walks"]
                        if _has_any(art, w["rows"], token_id)]
    result["decided_by"] = through
    if allowed:
        result["reason"] = _allowed_reason(through[0]) if through else "allowed"
    else:
        try:
            art.recognizer.feed(state, data)
            result["reason"] = "masked: the bytes parse, but no completion of the output starts with them"
        except InputRejected as err:
            result["reason"] = f"masked: {err.reason}"
            result["rejected_at_byte"] = err.position
            result["expected"] = list(err.expected)
    return result


# -- walks ---------------------------------------------------------------------------------------

def _walks(art: Artifact, stacks: tuple[GSSNode, ...], q: int, allowed: frozenset[int] | None) -> list[dict[str, Any]]:
    out = []
    row_map = art.row_maps[q]
    for path in _paths(stacks):
        roots = art.roots_at(q, path[0]) if len(stacks) == 1 else tuple(
            d for d in art.dwa_roots[path[0]] if d in art.q_roots[q])
        for root in roots:
            if allowed is not None and root not in allowed:
                continue
            steps: list[dict[str, int | None]] = []
            d, emitted = root, []
            for depth, lr_state in enumerate(path):
                nxt = art.dwa_edges[d].get(lr_state, art.dwa_default[d])
                steps.append({"dwa": d, "read": lr_state, "next": nxt})
                if nxt == NO_STATE:
                    break
                if art.emits[d]:
                    emitted.append({"dwa": d, "row": int(row_map.get(int(art.accept_of[d]), 0))})
                d = nxt
                if depth == len(path) - 1:
                    steps.append({"dwa": d, "read": None, "next": NO_STATE})
            row = int(row_map.get(int(art.accept_of[d]), 0))
            out.append({"path": path, "root": root, "steps": steps, "stopped_at": d, "row": row,
                        "emitted": [e for e in emitted if e["row"]],
                        "rows": sorted({e["row"] for e in emitted if e["row"]} | ({row} if row else set()))})
    return out


def _paths(stacks: tuple[GSSNode, ...]) -> list[list[int]]:
    """LR states top-down along each stack path (at most MAX_PATHS)."""
    out: list[list[int]] = []
    todo: list[tuple[GSSNode, list[int]]] = [(node, [node.state]) for node in stacks]
    while todo and len(out) < MAX_PATHS:
        node, path = todo.pop()
        if not node.parents:
            out.append(path)
        for parent in node.parents:
            todo.append((parent, path + [parent.state]))
    return out


def _has(art: Artifact, row: int, token_id: int) -> bool:
    return bool(row) and bool((int(art.rows_int32[row, token_id >> 5]) >> (token_id & 31)) & 1)


def _has_any(art: Artifact, rows: list[int], token_id: int) -> bool:
    return any(_has(art, row, token_id) for row in rows)


# -- names ---------------------------------------------------------------------------------------

def _terms(art: Artifact, set_id: int) -> list[str]:
    names = art.terminal_names
    return [names[t] if names else str(t) for t in art.lexer.term_set(set_id)]


def _top(art: Artifact, node: GSSNode) -> dict[str, Any]:
    expects = art.recognizer.expected_on((node,))
    return {"lr_state": node.state, "core": art.lr_core(node.state), "expects": list(expects)}


def _lexing(art: Artifact, q: int, data: bytes) -> dict[str, Any]:
    assert isinstance(art.recognizer, Recognizer), "the basic lexer's split of a token"
    try:
        closed, open_state = art.recognizer.scanner.scan(q, data)
    except InputRejected as err:
        return {"from_lexer_state": q, "rejected_at_byte": err.position, "reason": err.reason}
    return {"from_lexer_state": q, "closes": [_terms(art, s) for s in closed],
            "open": _terms(art, int(art.lexer.viable_sets[open_state])) if open_state != START else []}


def _contextual_lexing(art: Artifact, state: ContextualState, data: bytes) -> dict[str, Any]:
    """`_lexing` with lark's contextual lexer: the bytes fed one at a time from every thread (each
    context of the stack tops lexes apart, and after a close the context is the new top's), listing
    at each close the terminals its threads close as, and what the open lexemes left can become, or
    where and why no thread is left (the closes up to there included)."""
    recognizer = art.recognizer
    assert isinstance(recognizer, ContextualRecognizer), "a contextual state comes from a contextual artifact"
    transitions, close_sets, viable = art.lexer.transitions, art.lexer.close_sets, art.lexer.viable_sets
    begin = [int(thread.lexer_state) for thread in state.threads]
    closes: list[list[str]] = []
    for at, byte in enumerate(data):
        closing = sorted({int(close_sets[q, byte]) for q, _ in state.threads
                          if transitions[q, byte] == DEAD and close_sets[q, byte]})
        if closing:
            closes.append(list(dict.fromkeys(name for set_id in closing for name in _terms(art, set_id))))
        try:
            state = recognizer.feed(state, data[at:at + 1])
        except InputRejected as err:
            return {"from_lexer_state": begin, "closed_before": closes, "rejected_at_byte": at, "reason": err.reason}
    open_sets = {int(viable[q]) for q, _ in state.threads if not recognizer.is_start[q]}
    return {"from_lexer_state": begin, "closes": closes,
            "open": list(dict.fromkeys(name for set_id in sorted(open_sets) for name in _terms(art, set_id)))}


def _allowed_reason(path: dict[str, Any]) -> str:
    read = " ".join(f"{s['dwa']}-[{s['read']}]->" for s in path["steps"] if s["next"] != NO_STATE)
    where = f"after closing the open lexeme as {' | '.join(path['closes_as'])}, " if path["via"] == "close" else ""
    walk = f"the walk from DWA root {path['root']} ({read or 'no step'} stop at {path['stopped_at']})"
    passed = [e for e in path["emitted"] if e["row"] != path["row"]]
    if passed:
        rows = ", ".join(f"{e['row']} (emitted by {e['dwa']})" for e in passed)
        return f"allowed: {where}{walk} takes rows {rows} and {path['row']} (stop); one has the token"
    return f"allowed: {where}{walk} ends on row {path['row']}, which has the token"


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def format_why(report: dict[str, Any]) -> str:
    lines = [f"token #{report['token']} {report['bytes']!r}: {'allowed' if report['allowed'] else 'masked'}",
             f"  {report['reason']}"]
    lexing = report.get("lexing")
    if lexing:
        if "closes" in lexing:
            closes = _closes_text(lexing["closes"])
            lines.append(f"  its bytes from lexer state {_states(lexing['from_lexer_state'])}: "
                         f"{'close ' + closes if closes else 'close nothing'}; "
                         f"open lexeme can become {' | '.join(lexing['open']) or '(none: ends at a boundary)'}")
        else:
            closed = _closes_text(lexing.get("closed_before", []))
            lines.append(f"  its bytes from lexer state {_states(lexing['from_lexer_state'])}: "
                         f"{'close ' + closed + ', then ' if closed else ''}{lexing['reason']}")
    for top in report.get("tops", []):
        lines.append(f"  stack top LR state {top['lr_state']} (below the open lexeme){_core(top)} expects "
                     f"{', '.join(top['expects']) or 'nothing'}")
    if "expected" in report:
        lines.append(f"  expected there: {', '.join(report['expected'])}")
    return "\n".join(lines)


def _closes_text(closes: list[list[str]]) -> str:
    """The lexemes a token's bytes close, in order ("STRING, then WS")."""
    return ", then ".join(" | ".join(names) or "(ignored)" for names in closes)


def _states(lexer_state: int | list[int]) -> str:
    """One lexer state, or a contextual state's threads' ("2, 7")."""
    return ", ".join(map(str, lexer_state)) if isinstance(lexer_state, list) else str(lexer_state)


def format_trace(report: dict[str, Any], worst: dict[str, Any] | None = None) -> str:
    lines = [f"lexer state {report['lexer_state']}"
             + (f", open lexeme can become {' | '.join(report['open_lexeme_can_become'])}"
                if report["open_lexeme_can_become"] else ", no open lexeme")]
    if len(report["threads"]) > 1:
        lines.append(f"contextual lexer: {len(report['threads'])} threads, lexer states "
                     f"{', '.join(map(str, report['threads']))} (the mask is their OR)")
    for top in report["tops"]:
        expects = ", ".join(top["expects"]) or "nothing"
        lines.append(f"stack top LR state {top['lr_state']}{_core(top)} expects {expects}")
    for walk in report["walks"]:
        lines.append(_walk_line(walk, "walk"))
    for close in report["closes"]:
        lines.append(f"close as {' | '.join(close['closes_as'])} (closing tokens: row {close['closing_tokens_row']}): "
                     f"{close['stacks_after']} stack(s) after it")
        lines += [_walk_line(w, "  walk after it") for w in close["walks"]]
    cost = report["cost"]
    line = (f"cost: {cost['walks']} walks, {cost['runtime_closes']} runtime closes, "
            f"{cost['rows_combined']} rows combined")
    if worst is not None:
        line += (f" (compile-time worst case per stack path: {worst['max_walks_per_mask']} walks, "
                 f"{worst['max_rows_ored']} rows, depth {worst['max_walk_depth']})")
    lines.append(line)
    return "\n".join(lines)


def _core(top: dict[str, Any]) -> str:
    return f" [{top['core']}]" if top.get("core") else ""


def _walk_line(walk: dict[str, Any], label: str) -> str:
    steps = " ".join(f"{s['dwa']} -[LR {s['read']}]->" for s in walk["steps"] if s["next"] != NO_STATE)
    emitted = "".join(f", emitted by {e['dwa']}: row {e['row']}" for e in walk["emitted"])
    return f"{label} root {walk['root']}: {steps} {walk['stopped_at']} stop -> row {walk['row']}{emitted}"
