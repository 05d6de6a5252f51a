"""Input schemas (pydantic v2): the single source of truth for what an intent and an inventory may say."""
