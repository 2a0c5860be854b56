"""
The ``robot_description`` text: URDF XML or refused, never a path (``description`` docstring).

Its own module because both the parameter check (``parameters.problem``) and the loader
(``description``) read it, and the loader reads the parameters.
"""
from .reporting import excerpt


def xml_text(description):
    """Return the description without what may precede its first ``<``: a BOM, white space."""
    return description.lstrip("\ufeff \t\r\n")


def not_xml(description):
    """
    Say why ``description`` is not URDF XML, or return None.

    Only XML is taken: a text that does not start with ``<`` is refused, never opened as a
    path. The reason quotes a short excerpt of the text and says nothing about files.
    """
    if xml_text(description).startswith("<"):
        return None
    return (f"not URDF XML ({len(description)} characters, starting "
            f"{excerpt(description, 40)}); robot_description takes the XML itself, never a "
            "file path (the launch file's urdf_file argument reads a file)")
