"""The differential fuzzer: random small programs, each explored with and without reduction (``programs``)."""
