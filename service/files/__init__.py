"""Files the commands read and write: JSONL, CSV and Parquet records; safe outputs."""
