"""The cold tier on PostgreSQL: schema and migrations, batched window lookups, the archive's writes."""
