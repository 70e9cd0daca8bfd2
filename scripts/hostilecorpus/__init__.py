"""The generator of scripts/make-hostile-corpus, one module per kind of hostile comic."""
