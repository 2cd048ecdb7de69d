"""Getting updates in and answers out exactly once: polling with the update journal, de-duplication
(update claims), answers in flight (generations), answer jobs and their recovery by another replica,
recorded answers, placement reminders and the background tasks that run them."""
