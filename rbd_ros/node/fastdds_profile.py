"""
The Fast DDS profile the package's processes run with: ``config/fastdds_large_messages.xml``.

It gives a participant an 8 MB shared-memory segment where Fast DDS's default is 512 kB
(README "Large requests"). The planner process's answers need it (MBs of derivatives). So
does the dynamics node: at 1 kHz talos's outputs take ~45 kB a tick, so 512 kB hold the
last ~11 ticks a local subscriber has not read yet; once every buffer is in use a publish
waits for one (in rclpy's publish, the GIL held) and the whole node stops with it. A
subscriber paused for 100 ms every 1.5 s made the node lose 13 joint_states messages in
15 s with 512 kB, none with 8 MB (180 ms of talos's outputs; doc/benchmarks.md, "a slow
subscriber"). Unless the environment chooses a Fast DDS configuration itself
(:data:`FASTDDS_VARIABLES`) or another RMW, the node's process (``spin_node``) and the
planner process (``planner.process``) run with it, found as installed or in this checkout
(:func:`large_messages_profile`).
"""
import os
import sys

# what, set in the environment, is the user's choice of Fast DDS configuration
FASTDDS_VARIABLES = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE",
                     "FASTDDS_BUILTIN_TRANSPORTS", "RMW_FASTRTPS_USE_QOS_FROM_XML")
PROFILE_NAME = "fastdds_large_messages.xml"


def package_folder():
    """Return the folder of the ``rbd_ros`` package this module belongs to."""
    import rbd_ros
    return os.path.dirname(os.path.abspath(rbd_ros.__file__))


def large_messages_profile():
    """Return the path of ``config/fastdds_large_messages.xml``, or None if not found."""
    package = package_folder()
    candidates = [
        os.path.join(os.path.dirname(package), "config", PROFILE_NAME),      # a checkout
        # <prefix>/lib/pythonX.Y/site-packages/rbd_ros: colcon's install space, a venv
        os.path.join(package, *[os.pardir] * 4, "share", "rbd_ros", "config", PROFILE_NAME),
        os.path.join(sys.prefix, "share", "rbd_ros", "config", PROFILE_NAME)]
    return next((os.path.normpath(p) for p in candidates if os.path.isfile(p)), None)


def profile_for(environ):
    """
    Return the profile a process with the environment ``environ`` should be given, or None.

    None where ``environ`` runs another RMW or configures Fast DDS itself, or where the
    profile is not found.
    """
    if environ.get("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp") != "rmw_fastrtps_cpp":
        return None
    if any(environ.get(k) for k in FASTDDS_VARIABLES):
        return None
    return large_messages_profile()


def use_large_messages_profile(environ=None):
    """
    Set ``FASTRTPS_DEFAULT_PROFILES_FILE`` in ``environ`` (this process's) to the profile.

    Only where :func:`profile_for` gives one; before ``rclpy.init``, which reads it. Return
    the profile set, or None.
    """
    environ = os.environ if environ is None else environ
    profile = profile_for(environ)
    if profile is not None:
        environ["FASTRTPS_DEFAULT_PROFILES_FILE"] = profile
    return profile
