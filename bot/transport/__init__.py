"""How requests reach the Bot API: the JSON-body session, the one retry policy, pinned response models."""
