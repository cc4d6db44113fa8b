"""Names vulture (``make lint``) reports as unused that frameworks call: keep each entry justified.

Vulture reads this file as code that uses the names below; nothing imports it.
"""
# ruff: noqa: B018, F821

# click runs these commands (service/cli/__init__.py; warmup_command and the cold tier's by their
# LAZY_COMMANDS paths, migrate_command as archive_group's subcommand)
explain
evaluate
idf_build
warmup_command
migrate_command
search_command
# the cold tier's bench and tests wait for the filter of archived keys to load (bench/suite/cold.py)
filter_loaded
# Faust calls them: a timer, web views and the views' handlers (agents/app.py)
_refresh_lag
Health
Ready
Check
Search
_.post
# pydantic calls validators and reads model_config; settings_customise_sources gets these by keyword
_._bits
_._simhash_bits
_._ordered
_._store_scheme
_._broker_scheme
_._archive_scheme
_._ttl_positive
_._zone
model_config
_.settings_customise_sources
dotenv_settings
file_secret_settings
_.get_field_value
# http.server reads and calls them (service/review/server.py); click runs review_command
daemon_threads
_.address_family
protocol_version
_.log_message
_.do_GET
_.do_POST
review_command
# public helpers that only the tests call
normalize_text  # service/text/normalize.py: one text through the batch kernel
acl_rules  # storage/redis/acl.py: tests/fixtures/redis_servers.py builds the test user's ACL from it
candidate_probability  # service/sketch/index.py: the LSH curve the band choice rests on
_.doc_keys  # storage/redis/keys.py: a document's record and decision keys
# the window's state for its callers (service/sketch/window.py): windows closed, seconds left
closed
_.time_left
# numba calls a compile listener's on_start and on_end (service/kernels/cache.py)
_.on_end
# numba calls a cache locator's methods (KernelCacheLocator, service/kernels/cache.py)
_.get_cache_path
_.get_source_stamp
_.get_disambiguator
_.from_function
# the public API's module hooks (service/__init__.py: lazy exports)
__getattr__
__dir__
# click commands (service/cli/learning.py)
model_show
model_history
model_rollback
# one-value references of documented formats and kernels, read by the tests that pin them
# (storage/redis/keys.py, service/sketch/index.py, service/kernels/, service/sketch/fingerprint.py)
_.index_slot
_.shard_key
_.bucket_key
_.member
_.lex_range
_.simhash_keys
_.band_keys
jaccard_estimates
hamming_distances
corrected_jaccard
# report fields read by people (a learning report's counts)
false_merges
missed
# the media room's entry points and result fields (service/media/): the engine does not call them
# yet (issue 23); the tests and bench/images.py do
_.dhash
_.phash_hex
hash_document_images
subtitle_text
