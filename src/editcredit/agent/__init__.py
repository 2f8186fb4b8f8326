"""Agent episodes: edit blocks, score-blind block selection and counterfactual trees (METHOD §2)."""
