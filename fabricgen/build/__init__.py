"""Build: write rendered trees atomically and fast (manifest, incremental and neighbourhood updates)."""
