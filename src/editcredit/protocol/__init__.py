"""Pre-registered study protocols, sealed labels, written-once gates and budgets (METHOD §11).

- :mod:`.spec`: a protocol file (``config/protocols/{study}.yaml``) and its hash.
- :mod:`.seal`: freezing a protocol, the one function that reads a sealed split's labels, and
  gate verdicts written once.
- :mod:`.budget`: budget caps checked before each step, receipts when a cap stops a job.
"""
