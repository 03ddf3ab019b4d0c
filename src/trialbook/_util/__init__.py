"""Small helpers every layer may use: durable file writes, hashing, owner tags, blocking calls, words."""
