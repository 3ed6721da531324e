"""The decision-point study (issue 56; docs/experiment/decision-points/preregistration.md).

The confirmatory run let a small model work whole tasks, and the treatment was rarely
delivered: most runs never read an object, so never saw an affordance list. Here the
treatment is delivered by construction. Each *item* is one moment of the oracle's B
trajectory where a decision is taken about an object just read — a write step, or a
point where the right move is not to write (a trap). The conversation up to that moment
is frozen once (:mod:`~experiment.decision_points.freeze`), with the read of the object
concerned (call and result) as its last turn, and shown to the model under four arms
(:mod:`~experiment.decision_points.arms`): A without affordance lists, B with them,
B-focus with the tools narrowed to what was read, B-wrong with the lists of another
state. The model answers once per item, arm and sample
(:mod:`~experiment.decision_points.run`); :mod:`~experiment.decision_points.scoring`
says whether the answer is the oracle's decision.
"""
