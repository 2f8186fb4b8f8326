"""The stop-or-continue study (METHOD §12): per-edit checkpoints and offline stop policies.

- :mod:`.points`: decision points of a trajectory, the tree at each, and what was visible then.
- :mod:`.build`: grading each distinct checkpoint tree (rule ``stop_checkpoints``).
- :mod:`.policies`: fixed policies and the rule on visible test counts; exact offline evaluation.
- :mod:`.learned`: logistic regression, gradient-boosted trees and the two-head model.
- :mod:`.study`: success-cost curves, paired task bootstrap, the protocol's gate.
"""
