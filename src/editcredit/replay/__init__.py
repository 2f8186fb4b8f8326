"""The replay check: a hash-chosen sample of the study's stored gradings, re-graded through the
training grader and sandbox, must give identical per-test statuses (docs/design.md)."""
