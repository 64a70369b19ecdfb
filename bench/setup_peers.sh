#!/usr/bin/env bash
# Create the benchmark's peer venvs under <repo>/.cache/bench/ (idempotent).
# Input: bench/requirements-peers-*.txt (pinned). Output: one venv per peer, each with a stamp file
# holding the sha256 of its requirements, so a re-run only reinstalls a venv whose pins changed.
# Policy: peers never go into the project .venv; the Rust GLRMask (PyPI `glrmask`, our distribution
# name) gets its own venv. Grammar files and documents are fetched by devtools/data.py when needed.
# Usage: bench/setup_peers.sh [PEER ...]   (default: all peers)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROOT="$REPO/.cache/bench"
PYTHON="${PYTHON:-python3}"
TORCH_SPEC="torch==2.13.0"
XGRAMMAR_SPEC="xgrammar==0.2.8"
ALL_PEERS=(llguidance xgrammar outlines glrmask-rs)

stamp_of() {  # the pins that decide a venv's content
    { cat "$REPO/bench/requirements-peers-$1.txt"; if [ "$1" = xgrammar ]; then echo "$TORCH_SPEC $XGRAMMAR_SPEC"; fi; } \
        | sha256sum | cut -d' ' -f1
}

install_peer() {
    local peer="$1" venv="$ROOT/$1" req="$REPO/bench/requirements-peers-$1.txt"
    [ -f "$req" ] || { echo "setup_peers: unknown peer '$peer'; known: ${ALL_PEERS[*]}" >&2; return 2; }
    local want; want="$(stamp_of "$peer")"
    if [ -f "$venv/.stamp" ] && [ "$(cat "$venv/.stamp")" = "$want" ]; then
        echo "setup_peers: $peer up to date ($venv)"; return 0
    fi
    echo "setup_peers: installing $peer into $venv"
    rm -rf "$venv"
    "$PYTHON" -m venv "$venv"
    local pip=("$venv/bin/python" -m pip install --quiet --disable-pip-version-check)
    if [ "$peer" = xgrammar ]; then
        "${pip[@]}" "$TORCH_SPEC"
        "${pip[@]}" --no-deps "$XGRAMMAR_SPEC"
    fi
    "${pip[@]}" -r "$req"
    echo "$want" > "$venv/.stamp"
}

mkdir -p "$ROOT"
peers=("$@"); [ ${#peers[@]} -gt 0 ] || peers=("${ALL_PEERS[@]}")
for p in "${peers[@]}"; do install_peer "$p"; done
