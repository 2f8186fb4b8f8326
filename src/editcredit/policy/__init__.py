"""Policies: tokenizers, tiny HF causal LMs, and generation behind one interface."""
