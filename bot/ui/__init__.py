"""What the bot draws: callback data (:mod:`bot.ui.callbacks`) and keyboards (:mod:`bot.ui.keyboards`).

Leaf modules: a router that draws a button another router handles imports them, never that router.
"""
