"""Load: YAML (intent, inventory) into the contracts' pydantic models, every error with FILE:LINE."""
