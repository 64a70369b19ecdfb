"""Development tooling shared by the tests (tests/), the benchmark (bench/) and `make exactness`.

Data fetching (pinned, hash-checked, cached), the judges and document sets of the exactness
oracles, and the exactness runner (`python -m devtools.exactness`). Nothing here imports pytest or
tests/, and the package is not part of the `glrmask` wheel (pyproject.toml packages only
glrmask_cli*); it is importable from the repository root.
"""
