"""Developer programs, kept out of the shipped product (the wheel and the Docker image leave dev/ out).

* :mod:`dev.bench`: the benchmarks behind ``anchorgpu bench NAME`` (the CLI subcommand is a thin entry here);
* :mod:`dev.telegram_stub`: a local Telegram Bot API server, for the tests and the bot benchmarks;
* :mod:`dev.glossary`: the glossary generator (``python -m dev.glossary [--check]``; ``make test`` checks),
  beside the other offline maintainer programs.

Tests and benchmarks import these as ``dev.…``; the running product never does (an import-linter contract in
pyproject.toml, whose one exception is the CLI's bench entry).
"""
