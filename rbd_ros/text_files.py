"""
Small text files named from outside (a parameter, a command-line argument): read bounded.

A joint parameter file (``joint_friction``) or a bag list (``replay.fleet_inputs``) is a
few kB; a path to anything else (a device, a log of gigabytes, a binary) is refused after
reading at most its limit, with a one-line reason that quotes nothing of its content.
"""


def read_text(path, limit):
    """
    Return the UTF-8 text of the file ``path``, at most ``limit`` bytes.

    ValueError with a short reason: it cannot be read (the OS's reason), it is larger than
    ``limit`` (said in MiB) or it is not UTF-8 text.
    """
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or type(exc).__name__})") from None
    if len(data) > limit:
        raise ValueError(f"larger than {limit / (1 << 20):g} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
