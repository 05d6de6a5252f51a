"""Helpers every platform's renderer shares: CLI text, JSON text, host-script pieces, templates."""
