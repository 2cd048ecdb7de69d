"""telegram-test-api, a third-party Bot API emulator (npm), as the bot's server in an e2e test.

``server.js`` runs the package as published; :mod:`.emulator` starts it and plays the user through its own
client HTTP API; :mod:`.proxy` fills the two gaps that stop any aiogram bot on it before the first update.
The package is installed by ``scripts/setup.sh`` into ``var/npm`` from this folder's lockfile.
"""
