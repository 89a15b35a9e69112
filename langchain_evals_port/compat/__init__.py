"""Drop-in replacements for other evaluator libraries' public functions."""
