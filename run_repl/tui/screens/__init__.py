"""Modal screens: history, call detail, help."""
