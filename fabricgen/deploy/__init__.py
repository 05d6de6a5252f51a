"""Deploy: diff, commit with an on-device revert timer, confirm, rollback and waves, through Nornir and each
platform's driver; the run journal."""
