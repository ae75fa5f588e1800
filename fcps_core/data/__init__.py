"""The panel and what is read off it before a fit: labels, encodings, blocks, costs, names."""
