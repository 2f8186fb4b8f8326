"""Sandboxes observe: they run a task's tests on a patched tree and report what they saw."""
