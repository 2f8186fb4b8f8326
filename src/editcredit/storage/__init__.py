"""Disk for the study: the plan's forecast of checkpoint and result bytes (``forecast``), the
free-space and free-inode monitor of training and evaluation jobs (``monitor``), and the
retention of intermediate checkpoints (``retention``). docs/design.md, "Storage"."""
