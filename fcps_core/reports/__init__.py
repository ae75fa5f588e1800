"""Reports of results: plain-language explanations, the glossary, the HTML run report."""
