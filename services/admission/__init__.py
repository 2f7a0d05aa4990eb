"""The admission service: mutating plugins, the strategy, schema and meta validation, validating plugins."""
