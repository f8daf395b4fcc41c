"""The Textual IDE: editor, live logs, call audit, value window, inline approvals."""
