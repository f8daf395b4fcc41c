"""The value panel: the widget (view), its pure page model (model), and how it draws
items as lines, a records table and a tree."""
