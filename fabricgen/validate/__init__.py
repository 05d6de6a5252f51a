"""Validators for rendered device configs (SONiC YANG, ...)."""
