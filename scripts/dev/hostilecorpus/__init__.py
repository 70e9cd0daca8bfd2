"""The generator of scripts/dev/make-hostile-corpus, one module per kind of hostile comic."""
