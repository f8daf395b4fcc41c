"""One widget a file, its CSS beside it."""
