"""What goes out to Telegram: replies, their rendering and delivery as messages, drafts, rich tables and charts."""
