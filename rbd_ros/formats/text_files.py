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

Files a tool writes (``rbd_retime -o``, ``rbd_excite -o``): :func:`check_output` refuses,
before the work, a path where a new regular file cannot be put (something there that is not
a regular file: a FIFO, a device, a directory; a missing directory; one that takes no new
file); :func:`write_atomic` writes through a temporary file renamed into place, with the mode
``open()`` gives (not ``mkstemp``'s 0600).
"""
import argparse
import os
import stat
import sys
import tempfile

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


def check_output(path, what="output"):
    """
    Refuse (ValueError, one line) a path a new regular file cannot be written at.

    Checked before a tool does its work, so that a bad ``-o`` costs nothing: the path must
    name a file (not end with a separator), anything already there must be a regular file
    (a FIFO, a device such as ``/dev/null``, a directory or a socket is refused: replacing
    it would remove it), and its directory must exist, be a directory and take a new file
    (tried: a temporary file created and removed at once). Returns the absolute path.
    """
    shown = excerpt(path)
    try:
        path = os.fspath(path)
    except TypeError:
        raise ValueError(f"{what} {shown}: not a file name") from None
    if not path or path.endswith(os.sep) or os.path.basename(path) in (".", ".."):
        raise ValueError(f"{what} {shown}: names a directory, not a file")
    final = os.path.abspath(path)
    _refuse_replacing(final, what, shown)
    folder = os.path.dirname(final)
    if not os.path.isdir(folder):
        why = "is not a directory" if os.path.lexists(folder) else "does not exist"
        raise ValueError(f"{what} {shown}: its directory {excerpt(folder)} {why}")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{os.path.basename(final)}.probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ValueError(f"{what} {shown}: cannot write in {excerpt(folder)} "
                         f"({exc.strerror or type(exc).__name__})") from None
    return final


def _refuse_replacing(final, what, shown):
    """Refuse (ValueError) anything but a regular file at ``final`` (links followed)."""
    try:
        mode = os.stat(final).st_mode
    except (FileNotFoundError, NotADirectoryError):    # nothing there (a dangling link)
        return
    except OSError as exc:
        raise ValueError(f"{what} {shown}: {exc.strerror or type(exc).__name__}") from None
    why = _not_regular(mode)
    if why:
        raise ValueError(f"{what} {shown}: {why}; refusing to replace it")


def write_atomic(path, data, what="output"):
    """
    Write ``data`` (str: UTF-8, or bytes) to ``path``: a temporary file beside it, renamed.

    The file gets the mode ``open()`` would give a new file (0o666 less the umask: 0644
    under the usual umask 022), not ``mkstemp``'s 0600. The path is checked again just
    before the rename (:func:`check_output`'s rule); ValueError saying why it cannot be
    written; nothing is left under the final name unless complete.
    """
    final = check_output(path, what)
    if isinstance(data, str):
        data = data.encode("utf-8")
    folder, name = os.path.split(final)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.partial-", dir=folder)
    except OSError as exc:
        raise ValueError(f"{what} {excerpt(path)}: cannot write it "
                         f"({exc.strerror or type(exc).__name__})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            os.fchmod(f.fileno(), 0o666 & ~_umask())
            f.write(data)
        _refuse_replacing(final, what, excerpt(path))
        os.replace(tmp, final)
    except OSError as exc:
        _remove(tmp)
        raise ValueError(f"{what} {excerpt(path)}: cannot write it "
                         f"({exc.strerror or type(exc).__name__})") from None
    except BaseException:
        _remove(tmp)
        raise


def generator_main(argv, doc, path, module_source, command):
    """
    Run a generator of a checked-in module: write ``module_source()`` at ``path`` if it differs.

    The ``main`` of each (``calls.py``, ``algorithm_kernels.py``, ``joint_dispatch.py``):
    ``argv`` its arguments, ``doc`` its module docstring (the first line describes it), and
    ``--check`` writes nothing and returns 1, saying to run ``command``, where the file is not
    what it would write. Returns the exit status.
    """
    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help=f"exit 1 where {os.path.basename(path)} differs from what would be "
                        "written (nothing is written)")
    check = parser.parse_args(argv).check
    text = module_source()
    try:
        with open(path, encoding="utf-8") as f:
            current = f.read()
    except OSError:
        current = None
    if check:
        if current != text:
            print(f"{path} is stale (not what its generator writes): run {command}",
                  file=sys.stderr)
            return 1
        return 0
    if current != text:
        write_atomic(path, text, os.path.basename(path))
        print(f"wrote {path}")
    return 0


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _umask():
    """Return the process's umask, read without changing it where Linux says it."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)               # elsewhere: set and restore (not thread-safe)
    os.umask(mask)
    return mask


def excerpt(value, limit=80):
    """Quote a path in an error: escaped (repr), cut to about ``limit`` characters."""
    text = os.fsdecode(value) if isinstance(value, bytes) else str(value)
    if len(text) > limit:
        text = text[:limit - 20] + "..." + text[-17:]
    return repr(text)
