"""Writing files safely: atomic output files, the one CSV writer, JSON-ready values."""
