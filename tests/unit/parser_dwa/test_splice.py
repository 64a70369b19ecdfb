"""Composition of stack effects (the seed notes' worked example and cancellation rules)."""

from glrmask_cli.parser.stack_effects import ANY, StackEffect
from glrmask_cli.parser_dwa.splice import ROOT_CONFIG, compose

B, C, P, R, S, U = 10, 11, 12, 13, 14, 15


def test_write_read_pairs_cancel():
    # x: b- b+ p+   then   ]: p- b- c+   ==>   b- c+
    after_x = compose(ROOT_CONFIG, StackEffect(reads=(B,), writes=(B, P)))
    after_bracket = compose(after_x, StackEffect(reads=(P, B), writes=(C,)))
    assert after_bracket == ((B,), (C,))


def test_mismatched_write_read_kills_the_path():
    after = compose(ROOT_CONFIG, StackEffect(reads=(P,), writes=(R, S)))
    assert compose(after, StackEffect(reads=(R,), writes=())) is None


def test_wildcard_reads_match_any_written_state():
    after = compose(ROOT_CONFIG, StackEffect(reads=(P,), writes=(P, R, S)))
    assert compose(after, StackEffect(reads=(ANY, ANY, P), writes=(P, U))) == ((P,), (P, U))


def test_reads_past_written_states_extend_the_old_stack_prefix():
    # p- r+ s+   then   s- r- ANY- u- u+ c+  ==>  p- ANY- u- u+ c+
    after = compose(ROOT_CONFIG, StackEffect(reads=(P,), writes=(R, S)))
    deeper = compose(after, StackEffect(reads=(S, R, ANY, U), writes=(U, C)))
    assert deeper == ((P, ANY, U), (U, C))
