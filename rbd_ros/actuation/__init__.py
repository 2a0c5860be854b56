"""Joint parameters (friction, rotor inertia, offset) and the dynamics that include them."""
