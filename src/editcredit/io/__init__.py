"""Shared I/O below every other package: content hashes, the identity of the code, result files
written atomically with their provenance block, volatile sidecars, identity receipts of model
directories, and the safetensors reader. Nothing here imports another editcredit package."""
