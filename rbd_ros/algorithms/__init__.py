"""One module per algorithm, each readable against its pseudo-code."""
