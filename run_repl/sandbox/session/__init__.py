"""One run, the parent's side: the worker pool and pipe, host calls, the envelope."""
