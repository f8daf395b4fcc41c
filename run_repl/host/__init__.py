"""Host sets: loading `--host module:attr`, describing a host's functions, and the demo host."""
