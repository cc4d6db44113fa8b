"""The review page: a local server to confirm or overturn decisions."""
