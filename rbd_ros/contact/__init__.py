"""
External wrenches: the measured ones as the dynamics fext, the contact observer and isolation.

``rbd_ros.contact`` gives the observer's public names, as the module of that name did before
the package (``from rbd_ros import contact; contact.MomentumObserver(...)``); the measured
wrenches are ``rbd_ros.contact.measured_wrenches``.
"""
from .detection import (CollisionState, MomentumObserver, contact_wrench, frame_problem,
                        isolate, link_jacobian_transpose, observe)

__all__ = ["CollisionState", "MomentumObserver", "contact_wrench", "frame_problem", "isolate",
           "link_jacobian_transpose", "observe"]
