"""Pytest fixtures that start a real Label Studio (filled in by the Label Studio integration work)."""
