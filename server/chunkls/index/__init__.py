"""The workspace index: ``queries`` (the query API), ``store`` (its one implementation),
``session`` (the one write step); a warm CLI question loads no numpy or bulk indexer."""
