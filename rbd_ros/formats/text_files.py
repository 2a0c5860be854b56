"""
Files named from outside (a parameter, a command-line argument): read bounded in time and size.

A joint parameter file (``joint_friction``), a bag list (``replay.fleet_inputs``), a URDF
(``rbd_ros.load_model(path)``, ``rbd_replay --urdf``) is a regular file of at most a few
MB. Anything else at that path is refused before a byte is read, with a one-line reason
that quotes nothing of its content: a FIFO (whose ``open()`` would wait for a writer
forever), a device (``/dev/zero`` never ends), a directory, a socket; and so is a file
larger than the limit, by its size. The file is opened non-blocking and checked again on
the open descriptor (``fstat``), so a path swapped for a FIFO between the checks cannot
block either.
"""
import os
import stat

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _not_regular(mode):
    """Say what a non-regular file of ``mode`` is, or return None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"it is {kind}, not a regular file"


def _size_problem(size, limit):
    return f"larger than {limit / (1 << 20):g} MiB ({size} bytes)" if size > limit else None


def read_bytes(path, limit):
    """
    Return the bytes of the regular file ``path``, at most ``limit`` bytes.

    ValueError with a short reason: it cannot be read (the OS's reason), it is not a
    regular file (which kind it is), or it is larger than ``limit`` (said in MiB).
    """
    try:
        why = _not_regular(os.stat(path).st_mode)
        if why:
            raise ValueError(why)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or type(exc).__name__})") from None
    except (TypeError, UnicodeError):
        raise ValueError("cannot read it (not a file name)") from None
    try:
        st = os.fstat(fd)
        why = _not_regular(st.st_mode) or _size_problem(st.st_size, limit)
        if why:
            raise ValueError(why)
        with os.fdopen(fd, "rb") as f:
            fd = None
            data = _read_at_most(f, limit + 1, st.st_size)
    except OSError as exc:
        raise ValueError(f"cannot read it ({exc.strerror or type(exc).__name__})") from None
    finally:
        if fd is not None:
            os.close(fd)
    if len(data) > limit:                         # it grew since fstat
        raise ValueError(_size_problem(len(data), limit))
    return data


def _read_at_most(f, most, size):
    """Read up to ``most`` bytes of ``f``, whose size was ``size``: no buffer of ``most``."""
    parts = [f.read(min(most, size + 1))]
    n = len(parts[0])
    while n > size and n < most:              # it grew since fstat: read on, in chunks
        part = f.read(min(most - n, 1 << 20))
        if not part:
            break
        parts.append(part)
        n += len(part)
    return b"".join(parts)


def read_text(path, limit):
    """
    Return the UTF-8 text of the regular file ``path``, at most ``limit`` bytes.

    ValueError with a short reason: as :func:`read_bytes`, or it is not UTF-8 text.
    """
    data = read_bytes(path, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
