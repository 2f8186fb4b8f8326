"""GRPO training pieces: config, group advantages, policy losses, aggregation (METHOD §4)."""
