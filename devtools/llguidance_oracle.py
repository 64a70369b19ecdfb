"""Oracle 4: llguidance's per-step masks over the same token ids, compared with our fill_bitmask.

Input: a built artifact + vocabulary, the grammar's Lark text, documents as token-id lists. llguidance
runs in its own venv (.cache/bench/llguidance, made by `bash bench/setup_peers.sh llguidance`): this
file is also its worker (`python llguidance_oracle.py`; stdlib + numpy + llguidance only at import).
Its tokenizer is built from OUR token bytes (from_tiktoken), so ids agree by construction; vocabularies
with two ids for the same bytes cannot be given to it and are reported as not run.
"""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

VENV_PYTHON = Path(__file__).resolve().parents[1] / ".cache" / "bench" / "llguidance" / "bin" / "python"
# GPT-2's pre-tokenizer pattern: llguidance wants one, but it only splits text it encodes itself
PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
MASK, DONE, REJECTED, GRAMMAR_ERROR = b"M", b"E", b"X", b"G"


class NotRun(Exception):
    """llguidance cannot run on this cell; the message is the reason shown in the report."""


def compare(b, lark_text: str, documents: list[tuple[str, list[int]]], max_examples: int = 8) -> dict:
    """Per step: our packed mask vs llguidance's. Returns counts, classes and a few examples."""
    if not VENV_PYTHON.is_file():
        raise NotRun(f"no llguidance venv at {VENV_PYTHON}; run `bash bench/setup_peers.sh llguidance`")
    job = _job(b, lark_text, documents)
    out = {"llguidance_steps": 0, "llguidance_disagreements": 0, "llguidance_rejected_documents": 0,
           "llguidance_classes": {}, "llguidance_examples": []}
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen([str(VENV_PYTHON), __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=errors)
        try:
            proc.stdin.write(json.dumps(job).encode())    # the worker reads all of it before writing
            proc.stdin.close()
            for (name, _), tokens in zip(documents, job["documents"], strict=True):
                _compare_document(b, name, tokens, proc.stdout, job["width"], out, max_examples)
        except NotRun as err:
            proc.kill()
            proc.wait()
            errors.seek(0)
            tail = errors.read().decode(errors="replace").strip().splitlines()[-1:]
            raise NotRun(f"{err}{': ' + tail[0] if tail else ''}") from None
        finally:
            if proc.poll() is None and proc.stdout.read(1):
                proc.kill()             # an exception of ours left the worker writing
            proc.wait()
    return out


def _job(b, lark_text: str, documents: list[tuple[str, list[int]]]) -> dict:
    vocab = b.vocab
    ordinary = [(t, data) for t, data in enumerate(vocab.token_bytes) if t not in vocab.special_ids]
    if len({data for _, data in ordinary}) != len(ordinary):
        raise NotRun(f"{vocab.name}: several ids share the same bytes; "
                     "llguidance's from_tiktoken needs one id per bytes")
    specials = {text: t for t, text in sorted(vocab.special_names.items())}
    return {"ranks": [[base64.b64encode(data).decode(), t] for t, data in ordinary], "specials": specials,
            "eos": list(b.artifact.eos_token_ids), "n_vocab": vocab.size, "grammar": lark_text,
            "width": (vocab.size + 31) // 32, "documents": [_our_prefix(b, tokens) for _, tokens in documents]}


def _our_prefix(b, tokens: list[int]) -> list[int]:
    """The tokens our matcher accepts, plus the first refused one (llguidance sees the same steps)."""
    matcher = b.artifact.matcher()
    for i, token in enumerate(tokens):
        if not matcher.is_allowed(token):
            return tokens[:i + 1]
        matcher.commit(token)
    return tokens


def _compare_document(b, name: str, tokens: list[int], stream, width: int, out: dict, max_examples: int) -> None:
    """Read the worker's records for one document (`tokens`: our accepted prefix + the refused token)."""
    matcher = b.artifact.matcher()
    ours = np.zeros((1, width), dtype=np.int32)
    step, alive = 0, True
    while True:
        tag = stream.read(1)
        if tag == GRAMMAR_ERROR:
            size = struct.unpack("<I", stream.read(4))[0]
            raise NotRun("llguidance rejects the grammar: " + stream.read(size).decode(errors="replace"))
        if tag in (DONE, REJECTED):
            out["llguidance_rejected_documents"] += tag == REJECTED
            return
        if tag != MASK:
            raise NotRun(f"llguidance worker stopped (record {tag!r}); see its stderr")
        theirs = np.frombuffer(stream.read(4 * width), dtype=np.int32)
        if alive:
            matcher.fill_bitmask(ours)
            out["llguidance_steps"] += 1
            if not np.array_equal(ours[0], theirs):
                where = "start" if step == 0 else "complete" if matcher.is_accepting() else "inside"
                _classify(b, (name, tokens, step, where), ours[0], theirs, out, max_examples)
            alive = step < len(tokens) and matcher.is_allowed(tokens[step])
            if alive:
                matcher.commit(tokens[step])
        step += 1


def _classify(b, at: tuple, ours: np.ndarray, theirs: np.ndarray, out: dict, max_examples: int) -> None:
    """Class = which side allows more, where (start / complete: EOS allowed / inside), and `forced`
    when llguidance allows exactly one token (it narrows a forced continuation to one spelling)."""
    name, tokens, step, where = at

    def bits(row: np.ndarray) -> np.ndarray:
        return np.unpackbits(row.view(np.uint8), bitorder="little")[:b.vocab.size].astype(bool)

    mine, other = bits(ours), bits(theirs)
    only_ours, only_theirs = np.flatnonzero(mine & ~other), np.flatnonzero(other & ~mine)
    eos = set(b.artifact.eos_token_ids)
    kinds = []
    for side, ids in (("ours_only", only_ours), ("llguidance_only", only_theirs)):
        if len(ids):
            kinds.append(side + ("_eos" if set(ids.tolist()) <= eos else ""))
    key = "+".join(kinds) + "@" + where + ("/forced" if len(np.flatnonzero(other)) == 1 else "")
    out["llguidance_disagreements"] += 1
    out["llguidance_classes"][key] = out["llguidance_classes"].get(key, 0) + 1
    if sum(1 for e in out["llguidance_examples"] if e["class"] == key) < max_examples:
        out["llguidance_examples"].append({
            "class": key, "document": name, "step": step,
            "prefix_tail": b.vocab.decode_bytes(tokens[:step])[-40:].decode("utf-8", "replace"),
            "ours_only": [[int(t), b.vocab.token_bytes[t].decode("utf-8", "replace")] for t in only_ours[:6]],
            "llguidance_only": [[int(t), b.vocab.token_bytes[t].decode("utf-8", "replace")] for t in only_theirs[:6]],
            "n_ours_only": len(only_ours), "n_llguidance_only": len(only_theirs),
            "llguidance_allowed": [int(t) for t in np.flatnonzero(other)[:6]]})


# ---- worker side: runs inside the llguidance venv ------------------------------------------------

def _worker() -> None:
    import llguidance
    import llguidance.numpy

    job = json.loads(sys.stdin.buffer.read())
    out = sys.stdout.buffer
    encoder = {base64.b64decode(data): t for data, t in job["ranks"]}
    tokenizer = llguidance.LLTokenizer.from_tiktoken(encoder=encoder, special_tokens=job["specials"],
                                                     pattern=PATTERN, eos_token=job["eos"], n_vocab=job["n_vocab"])
    probe = llguidance.LLMatcher(tokenizer, job["grammar"], log_level=0)
    if probe.is_error():
        message = probe.get_error().encode()[:2000]
        out.write(GRAMMAR_ERROR + struct.pack("<I", len(message)) + message)
        out.flush()
        return
    bitmask = np.zeros((1, job["width"]), dtype=np.int32)
    for tokens in job["documents"]:
        matcher = llguidance.LLMatcher(tokenizer, job["grammar"], log_level=0)
        end = DONE
        for step in range(len(tokens) + 1):
            llguidance.numpy.fill_next_token_bitmask(matcher, bitmask, 0)
            out.write(MASK + bitmask.tobytes())
            if step < len(tokens) and (not matcher.consume_token(tokens[step]) or matcher.is_error()):
                end = REJECTED
                break
        out.write(end)
    out.flush()


if __name__ == "__main__":
    _worker()
