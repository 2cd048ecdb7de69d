"""Infrastructure: settings, the database and its migrations, i18n, logging, files and leases."""
