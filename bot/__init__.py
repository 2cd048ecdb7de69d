"""Telegram front of AnchorGPU assistant (aiogram). Domain code never imports this package."""
