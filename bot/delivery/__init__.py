"""Getting updates in and answers out exactly once: polling with the update journal, de-duplication
(update claims), answers in flight (generations), placement reminders."""
