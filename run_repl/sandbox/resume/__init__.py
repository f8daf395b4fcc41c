"""Resuming a run: the replay plan and the signed continuation token."""
