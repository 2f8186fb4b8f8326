"""editcredit: counterfactual edit-block credit for RL post-training of coding agents."""

__version__ = "0.1.0"
