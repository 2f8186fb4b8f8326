"""Audits of a study's artefacts: parameter audits of checkpoints, drift, the base's pin and
the checks of ``editcredit verify`` (the shared I/O they use is :mod:`editcredit.io`)."""
