"""Robot descriptions: the URDF read, checked and bounded, and turned into a Model."""
