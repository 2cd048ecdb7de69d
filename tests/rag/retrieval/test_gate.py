from __future__ import annotations

from rag.retrieval.gate import GateEvidence, GateThresholds, calibrate


def test_any_strong_signal_is_enough() -> None:
    gate = GateThresholds(names=0.9, lexical=0.5, dense=0.4)
    assert gate.in_scope(GateEvidence(0.95, 0.0, 0.0))
    assert gate.in_scope(GateEvidence(0.0, 0.6, 0.0))
    assert gate.in_scope(GateEvidence(0.0, 0.0, 0.45))
    assert not gate.in_scope(GateEvidence(0.8, 0.4, 0.3))


def test_calibration_keeps_recall_then_maximises_rejection() -> None:
    inside = [GateEvidence(0.0, 0.7, 0.0)] * 19 + [GateEvidence(0.0, 0.0, 0.5)]
    outside = [GateEvidence(0.0, 0.35, 0.2)] * 10
    result = calibrate(inside, outside, max_rejected=0.05)
    assert result.in_scope_recall >= 0.95
    assert result.out_of_scope_accuracy == 1.0
    assert result.thresholds.lexical > 0.35


def test_a_phrasing_and_a_passage_fairly_close_together_are_enough_where_neither_alone_is() -> None:
    gate = GateThresholds(names=0.6, lexical=0.5, dense=0.86, phrasing=0.89, joint_dense=0.82, joint_phrasing=0.88)
    assert gate.in_scope(GateEvidence(names=0.0, lexical=0.1, dense=0.83, phrasing=0.885))
    assert not gate.in_scope(GateEvidence(names=0.0, lexical=0.1, dense=0.81, phrasing=0.885))  # the passage far
    assert not gate.in_scope(GateEvidence(names=0.0, lexical=0.1, dense=0.85, phrasing=0.87))  # the phrasing far
