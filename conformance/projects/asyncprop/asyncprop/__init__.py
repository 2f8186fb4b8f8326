"""Async helpers and a codec, tested with pytest-asyncio and hypothesis."""
