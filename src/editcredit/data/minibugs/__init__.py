"""minibugs: the embedded synthetic bug suite (seed pool + procedural mutations)."""
