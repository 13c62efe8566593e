"""Sub-command module (filled in by its issue)."""
