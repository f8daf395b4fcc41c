"""The editor: the tabbed code editor (editor), the buffers it keeps (buffers), and the
question asked before unsaved work is closed (confirm_close)."""
