"""Grading judges: verdicts from observations (METHOD §6), the utility U, controls (§7)."""
