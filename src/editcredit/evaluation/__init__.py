"""Evaluation (METHOD §8): slot plans, the attempt ledger, slot files, scores with bounds."""
