"""File and wire formats: bounded text files, CDR messages, trajectory YAML."""
